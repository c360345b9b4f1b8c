"""Device claiming: real processes contend for N made-up device slots through real flocks.

The claiming logic takes its slots as a parameter, so these tests run on a CPU machine
without touching torch's CUDA state; the last tests check the CPU fallback (or, on a CUDA
machine, real claims) and what a workflow job records.
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from oscbo import records
from oscbo import run as engine
from oscbo.run import devices
from oscbo.settings import Settings
from oscbo.study.job import Job

#: One job: claims a slot, says which and when, holds it (``hold`` seconds, or until its stdin
#: closes when ``hold`` < 0), says when it lets go. It loads devices.py by itself (the module
#: imports only the standard library at the top): importing it as ``oscbo.run.devices`` runs the
#: package's ``__init__``, the whole engine with torch and BoTorch, 3 s a process.
HOLDER = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("devices", sys.argv[4])
devices = sys.modules["devices"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(devices)
hold_free_slot = devices.hold_free_slot
slots, lock_dir, hold = sys.argv[1].split(","), sys.argv[2], float(sys.argv[3])
with hold_free_slot(slots, lock_dir, poll_seconds=0.02) as index:
    print("claimed", index, time.monotonic(), flush=True)
    sys.stdin.read() if hold < 0 else time.sleep(hold)
    print("released", index, time.monotonic(), flush=True)
"""


def holder(slots: list[str], lock_dir: Path, hold: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, ",".join(slots), str(lock_dir), str(hold), devices.__file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_line(stream, timeout: float = 30.0) -> str:
    """The next line of a child's pipe; fails the test rather than hanging."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            pytest.fail(f"no line from the child within {timeout} s")
    return stream.readline()


def claimed_slot(process: subprocess.Popen) -> int:
    word, index, _ = read_line(process.stdout).split()
    assert word == "claimed"
    return int(index)


def test_n_jobs_on_n_devices_get_one_device_each(tmp_path: Path, processes) -> None:
    slots = ["GPU-a", "GPU-b", "GPU-c"]
    jobs = [holder(slots, tmp_path, hold=-1) for _ in slots]
    try:
        assert sorted(claimed_slot(job) for job in jobs) == [0, 1, 2]
    finally:
        for job in jobs:
            job.communicate(timeout=30)
    assert [job.returncode for job in jobs] == [0, 0, 0]


def test_a_killed_job_frees_its_device_for_a_waiting_one(tmp_path: Path, processes) -> None:
    slots = ["GPU-a", "GPU-b"]
    first, second = holder(slots, tmp_path, hold=-1), holder(slots, tmp_path, hold=-1)
    held = {claimed_slot(first): first, claimed_slot(second): second}
    assert sorted(held) == [0, 1]
    waiter = holder(slots, tmp_path, hold=-1)
    try:
        assert "all 2 CUDA devices are claimed" in read_line(waiter.stderr)  # it waits, it does not share
        victim = held[1]
        victim.send_signal(signal.SIGKILL)  # no cleanup code runs: the kernel drops the lock
        victim.wait(timeout=30)
        assert claimed_slot(waiter) == 1
    finally:
        for job in (first, second, waiter):
            if job.poll() is None:
                job.communicate(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    assert held[0].returncode == 0 and waiter.returncode == 0


def test_more_jobs_than_devices_never_share_one(tmp_path: Path, processes) -> None:
    """10 jobs on 4 slots: four hold theirs until told (all four held at once, however slowly
    the processes start), six more wait, then each holds a slot 0.3 s; per slot, the holding
    intervals never overlap."""
    slots = [f"GPU-{i}" for i in range(4)]
    first = [holder(slots, tmp_path, hold=-1) for _ in slots]
    try:
        claimed = [read_line(job.stdout).split() for job in first]
        assert sorted(int(index) for _, index, _ in claimed) == [0, 1, 2, 3]  # every slot, at once
        later = [holder(slots, tmp_path, hold=0.3) for _ in range(6)]
    finally:
        outputs = [job.communicate(timeout=120) for job in first]  # let go: the six take their turns
    events = []
    for (_, index, start), (out, err), job in zip(claimed, outputs, first):
        assert job.returncode == 0, err
        word, index_again, end = out.split()
        assert (word, index_again) == ("released", index)
        events.append((int(index), float(start), float(end)))
    for job in later:
        out, err = job.communicate(timeout=120)
        assert job.returncode == 0, err
        (_, index, start), (_, index_again, end) = (line.split() for line in out.splitlines())
        assert index == index_again
        events.append((int(index), float(start), float(end)))
    assert len(events) == 10
    for slot in range(4):
        spans = sorted((start, end) for index, start, end in events if index == slot)
        assert all(previous[1] <= start for previous, (start, _) in zip(spans, spans[1:])), spans


def test_no_slots_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no device slots"):
        with devices.hold_free_slot([], tmp_path):
            pass


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
def test_without_cuda_auto_runs_on_cpu_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # as SLURM sets it for a job given a GPU
    with devices.claim("auto", tmp_path) as claimed:
        assert claimed == devices.DeviceClaim("cpu", "cpu: torch sees no CUDA device (CUDA_VISIBLE_DEVICES=0)")
    with pytest.raises(RuntimeError, match="device 'cuda' is configured but torch sees no CUDA device"):
        with devices.claim("cuda", tmp_path):
            pass
    with devices.claim("cpu", tmp_path) as claimed:
        assert claimed.device == "cpu"
    assert list(tmp_path.iterdir()) == []  # nothing was locked


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_with_cuda_each_claim_holds_another_device(tmp_path: Path) -> None:
    """Locks are per open file, so nested claims in one process contend like separate jobs."""
    count = torch.cuda.device_count()
    with devices.claim("auto", tmp_path) as first:
        claims = [first]
        for _ in range(count - 1):
            claims.append(devices.claim("auto", tmp_path).__enter__())
        assert sorted(claimed.device for claimed in claims) == [f"cuda:{i}" for i in range(count)]
        assert torch.cuda.current_device() == int(claims[-1].device.split(":")[1])
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        devices.lock_path(tmp_path, uuid).name for uuid in devices.cuda_devices()
    )


def test_a_workflow_job_records_its_device_and_why(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    job = {
        "experiment": "exp",
        "task": "hartmann3",
        "method": "gp-ucb-mll",
        "method_name": "gp-ucb-mll",
        "seeds": [0, 1],
        "budget": 1,
        "n_init": 4,
        "noise_std": 0.0,
        "task_options": {},
        "settings": Settings().to_dict(),
    }
    manifest = tmp_path / "seeds0-1.json"
    paths = engine.run_job(Job.from_dict(job), manifest, device="auto", device_locks=tmp_path / "locks")
    expected = "cpu" if not torch.cuda.is_available() else "cuda:0"
    note = json.loads(manifest.read_text())["device_note"]
    assert json.loads(manifest.read_text())["device"] == expected
    assert f"device: {note}" in capsys.readouterr().err  # the job's log
    for path in paths:
        _, meta = records.read_record(path)
        assert (meta["device"], meta["device_note"]) == (expected, note)
    if not torch.cuda.is_available():
        assert note.startswith("cpu: torch sees no CUDA device")
