"""The command line: ``oscbo list``, ``oscbo run`` with a tiny budget, and its error exits."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oscbo import records
from oscbo.api import cli

REPO = Path(__file__).resolve().parents[2]
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


def test_run_keeps_an_earlier_run_unless_told_to_overwrite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["run", "hartmann3", "a-gp-ucb", "--seed", "0", "--budget", "1", "--n-init", "3", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    first = (tmp_path / "seed0.parquet").stat().st_mtime_ns
    assert cli.main([*argv, "--set", "beta=4"]) == 2
    assert (
        "holds an earlier run's seed0.parquet, seed0.json; give another --out, or --overwrite"
        in capsys.readouterr().err
    )
    assert (tmp_path / "seed0.parquet").stat().st_mtime_ns == first
    assert cli.main([*argv, "--set", "beta=4", "--overwrite"]) == 0
    assert json.loads((tmp_path / "seed0.json").read_text())["settings"]["beta"] == 4


def test_budget_means_bo_rounds_in_every_help_text() -> None:
    for command in ("run", "optimize"):
        usage = cli.build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert "BO rounds T after the initial design" in " ".join(usage.split())


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


def test_the_console_script_runs(processes) -> None:
    script = Path(sys.executable).parent / "oscbo"
    result = subprocess.run([str(script), "list"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert set(TASKS) <= set(listed(result.stdout, "tasks"))
    assert set(METHODS) <= set(listed(result.stdout, "methods"))


OBJECTIVES = """
import math
import os
import signal
import time


def bowl(x):
    return -float(((x - 0.3) ** 2).sum())


def text(x):
    return "high"


def pair(x):
    return [1.0, 2.0]


def undefined(x):
    return math.nan


CALLS = []


def breaks_at_seven(x):
    CALLS.append(x)
    if len(CALLS) == 7:
        raise OSError("the simulator crashed")
    return float(x[0])


def ctrl_c_at_seven(x):
    CALLS.append(x)
    if len(CALLS) == 7:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, a real signal: Python raises KeyboardInterrupt
        time.sleep(5)  # the interrupt lands here, in the evaluation
    return float(x[0])
