"""Snakemake adapter: summary tables -> the claims' verdicts and the report's paragraphs."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo import findings  # noqa: E402

findings.write(Path(snakemake.output[0]).parent)  # noqa: F821
