"""Kill, resume and crash: the real Snakemake workflow, interrupted on purpose.

A small study runs on a copy of the workflow (as in ``test_workflow``). First a BO job is
killed with SIGKILL at a random moment and the same command is run again; then Snakemake
itself is killed with SIGKILL at a random moment, and the same command is run again after
``snakemake --unlock`` (a SIGKILLed Snakemake cannot remove its lock; Snakemake says so and
names that command). The study must finish with:

* every job's manifest and every record complete, reading back with the full schema, and no
  temporary file left behind;
* the records of every job that Snakemake had reported finished before a kill untouched
  (same inode and modification time): no finished run is redone;
* records, summary tables and report sections (all but the figures and provenance, which
  carry wall-clock times and dates) equal to an uninterrupted run's.

The uninterrupted reference of the short test runs each job's manifest through
:func:`oscbo.run.run_job` in this process; the slow test (``pytest -m slow``) runs the quick
study twice with Snakemake, once with kills, and compares the two.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest
import yaml
from helpers import assert_same_tables, sections, untimed
from snakemake_copy import NOTHING_TO_DO, SNAKEMAKE, snakemake
from snakemake_copy import copy_workflow as copy_repository

from oscbo import analysis as aggregate
from oscbo import findings, records
from oscbo import run as engine
from oscbo.analysis import readings
from oscbo.report.render import render_report
from oscbo.study import config as study_config
from oscbo.study import protocol
from oscbo.study.job import Job

REPO = Path(__file__).resolve().parents[2]
TINY = {
    "results": "results",
    "report": "report/index.html",
    "device": "cpu",
    "experiments": {
        "main": {
            "tasks": ["hartmann3"],
            "methods": ["gp-ucb-mll", "oscbo"],
            "seeds": 2,
            "seeds_per_job": 1,
            "budget": 3,
            "n_init": 4,
        },
    },
}
#: The manifest keys that define a job (the rest is how and when it ran).
JOB_KEYS = [
    "experiment",
    "task",
    "method",
    "method_name",
    "seeds",
    "budget",
    "n_init",
    "noise_std",
    "task_options",
    "settings",
]
NO_FIGURES = {"figures": [], "sections": [], "omitted": []}
RUN_RULE = "run_bo"
#: The rules whose jobs run BO: one method's seed chunk, or (``pack_methods``) every method of a task's.
BO_RULES = (RUN_RULE, "run_pack")


def copy_workflow(root: Path, config: dict[str, Any]) -> Path:
    """A copy of the workflow and package with ``config`` as config/study.yaml."""
    copy_repository(root)
    (root / "config" / "study.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


class Study:
    """One workflow copy and the Snakemake processes started on it."""

    def __init__(self, root: Path, configfile: str = "config/study.yaml") -> None:
        self.root, self.configfile, self.runs = root, configfile, 0

    def start(self) -> tuple[subprocess.Popen, Path]:
        """``snakemake --cores 2 --configfile ...`` in its own process group; its log file."""
        self.runs += 1
        log = self.root / f"snakemake-{self.runs}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEMAKE_")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.root / "src"), os.environ.get("PYTHONPATH")) if p)
        env["OSCBO_JOB_BLOCKS"] = "1"  # each job's block of outputs and jobid, which finished_jobs reads
        process = subprocess.Popen(
            [str(SNAKEMAKE), "--cores", "2", "--configfile", self.configfile],
            cwd=self.root,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return process, log

    def record_files(self, manifest: str | Path) -> dict[Path, tuple[int, int]]:
        """(inode, mtime in ns) of each record file (and sidecar) a finished job wrote; a pack's
        are its methods' jobs' (its manifest lists their manifests)."""
        path = self.root / manifest
        job = json.loads(path.read_text())
        if "jobs" in job:
            return {
                file: stamp for name in job["jobs"] for file, stamp in self.record_files(path.parent / name).items()
            }
        names = job["records"]
        files = [path.parent / name for name in names] + [records.sidecar_path(path.parent / n) for n in names]
        return {file: (file.stat().st_ino, file.stat().st_mtime_ns) for file in files}

    def unlock(self) -> None:
        result = snakemake(self.root, "--unlock", "--configfile", self.configfile)
        assert result.returncode == 0, result.stdout[-3000:]


def finished_jobs(log: Path) -> set[str]:
    """The outputs of the BO jobs (:data:`BO_RULES`) that a Snakemake log reports finished.

    Snakemake writes "Finished jobid" after it recorded the job's outputs as complete, so
    these are the jobs that a rerun must not redo.
    """
    text = log.read_text()
    rules = "|".join(BO_RULES)
    block = rf"localrule (?:{rules}):\n(?:    .*\n)*?    output: (\S+)\n(?:    .*\n)*?    jobid: (\d+)"
    blocks = re.findall(block, text)
    outputs = {jobid: output for output, jobid in blocks}
    done = re.findall(rf"Finished jobid: (\d+) \(Rule: (?:{rules})\)", text)
    return {outputs[jobid] for jobid in done if jobid in outputs}


def bo_jobs(process: subprocess.Popen) -> list[psutil.Process]:
    """The running BO job processes that this Snakemake started."""
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        try:
            if any(rule in part for part in child.cmdline() for rule in BO_RULES):
                found.append(child)
        except psutil.Error:
            continue
    return found


def kill_a_bo_job(process: subprocess.Popen, rng: random.Random) -> bool:
    """SIGKILL one running BO job at a random moment of its life; False if none was left."""
    while process.poll() is None:
        jobs = bo_jobs(process)
        if jobs:
            time.sleep(rng.uniform(0.2, 3.0))
            victim = rng.choice(jobs)
            try:
                victim.send_signal(signal.SIGKILL)
                return True
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.05)
    return False


def wait_for_group(pgid: int, timeout: float = 120) -> None:
    """Wait until every process of a process group has exited (orphaned jobs finish on their own)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not [p for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == pgid]:
            return
        time.sleep(0.1)
    os.killpg(pgid, signal.SIGKILL)  # they are this test's own processes
    pytest.fail(f"processes of group {pgid} still ran {timeout} s after Snakemake was killed")


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def kill_snakemake(
    process: subprocess.Popen, log: Path, rng: random.Random, after_finished: int, delay: tuple[float, float]
) -> None:
    """SIGKILL the Snakemake process a random time after its log reports ``after_finished`` BO
    jobs finished; wait for its orphaned jobs to end."""
    while process.poll() is None and len(finished_jobs(log)) < after_finished:
        time.sleep(0.05)
    time.sleep(rng.uniform(*delay))
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait()
    wait_for_group(process.pid)


