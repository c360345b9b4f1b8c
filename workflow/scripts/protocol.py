"""Snakemake adapter: the study's protocol rows (computed from the config when the DAG is built) -> its table."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from oscbo.study.protocol import write_table  # noqa: E402

write_table(snakemake.params.rows, snakemake.output[0])  # noqa: F821
