"""profiles/slurm on a real SLURM: a one-node cluster on this machine runs a tiny study.

``tests/workflow/slurm/local_slurm.sh`` installs Debian's slurm-wlm and munge if they are missing,
writes a one-node config (two GPUs backed by null devices) and starts munged, slurmctld and
slurmd. The study of ``tests/workflow/slurm/study.yaml`` (4 BO jobs) then goes through
``snakemake --profile profiles/slurm`` to a finished report, and again through a local
``snakemake --cores 2``: the records must hold the same numbers.

Needs root, Debian and the ``slurm`` extra; it starts daemons and writes /etc/slurm, so it only
runs when asked for (about 3 minutes):

    pip install -c envs/constraints.txt -e ".[test,slurm]" && pytest -m slurm
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import util
from pathlib import Path

import pandas as pd
import pytest
from snakemake_copy import REPO, copy_workflow, snakemake

from oscbo import records

pytestmark = pytest.mark.slurm

SCRIPT = REPO / "tests" / "workflow" / "slurm" / "local_slurm.sh"
STUDY = REPO / "tests" / "workflow" / "slurm" / "study.yaml"
#: Site settings a real cluster takes from the profile or the command line; this one has no
#: accounting database (so no account, and squeue instead of sacct) and needs no 40 s grace.
LOCAL_CLUSTER = [
    "--slurm-no-account",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--slurm-keep-successful-logs",
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    if util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.fail('the SLURM executor plugin is not installed: pip install -c envs/constraints.txt -e ".[slurm]"')
    state = tmp_path_factory.mktemp("slurm-state")
    started = subprocess.run([str(SCRIPT), "start", str(state)], capture_output=True, text=True, timeout=600)
    assert started.returncode == 0, started.stdout + started.stderr
    yield state
    subprocess.run([str(SCRIPT), "stop", str(state)], check=True, timeout=60)


@pytest.fixture(scope="module")
def runs(cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The study through the SLURM profile, then locally, in one copy of the workflow."""
    root = copy_workflow(tmp_path_factory.mktemp("workflow"))
    (root / "config" / "slurm-test.yaml").write_text(STUDY.read_text())
    study = ["--configfile", "config/slurm-test.yaml", "--config"]
    on_slurm = snakemake(
        root,
        "--profile",
        "profiles/slurm",
        *LOCAL_CLUSTER,
        *study,
        "results=out/slurm",
        "report=out/slurm/report.html",
        timeout=1200,
    )
    local = snakemake(root, "--cores", "2", *study, "results=out/local", "report=out/local/report.html")
    return {"root": root, "slurm": on_slurm, "local": local}


def test_the_slurm_profile_runs_the_study_to_a_report(runs: dict) -> None:
    root, result = runs["root"], runs["slurm"]
    assert result.returncode == 0, result.stdout[-5000:]
    assert '<section id="provenance">' in (root / "out" / "slurm" / "report.html").read_text(encoding="utf-8")
    manifests = sorted((root / "out" / "slurm" / "runs").glob("*/*/*/seeds*.json"))
    assert len(manifests) == 4
    # every BO job went through sbatch, with the profile's GPU request ...
    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+)", result.stdout)
    assert len(submitted) == 4
    slurm_logs = sorted((root / ".snakemake" / "slurm_logs" / "rule_run_bo").glob("*/*.log"))
    assert sorted(log.stem for log in slurm_logs) == sorted(submitted)
    assert all("gpu=1" in log.read_text() for log in slurm_logs)
    # ... and SLURM gave each one of the node's two GPUs, which the job saw and, finding no
    # CUDA in torch, recorded before running on the CPU
    for manifest in manifests:
        note = json.loads(manifest.read_text())["device_note"]
        assert re.fullmatch(r"cpu: torch sees no CUDA device \(CUDA_VISIBLE_DEVICES=[01]\)", note), note
    # the summaries, figures and report ran here, not as SLURM jobs
    for rule in ("aggregate", "figures", "report"):
        assert f"localrule {rule}:" in result.stdout
    assert sorted(path.name for path in (root / ".snakemake" / "slurm_logs").iterdir()) == ["rule_run_bo"]


def test_slurm_and_local_runs_record_the_same_numbers(runs: dict) -> None:
    root = runs["root"]
    assert runs["slurm"].returncode == 0 and runs["local"].returncode == 0, runs["local"].stdout[-5000:]
    local_records = sorted((root / "out" / "local" / "runs").rglob("seed*.parquet"))
    assert len(local_records) == 4  # 2 methods x 2 seeds
    for local in local_records:
        on_slurm = root / "out" / "slurm" / local.relative_to(root / "out" / "local")
        (slurm_table, slurm_meta), (local_table, local_meta) = records.read_record(on_slurm), records.read_record(local)
        pd.testing.assert_frame_equal(
            slurm_table.drop(columns=records.SECONDS_COLUMNS),
            local_table.drop(columns=records.SECONDS_COLUMNS),
            check_exact=True,
        )
        assert slurm_meta["settings"] == local_meta["settings"] and slurm_meta["device"] == local_meta["device"]
