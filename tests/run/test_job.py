"""A workflow job (oscbo.run.run_job) where the device policy places it."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pandas as pd
import torch

from oscbo import records
from oscbo.run import run_job
from oscbo.run.job import run_pack
from oscbo.settings import Settings
from oscbo.study.job import Job, JobMethod, JobTask
from oscbo.study.sources import finished

TIMING = ["fit_seconds", "acq_seconds", "oracle_seconds"]


def lunar_job() -> Job:
    return Job(
        experiment="main",
        task=JobTask("lunar12", options={"episodes": 2, "max_steps": 60}),
        method=JobMethod("gp-ucb-mll", "gp-ucb-mll"),
        seeds=(0, 1),
        budget=2,
        n_init=3,
    )


def test_a_lunar_job_on_two_cores_records_what_it_records_on_one(tmp_path: Path, processes) -> None:
    """Lunar Lander's cores run its simulator in processes; torch keeps one thread, so the records
    are those of the one-core job (timing aside), and the sidecar says how it ran."""
    tables = {}
    for threads in (1, 2):
        manifest = tmp_path / f"t{threads}" / "seeds0-1.json"
        manifest.parent.mkdir()
        paths = run_job(lunar_job(), manifest, device="cpu", threads=threads)
        assert json.loads(manifest.read_text())["threads"] == threads
        tables[threads] = [records.read_record(path) for path in paths]
        assert torch.get_num_threads() == 1
    for (one, _), (two, meta) in zip(tables[1], tables[2]):
        pd.testing.assert_frame_equal(
            one.drop(columns=TIMING, errors="ignore"), two.drop(columns=TIMING, errors="ignore")
        )
        assert meta["task_options"]["workers"] == 2
    assert len(tables[1]) == 2 and len(tables[1][0][0]) == 5


def pack(lambda0: float = 1.0) -> list[Job]:
    settings = {**Settings().to_dict(), "lambda0": lambda0}
    return [
        Job(
            experiment="quick",
            task=JobTask("hartmann3"),
            method=JobMethod(name, name, settings=settings),
            seeds=(0,),
            budget=2,
            n_init=4,
        )
        for name in ("gp-ucb-mll", "oscbo")
    ]


def test_a_pack_runs_its_jobs_as_they_run_alone_and_keeps_what_it_finished(tmp_path: Path) -> None:
    manifest = tmp_path / "hartmann3" / "pack-seeds0-0.json"
    manifest.parent.mkdir()
    run = partial(run_pack, devices_of=lambda job: "cpu")
    paths = run(pack(), manifest)
    assert [p.relative_to(manifest.parent).as_posix() for p in paths] == [
        "gp-ucb-mll/seeds0-0.json",
        "oscbo/seeds0-0.json",
    ]
    assert json.loads(manifest.read_text())["jobs"] == ["gp-ucb-mll/seeds0-0.json", "oscbo/seeds0-0.json"]
    alone = tmp_path / "alone" / "seeds0-0.json"
    alone.parent.mkdir()
    (record,) = run_job(pack()[1], alone, device="cpu")
    packed = records.read_record(manifest.parent / "oscbo" / "seed0.parquet")[0]
    pd.testing.assert_frame_equal(packed.drop(columns=TIMING), records.read_record(record)[0].drop(columns=TIMING))

    # resumed (the pack's manifest gone, as after a kill): both kept, nothing re-run
    written = {p: p.stat().st_mtime_ns for p in paths}
    manifest.unlink()
    run(pack(), manifest)
    assert {p: p.stat().st_mtime_ns for p in paths} == written and manifest.is_file()
    # one job changed (OSCBO's lambda_0; GP-UCB-MLL reads none of it, but its job's settings moved too),
    # one manifest damaged: both re-run
    (manifest.parent / "oscbo" / "seeds0-0.json").write_text("{not json")
    run(pack(lambda0=0.5), manifest)
    assert all(p.stat().st_mtime_ns != written[p] for p in paths)
    assert finished(pack(lambda0=0.5)[1], manifest.parent / "oscbo" / "seeds0-0.json")
    assert not finished(pack()[1], manifest.parent / "oscbo" / "seeds0-0.json")


def test_a_job_that_did_not_run_is_not_finished(tmp_path: Path) -> None:
    """TabICLv2 without its checkpoint writes a 'not run' manifest: a pack runs it again once the
    checkpoint is there (the workflow re-runs the pack when its input appears)."""
    job = Job(
        experiment="quick",
        task=JobTask("hartmann3"),
        method=JobMethod(
            "tabicl", "tabicl", settings={**Settings().to_dict(), "tabicl_checkpoint": str(tmp_path / "absent.ckpt")}
        ),
        seeds=(0,),
        budget=1,
        n_init=4,
    )
    manifest = tmp_path / "tabicl" / "seeds0-0.json"
    manifest.parent.mkdir()
    assert run_job(job, manifest, device="cpu") == []
    assert json.loads(manifest.read_text())["status"] == "not run"
    assert not finished(job, manifest)
