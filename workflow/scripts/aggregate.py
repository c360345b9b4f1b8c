"""Snakemake adapter: job manifests -> tidy summary tables."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from pathlib import Path  # noqa: E402

from oscbo import analysis  # noqa: E402
from oscbo.analysis import readings  # noqa: E402
from oscbo.study.job import NOT_RUN, Manifest, job_manifests  # noqa: E402

paths = [path for output in snakemake.input.manifests for path in job_manifests(output)]  # noqa: F821
jobs = {path: Manifest.read(path) for path in paths}
records = [path.parent / name for path, done in jobs.items() for name in done.records]
# jobs that could not run here, then what the config leaves out of the paper's protocol
not_run = [done.to_dict() for done in jobs.values() if done.status == NOT_RUN] + snakemake.params.left_out  # noqa: F821
failed = [{**done.to_dict(), **fault} for done in jobs.values() for fault in done.failed]
analysis.aggregate(
    records,
    Path(snakemake.output[0]).parent,  # noqa: F821
    not_run,
    failed,
    readings.from_config({"readings": snakemake.params.readings}),  # noqa: F821
)
