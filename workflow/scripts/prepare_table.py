"""Snakemake adapter: a raw table -> its oracle table (+ JSON summary)."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo.tasks import tabular  # noqa: E402

tabular.write_prepared(
    snakemake.wildcards.task,  # noqa: F821
    Path(snakemake.input.checksums).parent,  # noqa: F821
    snakemake.output[0],  # noqa: F821
    sign=snakemake.params.sign,  # noqa: F821
)
