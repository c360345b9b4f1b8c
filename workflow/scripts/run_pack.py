"""Snakemake adapter: the jobs of one pack (experiment, task, seed chunk) -> their records and manifests."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from oscbo.run.job import run_pack  # noqa: E402
from oscbo.study.job import Job  # noqa: E402
from oscbo.study.jobs import placement  # noqa: E402

run_pack(
    [Job.from_dict(job) for job in snakemake.params.jobs],  # noqa: F821
    snakemake.output[0],  # noqa: F821
    devices_of=lambda job: placement(job, snakemake.config).device,  # noqa: F821
    threads=snakemake.threads,  # noqa: F821
    device_locks=snakemake.config["device_locks"],  # noqa: F821
)