def check_complete(root: Path, config: dict[str, Any]) -> list[Path]:
    """Every manifest complete, every record reading back with the full schema; the records."""
    paths = []
    for manifest in sorted((root / config["results"] / "runs").rglob("seeds*.json")):
        job = json.loads(manifest.read_text())
        assert job["status"] in ("complete", "not run"), manifest
        for name in job["records"]:
            table, meta = records.read_record(manifest.parent / name)
            assert meta["status"] == "complete"
            dim = meta["task"]["dim"]
            count = len([c for c in table.columns if c.startswith("lengthscale_")])
            assert list(table.columns[: len(records.record_columns(dim, count))]) == records.record_columns(dim, count)
            assert len(table) == job["budget"] + job["n_init"] and table["step"].tolist() == list(range(len(table)))
            paths.append(manifest.parent / name)
    assert not list((root / config["results"]).rglob("*.tmp")), "temporary files left behind"
    return paths


def resumed_study(
    root: Path, config: dict[str, Any], rng: random.Random, snakemake_kills: int, job_kills: int
) -> dict[Path, tuple[int, int]]:
    """Run the study with kills, then to the end; the record files of jobs finished before a kill."""
    study = Study(root)
    finished: set[str] = set()
    for kill in ["job"] * job_kills + ["snakemake"] * snakemake_kills:
        process, log = study.start()
        if kill == "job":
            assert kill_a_bo_job(process, rng), "no BO job was left to kill"
            assert process.wait() != 0  # Snakemake reports the killed job and stops
            text = log.read_text()
            assert f"Error in rule {RUN_RULE}" in text, text[-3000:]
        else:
            kill_snakemake(process, log, rng, after_finished=1, delay=(0.0, 2.0))
        finished |= finished_jobs(log)
        if kill == "snakemake":
            study.unlock()
    kept = {file: stamp for manifest in finished for file, stamp in study.record_files(manifest).items()}
    process, log = study.start()
    assert process.wait() == 0, log.read_text()[-5000:]
    return kept


def test_kill_9_of_a_job_and_of_snakemake_then_the_same_command_finishes_the_study(tmp_path: Path) -> None:
    seed = int(os.environ.get("OSCBO_KILL_SEED", random.randrange(10**6)))
    rng = random.Random(seed)
    config = study_config.validate(json.loads(json.dumps(TINY)))
    root = copy_workflow(tmp_path / "study", config)
    kept = resumed_study(root, config, rng, snakemake_kills=1, job_kills=1)

    paths = check_complete(root, config)
    assert len(paths) == 4, f"kill seed {seed}"
    assert kept, f"no job had finished before a kill (kill seed {seed})"
    for file, stamp in kept.items():
        assert (file.stat().st_ino, file.stat().st_mtime_ns) == stamp, f"{file} was rewritten (kill seed {seed})"

    # The uninterrupted reference: each job as the workflow defined it, run here in one go.
    reference = tmp_path / "reference"
    reference_paths = []
    for manifest in sorted((root / "results" / "runs").rglob("seeds*.json")):
        job = {key: value for key, value in json.loads(manifest.read_text()).items() if key in JOB_KEYS}
        target = reference / manifest.relative_to(root / "results" / "runs")
        reference_paths += engine.run_job(Job.from_dict(job), target)
    for path, again in zip(sorted(paths), sorted(reference_paths)):
        pd.testing.assert_frame_equal(
            untimed(pd.read_parquet(path)), untimed(pd.read_parquet(again)), check_exact=True, obj=str(path)
        )
    aggregate.aggregate(reference_paths, reference / "summary", readings=readings.from_config(config))
    findings.write(reference / "summary")
    assert_same_tables(root / "results" / "summary", reference / "summary")

    protocol.write_table(protocol.rows(config), aggregate.table_path(reference / "summary", "protocol"))
    html = render_report(reference / "summary", NO_FIGURES, config, reference / "r.html")
    expected = sections(html.read_text(encoding="utf-8"))
    found = sections((root / "report" / "index.html").read_text(encoding="utf-8"))
    assert found == expected, f"kill seed {seed}"


