"""Snakemake adapter: summary tables -> the planned figures and their manifest."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo.figures.draw import draw  # noqa: E402

draw(
    snakemake.params.config,  # noqa: F821
    Path(snakemake.input.tables[0]).parent,  # noqa: F821
    Path(snakemake.output.manifest).parent,  # noqa: F821
    snakemake.params.config_hash,  # noqa: F821
    processes=snakemake.threads,  # noqa: F821
)
