"""The projection priced from a study's own job times (``--job-times``): each job at the seconds its
manifest says, its core-seconds on the cores it ran on, and a job that has not run refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import benchmark_module

from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import COMPLETE, Manifest

project_full_study = benchmark_module("project_full_study")


def quick_jobs() -> dict:
    config = study_config.load("config/quick.yaml")
    config["experiments"] = {"main": config["experiments"]["main"]}
    return study_jobs.jobs(config, lambda task: None)


def test_a_job_is_priced_at_its_own_time_and_its_cores(project_full_study, tmp_path: Path) -> None:
    found = quick_jobs()
    for index, (key, job) in enumerate(found.items()):
        threads = 2 if job.task == "lunar12" else 1
        Manifest(job, COMPLETE, threads=threads, seconds=10.0 + index).write(
            tmp_path / "runs" / key[0] / key[1] / job.manifest_name
        )
    times = project_full_study.JobTimes.read(tmp_path, found, startup=3.0)
    for index, job in enumerate(found.values()):
        assert times.price(job, threads=8) == 10.0 + index
        assert times.core_seconds(job) == (10.0 + index) * (2 if job.task == "lunar12" else 1)


def test_a_job_without_a_manifest_is_refused_by_name(project_full_study, tmp_path: Path) -> None:
    found = quick_jobs()
    with pytest.raises(ValueError, match=f"{len(found)} jobs have no manifest under"):
        project_full_study.JobTimes.read(tmp_path, found, startup=3.0)
