"""The projection priced from a study's own job times (``--job-times``): each job at the seconds its
manifest says, its core-seconds on the cores it ran on, and a job that has not run refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import benchmark_module

from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import COMPLETE, Manifest

job_times = benchmark_module("job_times")


def quick_jobs() -> dict:
    config = study_config.load("config/quick.yaml")
    config["experiments"] = {"main": config["experiments"]["main"]}
    return study_jobs.jobs(config, lambda task: None)


def test_a_job_is_priced_at_its_own_time_and_its_cores(job_times, tmp_path: Path) -> None:
    found = quick_jobs()
    for index, (key, job) in enumerate(found.items()):
        threads = 2 if job.task.name == "lunar12" else 1
        Manifest(job, COMPLETE, threads=threads, seconds=10.0 + index).write(
            tmp_path / "runs" / key[0] / key[1] / job.manifest_name
        )
    times = job_times.JobTimes.read(tmp_path, found, startup=3.0)
    for index, job in enumerate(found.values()):
        assert times.price(job, threads=8) == 10.0 + index
        assert times.core_seconds(job) == (10.0 + index) * (2 if job.task.name == "lunar12" else 1)


def test_a_job_without_a_manifest_is_refused_by_name(job_times, tmp_path: Path) -> None:
    found = quick_jobs()
    with pytest.raises(ValueError, match=f"{len(found)} jobs have no manifest under"):
        job_times.JobTimes.read(tmp_path, found, startup=3.0)


def test_a_part_is_priced_like_its_method_before_it_ran_and_measured_after(job_times, tmp_path: Path) -> None:
    """A part's jobs (not run when it started) are priced at the mean time of their method's jobs on
    their task that ran before it, whatever those took in the part; its wall is read from its own
    manifests: first start (less a process start-up) to last end."""
    config = study_config.load("config/quick.yaml")
    config["experiments"] = {"main": {**config["experiments"]["main"], "seeds_per_job": 1}}
    found = study_jobs.jobs(config, lambda task: None)  # a job per seed: each method twice on each task
    keys = list(found)
    first = {}
    for key in keys:
        first.setdefault(job_times.peer(found[key]), key)
    before = list(first.values())
    part = [key for key in keys if key not in before]
    assert len(part) >= len(before) > 0
    for key in before:
        Manifest(found[key], COMPLETE, threads=1, seconds=10.0, finished="2026-01-01T00:00:00+00:00").write(
            tmp_path / "runs" / key[0] / key[1] / found[key].manifest_name
        )
    for index, key in enumerate(part):
        end = f"2026-01-02T{index // 60:02d}:{index % 60:02d}:00+00:00"
        Manifest(found[key], COMPLETE, threads=1, seconds=30.0, finished=end).write(
            tmp_path / "runs" / key[0] / key[1] / found[key].manifest_name
        )
    since = "2026-01-01T12:00:00+00:00"
    times = job_times.JobTimes.read(tmp_path, found, startup=3.0, like=True, before=since)
    assert all(times.price(found[key], threads=1) == 10.0 for key in keys)  # as priced before the part ran
    wall = job_times.measured_wall(tmp_path, {key: found[key] for key in part}, since, startup=3.0)
    assert wall == 60.0 * (len(part) - 1) + 30.0 + 3.0
    with pytest.raises(ValueError, match="no finished job of their method"):
        job_times.JobTimes.read(tmp_path / "empty", found, startup=3.0, like=True)
