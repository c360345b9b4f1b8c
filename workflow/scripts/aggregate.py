"""Snakemake adapter: job manifests -> tidy summary tables."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from oscbo import aggregate  # noqa: E402

records = [
    Path(manifest).parent / name
    for manifest in snakemake.input.manifests  # noqa: F821
    for name in json.loads(Path(manifest).read_text())["records"]
]
aggregate.aggregate(records, Path(snakemake.output[0]).parent)  # noqa: F821
