"""Snakemake adapter: one BO job -> per-seed records + the job's manifest."""

import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake is injected)

from oscbo.run import run_job  # noqa: E402
from oscbo.study.job import Job  # noqa: E402
from oscbo.study.jobs import placement  # noqa: E402

job = Job.from_dict(snakemake.params.job)  # noqa: F821
run_job(
    job,
    snakemake.output[0],  # noqa: F821
    device=placement(job, snakemake.config).device,  # noqa: F821
    threads=snakemake.threads,  # noqa: F821
    device_locks=snakemake.config["device_locks"],  # noqa: F821
)
