"""Snakemake adapter: figures, summary tables, protocol and provenance -> report HTML."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from oscbo import protocol, provenance, report  # noqa: E402

config = snakemake.params.config  # noqa: F821
report.render_report(
    Path(snakemake.input.tables[0]).parent,  # noqa: F821
    json.loads(Path(snakemake.input.figures[0]).read_text())["figures"],  # noqa: F821
    config,
    provenance.collect(config),
    protocol.rows(config),
    Path(snakemake.output[0]),  # noqa: F821
)
