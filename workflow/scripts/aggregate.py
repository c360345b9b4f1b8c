"""Snakemake adapter: job manifests -> tidy summary tables."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo import analysis  # noqa: E402
from oscbo.analysis import readings  # noqa: E402
from oscbo.study.job import NOT_RUN, Manifest  # noqa: E402

# each run's manifest -> the (experiment, label) pairs that ask for it (a shared run: several)
asked = {Path(path): [tuple(pair) for pair in pairs] for path, pairs in snakemake.params.asked.items()}  # noqa: F821
jobs = {path: Manifest.read(path) for path in asked}
records = {path.parent / name: asked[path] for path, done in jobs.items() for name in done.records}


def as_asked(path, fields):
    """A manifest's fields (and a fault's) once for each experiment and label asking for its run."""
    return [{**fields, "experiment": experiment, "method": label} for experiment, label in asked[path]]


# jobs that could not run here, then what the config leaves out of the paper's protocol
not_run = [
    row for path, done in jobs.items() if done.status == NOT_RUN for row in as_asked(path, done.to_dict())
] + snakemake.params.left_out  # noqa: F821
failed = [
    row for path, done in jobs.items() for fault in done.failed for row in as_asked(path, {**done.to_dict(), **fault})
]
analysis.aggregate(
    list(records),
    Path(snakemake.output[0]).parent,  # noqa: F821
    not_run,
    failed,
    readings.from_config({"readings": snakemake.params.readings}),  # noqa: F821
    asked=records,
)
