"""Snakemake adapter: summary tables -> figures and their manifest."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo import figures, provenance, records  # noqa: E402

manifest = Path(snakemake.output[0])  # noqa: F821
specs = figures.make_figures(
    Path(snakemake.input.tables[0]).parent,  # noqa: F821
    manifest.parent,
    provenance.collect(snakemake.params.config),  # noqa: F821
)
records.write_json(manifest, {"figures": specs})