"""


@pytest.fixture
def objectives(tmp_path: Path, monkeypatch) -> Path:
    """A module of objectives in the current folder, importable as ``cli_objectives``."""
    (tmp_path / "cli_objectives.py").write_text(OBJECTIVES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # optimize puts the current folder on the path
    monkeypatch.delitem(sys.modules, "cli_objectives", raising=False)
    return tmp_path


def test_optimize_writes_a_record_per_seed(capsys: pytest.CaptureFixture[str], objectives: Path) -> None:
    argv = [
        "optimize",
        "cli_objectives:bowl",
        "--bounds",
        "[[0, 1], [-1, 1]]",
        "--budget",
        "3",
        "--n-init",
        "5",
        "--seed",
        "0",
        "--seed",
        "3",
        "--optimal-value",
        "0",
        "--set",
        "lambda0=0.433",
        "--no-progress",
    ]
    assert cli.main(argv) == 0
    for seed in (0, 3):
        table, meta = records.read_record(objectives / "runs" / "bowl" / f"seed{seed}.parquet")
        assert list(table.columns) == [*records.record_columns(2, 1), "origin"]  # the API adds origin, last
        assert len(table) == 8 and (table["phase"] == "bo").sum() == 3
        assert set(table["task"]) == {"bowl"} and set(table["method"]) == {"oscbo"} and set(table["seed"]) == {seed}
        assert np.allclose(table["simple_regret"], -table["best_f"])  # f* = 0
        assert meta["settings"]["lambda0"] == 0.433 and meta["evaluations"] == 8 and meta["budget"] == 3
    out = capsys.readouterr()
    assert "seed0.parquet  best y" in out.out and "seed3.parquet  best y" in out.out
    assert out.err == ""  # --no-progress


def test_optimize_takes_a_file_path_and_minimizes(capsys: pytest.CaptureFixture[str], objectives: Path) -> None:
    (objectives / "sub").mkdir()
    (objectives / "cli_objectives.py").rename(objectives / "sub" / "objs.py")
    argv = [
        "optimize",
        "sub/objs.py:bowl",
        "--bounds",
        "[[0, 1]]",
        "--budget",
        "1",
        "--n-init",
        "3",
        "--method",
        "gp-ucb-mll",
        "--minimize",
        "--out",
        "here",
    ]
    assert cli.main(argv) == 0
    table, meta = records.read_record(objectives / "here" / "seed0.parquet")
    assert meta["task"]["minimize"] and set(table["method"]) == {"gp-ucb-mll"}
    assert table["best_f"].tolist() == list(np.minimum.accumulate(table["y"]))
    assert "4/4" in capsys.readouterr().err  # the progress bar


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["cli_objectives:bowl", "--bounds", "[[1, 0]]"], "dimension 0: (1, 0)"),
        (["cli_objectives:bowl", "--bounds", "[[0, 1]]", "--budget", "0"], "must be at least 1, got 0"),
        (["nowhere:bowl"], "cannot import module 'nowhere'"),
        (["cli_objectives:missing"], "has no function 'missing'"),
        (["bowl"], "expected MODULE:FUNCTION"),
        (["cli_objectives:text"], "returned 'high' (str)"),
        (["cli_objectives:pair"], "returned 2 values"),
        (["cli_objectives:undefined"], "cli_objectives:undefined: the objective returned nan"),
        (["cli_objectives:bowl", "--set", "lamda0=1"], "lamda0"),
        (["cli_objectives:bowl", "--bounds", "[[-5, 0], [10, 15]]"], "a box either way"),  # as Python refuses it
    ],
    ids=["bounds", "budget", "module", "function", "spec", "non-number", "shape", "nan", "setting", "ambiguous"],
)
def test_optimize_rejects_bad_input_with_exit_2(
    capsys: pytest.CaptureFixture[str], objectives: Path, argv: list[str], expected: str
) -> None:
    defaults = {"--bounds": "[[0, 1]]", "--budget": "12"}
    for flag, value in defaults.items():
        if flag not in argv:
            argv = [*argv, flag, value]
    assert cli.main(["optimize", *argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oscbo: error:") and expected in err
    assert not (objectives / "runs").exists()


def test_optimize_bounds_must_be_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["optimize", "m:f", "--bounds", "0,1", "--budget", "12"])
    assert "--bounds expects a list of [lower, upper] pairs" in capsys.readouterr().err


def test_a_fault_keeps_the_evaluations_before_it_and_exits_1(capsys: pytest.CaptureFixture[str], objectives: Path):
    """An objective that raises on its 7th evaluation: the record holds the 6 before it, its sidecar
    says failed, why and where; the exit status is 1 and stderr names the failure and the record."""
    argv = ["optimize", "cli_objectives:breaks_at_seven", "--bounds", "[[0, 1]]", "--budget", "5", "--no-progress"]
    assert cli.main([*argv, "--out", "kept"]) == 1
    err = capsys.readouterr().err
    assert "evaluation 6 failed: the objective raised OSError: the simulator crashed" in err and "status: failed" in err
    table = pd.read_parquet(objectives / "kept" / "seed0.parquet")
    meta = records.read_sidecar(objectives / "kept" / "seed0.parquet")
    assert len(table) == 6 and table["step"].tolist() == list(range(6))
    assert meta["status"] == "failed" and meta["failed_step"] == 6 and "simulator crashed" in meta["reason"]
    # --on-fault continue: the 7th is told at the worst value so far and the run completes (10 + 5)
    sys.modules["cli_objectives"].CALLS.clear()
    with pytest.warns(RuntimeWarning, match="evaluation 6 failed"):
        assert cli.main([*argv, "--out", "went-on", "--on-fault", "continue"]) == 0
    table = pd.read_parquet(objectives / "went-on" / "seed0.parquet")
    meta = records.read_sidecar(objectives / "went-on" / "seed0.parquet")
    assert len(table) == 15 and meta["status"] == "complete"
    assert [f["step"] for f in meta["failed_evaluations"]] == [6]


def test_a_file_objective_that_registers_its_own_method_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``path/to/objectives.py:bowl`` whose file registers a method of ``my_method.py`` beside it (as
    docs/api.md's "Adding a method" does), run from another folder: the method imports and runs (it
    raised ModuleNotFoundError: only ``module:function`` put a folder on the path)."""
    from oscbo import methods

    folder = tmp_path / "work"
    folder.mkdir()
    api = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    method = re.findall(r"```python\n(.*?)```", api.split("## Adding a method")[1], flags=re.S)[0]
    (folder / "my_method.py").write_text(method)
    (folder / "objectives.py").write_text(
        "import numpy as np\nfrom oscbo import methods\nfrom oscbo.registry import Entry\n\n"
        'methods.REGISTRY["shrinking"] = Entry("my_method:Shrinking")\n\n\n'
        "def bowl(x):\n    return -float(np.sum((x - 0.3) ** 2))\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "my_method", raising=False)
    monkeypatch.setitem(methods.REGISTRY, "shrinking", methods.REGISTRY["oscbo"])  # restored after the test
    argv = ["optimize", "work/objectives.py:bowl", "--bounds", "[[0, 1], [0, 1], [0, 1]]", "--budget", "3"]
    assert cli.main([*argv, "--method", "shrinking", "--n-init", "3", "--no-progress", "--out", "runs/own"]) == 0
    table, meta = records.read_record(tmp_path / "runs" / "own" / "seed0.parquet")
    assert set(table["method"]) == {"shrinking"} and len(table) == 6, capsys.readouterr()


def test_ctrl_c_writes_the_evaluations_made_and_exits_130(capsys: pytest.CaptureFixture[str], objectives: Path) -> None:
    """Ctrl-C (a real SIGINT to this process) during the 7th evaluation: the 6 made are written,
    the sidecar says interrupted at step 6, and the command stops with 130, as a shell reports an
    interrupted process (it lost the whole run before)."""
    argv = ["optimize", "cli_objectives:ctrl_c_at_seven", "--bounds", "[[0, 1]]", "--budget", "5", "--no-progress"]
    assert cli.main([*argv, "--n-init", "3", "--out", "runs/stopped"]) == 130
    table = pd.read_parquet(objectives / "runs" / "stopped" / "seed0.parquet")
    meta = records.read_sidecar(objectives / "runs" / "stopped" / "seed0.parquet")
    assert len(table) == 6 and (meta["status"], meta["interrupted_step"]) == ("interrupted", 6)
    assert "interrupted at evaluation 6; its 6 evaluations are in" in capsys.readouterr().err
