"""Snakemake adapter: summary tables, protocol, findings and figures -> report HTML and the figures' numbers."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from oscbo.report.render import render_report  # noqa: E402

render_report(
    Path(snakemake.input.tables[0]).parent,  # noqa: F821
    json.loads(Path(snakemake.input.figures).read_text()),  # noqa: F821
    snakemake.params.config,  # noqa: F821
    Path(snakemake.output.html),  # noqa: F821
    snakemake.params.config_hash,  # noqa: F821
)
