"""The command line: ``oscbo list``, ``oscbo run`` with a tiny budget, and its error exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from oscbo import cli, records

REPO = Path(__file__).resolve().parents[1]
TASKS = ["levy5", "hartmann3", "hartmann6"]
METHODS = ["oscbo", "oscbo-l1", "gp-ucb-mll"]


def listed(output: str, heading: str) -> list[str]:
    """The comma-separated names after ``heading:`` in ``oscbo list`` output."""
    line = next(line for line in output.splitlines() if line.startswith(f"{heading}:"))
    return [name.strip() for name in line.split(":", 1)[1].split(",")]


def test_list_names_every_task_method_and_experiment(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert set(TASKS) <= set(listed(out, "tasks"))
    assert set(METHODS) <= set(listed(out, "methods"))
    assert "main" in listed(out, "experiments")


def test_list_outside_a_checkout_says_there_are_no_experiments(
    capsys: pytest.CaptureFixture[str], monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list"]) == 0
    assert "(no config/config.yaml here)" in capsys.readouterr().out


def test_run_writes_a_record_and_sidecar_per_seed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "runs"
    argv = ["run", "hartmann3", "gp-ucb-mll", "--seed", "0", "--seed", "1", "--budget", "3", "--out", str(out_dir)]
    assert cli.main(argv) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["seed0.json", "seed0.parquet", "seed1.json", "seed1.parquet"]
    for seed in (0, 1):
        table = pd.read_parquet(out_dir / f"seed{seed}.parquet")
        assert len(table) == 3 + 10  # budget + default n_init
        assert list(table.columns) == records.record_columns(3, 1)
        assert set(table["seed"]) == {seed} and set(table["method"]) == {"gp-ucb-mll"}
        assert (table["phase"] == "bo").sum() == 3
        sidecar = json.loads((out_dir / f"seed{seed}.json").read_text())
        assert sidecar["status"] == "complete"
        assert sidecar["seed"] == seed
        assert sidecar["budget"] == 3 and sidecar["n_init"] == 10
    out = capsys.readouterr().out
    assert "2 seed(s)" in out
    assert str(out_dir / "seed0.parquet") in out and str(out_dir / "seed1.parquet") in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "hartmann4", "oscbo"], ["hartmann4", *TASKS]),
        (["run", "hartmann3", "oscbo-l3"], ["oscbo-l3", *METHODS]),
        (["run", "hartmann3", "oscbo", "--set", "nu=0.7"], ["nu", "0.7"]),
        (["run", "hartmann3", "oscbo", "--set", "foo=1"], ["foo"]),
    ],
    ids=["unknown-task", "unknown-method", "bad-setting-value", "unknown-setting"],
)
def test_run_rejects_bad_arguments_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], expected: list[str]
) -> None:
    out_dir = tmp_path / "runs"
    assert cli.main([*argv, "--seed", "0", "--budget", "1", "--out", str(out_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oscbo: error:")
    for word in expected:
        assert word in err
    assert not out_dir.exists()


def test_check_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["check-config", str(REPO / "config" / "quick.yaml")]) == 0
    assert "valid" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiments:\n  main:\n    tasks: [levy5]\n    methods: [oscbo]\n    budgt: 3\n")
    assert cli.main(["check-config", str(bad)]) == 2
    assert "budgt" in capsys.readouterr().err


def test_the_console_script_runs() -> None:
    script = Path(sys.executable).parent / "oscbo"
    result = subprocess.run([str(script), "list"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert set(TASKS) <= set(listed(result.stdout, "tasks"))
    assert set(METHODS) <= set(listed(result.stdout, "methods"))
