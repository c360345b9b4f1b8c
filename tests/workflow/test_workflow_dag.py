"""The workflow's DAG and configuration, each test on a copy of the repository of its own, without
the tiny study's run: a bad configuration, an oscbo from outside the checkout, lint, TabICLv2's CI
study and the full study's device policy. A module of its own so that a second test process can
take it beside test_workflow.py (pytest-xdist, ``--dist loadfile``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from snakemake_copy import NOTHING_TO_DO, declared_resources, listed_jobs, snakemake


def test_a_bad_config_stops_the_workflow_naming_the_key(workflow_copy: Path, tiny_config: dict[str, Any]) -> None:
    """A misspelt key: the Snakefile validates the config before it plans a job, and stops naming
    the key. Which bad values and keys the validation refuses, each by name, is
    tests/study/test_config.py's (test_bad_configs_raise_naming_the_key; a wrong type there too, in
    place of a second Snakemake process here)."""
    config = json.loads(json.dumps(tiny_config))
    experiment = config["experiments"]["main"]
    experiment["budgt"] = experiment.pop("budget")
    (workflow_copy / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workflow_copy, "-n", "--configfile", "bad.yaml")
    assert result.returncode != 0
    assert "ConfigError" in result.stdout
    assert "budgt" in result.stdout and "was unexpected" in result.stdout, result.stdout[-3000:]
    assert NOTHING_TO_DO not in result.stdout


def test_the_workflow_refuses_an_oscbo_from_outside_its_checkout(workflow_copy: Path) -> None:
    """Without the copy's src/ on PYTHONPATH, oscbo is the installed one: not the copy's."""
    result = snakemake(workflow_copy, "-n", "--configfile", "config/tiny.yaml", pythonpath=False)
    assert result.returncode != 0
    assert "not from this checkout's src/" in result.stdout, result.stdout[-3000:]


def test_snakemake_lint_is_clean(workflow_copy: Path) -> None:
    result = snakemake(workflow_copy, "--lint", "--configfile", "config/tiny.yaml")
    assert result.returncode == 0, result.stdout
    assert "Congratulations, your workflow is in a good condition!" in result.stdout


def test_tabicl_runs_in_the_ci_study_with_a_tiny_checkpoint(workflow_copy: Path) -> None:
    """.test/config.yaml: TabICLv2 on a tiny random checkpoint, through the real loading path."""
    from tabicl_checkpoint import write_tiny_checkpoint

    write_tiny_checkpoint(workflow_copy / ".test" / "tabicl-tiny.ckpt")
    result = snakemake(workflow_copy, "--cores", "2", "--configfile", ".test/config.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    folder = workflow_copy / ".test" / "results" / "runs" / "main" / "hartmann3" / "tabicl"
    manifest = json.loads((folder / "seeds0-1.json").read_text())
    assert manifest["status"] == "complete"
    table = pd.read_parquet(folder / "seed1.parquet")
    assert len(table) == 8 and table.loc[table.phase == "bo", ["mu", "sigma", "y"]].notna().all().all()
    html = (workflow_copy / ".test" / "report" / "index.html").read_text(encoding="utf-8")
    assert "tabicl" in html and "Not run" not in html


def test_only_the_gpu_method_declares_a_gpu_and_lunar_its_cores(workflow_copy: Path) -> None:
    """The device policy on the full study's real DAG: TabICLv2's jobs declare gpu=1 (so
    ``--resources gpu=4`` bounds them alone), every GP job runs on one CPU core, and Lunar
    Lander's jobs declare their simulator processes and no GPU; a config can move methods."""
    dry = snakemake(workflow_copy, "-n", "--cores", "32", "--resources", "gpu=4", "--configfile", "config/config.yaml")
    assert dry.returncode == 0, dry.stdout[-3000:]
    jobs = declared_resources(dry.stdout, "run_bo")
    assert len(jobs) > 500  # the whole study was listed
    for wildcards, threads, resources in jobs:
        tabicl = wildcards["method"] == "tabicl"
        assert resources["gpu"] == ("1" if tabicl else "0"), wildcards
        assert threads == (4 if wildcards["task"] == "lunar12" else 1), wildcards
    assert {w["task"] for w, _, r in jobs if r["gpu"] == "1"} >= {"lunar12", "levy5"}  # TabICLv2 everywhere
    # the costliest start first: each job's priority is its expected cost, Lunar Lander's above the rest
    priority = {
        (job["wildcards"]["experiment"], job["wildcards"]["task"], job["wildcards"]["method"]): job["priority"]
        for job in listed_jobs(dry.stdout)
        if job["rule"] == "run_bo"
    }
    lunar = [p for key, p in priority.items() if key[1] == "lunar12" and key[2] != "tabicl"]
    others = [p for key, p in priority.items() if key[1] != "lunar12" and key[0] != "known-truth"]
    assert min(lunar) == 100 and max(others) <= 20 and priority[("main", "hartmann3", "oscbo")] == 10
    # Each distinct run once: dual's arms that are main's runs (GP-UCB-MLL, and OSCBO and OSCBO-L1
    # at the default omega with lambda_0 = 1 and 0.433: 5 arms x 7 tasks x 20 seeds) are not listed.
    assert "700 of dual's are main's" in dry.stdout, dry.stdout[-3000:]
    dual = {w["method"] for w, _, _ in jobs if w["experiment"] == "dual"}
    assert "gp-ucb-mll" not in dual and "oscbo-lambda0=1-omega=0.001" not in dual
    assert "oscbo-lambda0=3.5-omega=0.001" in dual
    (workflow_copy / "config" / "gp-on-gpu.yaml").write_text("gpu_methods: [gp-ucb-mll]\n")
    moved = snakemake(  # main's part alone shows the method move, on a smaller DAG
        workflow_copy,
        "-n",
        "--cores",
        "32",
        "results/runs/main.json",
        "--configfile",
        "config/config.yaml",
        "config/gp-on-gpu.yaml",
    )
    assert moved.returncode == 0, moved.stdout[-3000:]
    on_gpu = {w["method"] for w, _, r in declared_resources(moved.stdout, "run_bo") if r["gpu"] == "1"}
    assert on_gpu == {"gp-ucb-mll"}