def test_a_crashing_job_leaves_no_finished_output_and_its_log_says_why(tmp_path: Path) -> None:
    """TabICLv2 with a truncated checkpoint dies in its first BO round (after the initial design)."""
    from tabicl_checkpoint import write_tiny_checkpoint

    config = json.loads(json.dumps(TINY))
    config["experiments"]["main"].update(
        methods=["tabicl"], seeds=1, settings={"tabicl_checkpoint": "data/checkpoints/broken.ckpt"}
    )
    root = copy_workflow(tmp_path / "study", config)
    checkpoint = write_tiny_checkpoint(root / "data" / "checkpoints" / "broken.ckpt")
    checkpoint.write_bytes(checkpoint.read_bytes()[:2000])
    process, log = Study(root).start()
    assert process.wait() != 0
    folder = root / "results" / "runs" / "main" / "hartmann3" / "tabicl"
    assert not folder.exists() or not any(folder.iterdir())  # no manifest, no record
    job_log = (root / "results" / "logs" / "runs" / "main" / "hartmann3" / "tabicl" / "seeds0-0.log").read_text()
    assert "CheckpointError" in job_log and str(checkpoint) in job_log
    text = log.read_text()
    assert f"Error in rule {RUN_RULE}" in text and "seeds0-0.log" in text

    # YAML in a config file is never code: Snakemake's loader refuses the tag, nothing runs.
    marker = root / "code-ran"
    (root / "evil.yaml").write_text(f"results: !!python/object/apply:pathlib.Path.touch [{str(marker)!r}]\n")
    result = snakemake(root, "-n", "--configfile", "evil.yaml")
    assert result.returncode != 0 and not marker.exists()


@pytest.mark.slow
def test_the_quick_study_survives_kills_at_random_moments(tmp_path: Path) -> None:
    """config/quick.yaml: an uninterrupted run, and one with two job kills (a pack or a method's
    job) and two Snakemake kills at random moments, the first Snakemake kill after a BO job
    finished if none had; same records, summaries and report sections (about 13 minutes)."""
    seed = int(os.environ.get("OSCBO_KILL_SEED", random.randrange(10**6)))
    rng = random.Random(seed)
    config = study_config.load(REPO / "config" / "quick.yaml")
    plain = copy_workflow(tmp_path / "plain", config)
    process, log = Study(plain).start()
    assert process.wait() == 0, log.read_text()[-5000:]

    root = copy_workflow(tmp_path / "killed", config)
    study = Study(root)
    finished: set[str] = set()
    for kill in rng.sample(["job", "job", "snakemake", "snakemake"], 4):
        process, log = study.start()
        if kill == "job":
            if kill_a_bo_job(process, rng):
                assert process.wait() != 0
        else:
            kill_snakemake(process, log, rng, after_finished=0 if finished else 1, delay=(2.0, 30.0))
            study.unlock()
        finished |= finished_jobs(log)
    kept = {file: stamp for manifest in finished for file, stamp in study.record_files(manifest).items()}
    process, log = study.start()
    assert process.wait() == 0, log.read_text()[-5000:]

    paths = check_complete(root, config)
    assert len(paths) == len(check_complete(plain, config)) > 50
    assert kept, f"no job had finished before a kill (kill seed {seed})"
    for file, stamp in kept.items():
        assert (file.stat().st_ino, file.stat().st_mtime_ns) == stamp, f"{file} was rewritten (kill seed {seed})"
    for path in paths:
        twin = plain / path.relative_to(root)
        pd.testing.assert_frame_equal(
            untimed(pd.read_parquet(path)), untimed(pd.read_parquet(twin)), check_exact=True, obj=str(path)
        )
    assert_same_tables(root / "results" / "summary", plain / "results" / "summary", (root, plain))
    html = [sections((f / "report" / "index.html").read_text(encoding="utf-8"), f) for f in (root, plain)]
    assert html[0] == html[1], f"kill seed {seed}"
    dry = snakemake(root, "-n", "--configfile", "config/study.yaml")
    assert NOTHING_TO_DO in dry.stdout, dry.stdout[-3000:]
