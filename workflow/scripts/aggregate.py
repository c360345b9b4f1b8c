"""Snakemake adapter: job manifests -> tidy summary tables."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from oscbo import analysis  # noqa: E402
from oscbo.analysis import readings  # noqa: E402

manifests = []
for manifest in map(Path, snakemake.input.manifests):  # noqa: F821
    written = json.loads(manifest.read_text())  # a pack's lists its jobs' manifests
    manifests += [manifest.parent / name for name in written["jobs"]] if "jobs" in written else [manifest]
jobs = {manifest: json.loads(manifest.read_text()) for manifest in manifests}
records = [manifest.parent / name for manifest, job in jobs.items() for name in job["records"]]
# jobs that could not run here, then what the config leaves out of the paper's protocol
not_run = [job for job in jobs.values() if job.get("status") == "not run"] + snakemake.params.left_out  # noqa: F821
failed = [{**job, **run} for job in jobs.values() for run in job.get("failed", [])]
analysis.aggregate(
    records,
    Path(snakemake.output[0]).parent,  # noqa: F821
    not_run,
    failed,
    readings.from_config({"readings": snakemake.params.readings}),  # noqa: F821
)
