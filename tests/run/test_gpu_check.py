"""benchmarks/gpu_check.py: where CUDA and CPU records part, and its CPU half, run here (no GPU)."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys

import pandas as pd
import pytest
from helpers import BENCHMARKS, benchmark_module

from oscbo import methods
from oscbo import run as engine

N_INIT = 5


gpu_check = benchmark_module("gpu_check")  # as when run: it imports performance.py beside it


@pytest.fixture(scope="module")
def record() -> pd.DataFrame:
    """Two seeds' records of three BO rounds, one table, as the script's jobs write them."""
    result = engine.run("hartmann3", "gp-ucb-mll", [0, 1], budget=3, n_init=N_INIT, device="cpu")
    return pd.concat(result.tables.values(), ignore_index=True)


def moved(record: pd.DataFrame, seed: int, round_: int, column: str, by: float) -> pd.DataFrame:
    """``record`` with ``column`` of ``seed`` at BO round ``round_`` moved by ``by``."""
    other = record.copy()
    other.loc[(other.seed == seed) & (other.step == N_INIT + round_ - 1), column] += by
    return other


def test_records_part_at_the_first_round_a_value_moves_by_more_than_1e6(gpu_check, record: pd.DataFrame) -> None:
    assert gpu_check.parting(record, record.copy(), N_INIT) == "never"
    assert gpu_check.parting(record, moved(record, 1, 2, "sigma", 1e-7), N_INIT) == "never"
    later = moved(moved(record, 1, 2, "sigma", 1e-5), 0, 3, "lengthscale_0", 1.0)
    assert gpu_check.parting(record, later, N_INIT) == "round 2 (sigma of seed 1: 1.0e-05 apart)"
    assert (
        gpu_check.parting(record, moved(record, 0, 1, "mu", -3e-4), N_INIT) == "round 1 (mu of seed 0: 3.0e-04 apart)"
    )


def test_no_lengthscale_on_both_sides_agrees_on_one_side_parts(gpu_check, record: pd.DataFrame) -> None:
    """TabICLv2's records hold NaN lengthscales: NaN against NaN is no difference, NaN against a number is."""
    without = record.assign(lengthscale_0=math.nan)
    assert gpu_check.parting(without, without.copy(), N_INIT) == "never"
    assert gpu_check.parting(record, without, N_INIT) == "round 1 (lengthscale_0 of seed 0: inf apart)"


@pytest.mark.slow
def test_the_cpu_half_times_every_method_and_says_no_cuda_was_found() -> None:
    """The whole script at a tiny size, with CUDA hidden: a row per registered method (TabICLv2 on
    the tiny checkpoint, GP-UCB at the true kernel on a GP sample) with finite CPU seconds, no
    CUDA cells, and the missing CUDA said plainly."""
    done = subprocess.run(
        [sys.executable, BENCHMARKS / "gpu_check.py", "--task", "hartmann3", "--budget", "2", "--n-init", "5"]
        + ["--seeds", "2", "--cpu-parallel", "1", "--time-limit", "300", "--no-record"],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "NO CUDA DEVICE FOUND" in out and "TINY RANDOM checkpoint" in out
    assert "task hartmann3 (gp-ucb-true: gp5)," in out  # the true kernel runs where the lengthscale is known
    rows = {method: row for method, *row in re.findall(r"^(\S+) +(\d+) \| (.*) \| (.*)$", out, flags=re.M)}
    assert set(rows) == set(methods.names()), out
    for method, (rounds, cells, parts) in rows.items():
        cpu, cuda, ratio = cells.split()
        assert math.isfinite(float(cpu)) and float(cpu) > 0, (method, out)
        assert (cuda, ratio, parts) == ("-", "-", "-"), (method, out)
        assert rounds == ("1" if methods.REGISTRY[method].gpu else "2"), (method, out)
    assert "no result" not in out


def test_its_figures_are_the_seconds_their_ratio_and_the_round_the_records_part(
    gpu_check, record: pd.DataFrame, tmp_path
) -> None:
    """The measurements table's rows of one method timed on both devices, and of one timed on the CPU only."""
    record.to_parquet(gpu_check.records_path(tmp_path, "gp-ucb-mll", "cpu", 2))
    moved(record, 1, 2, "sigma", 1e-5).to_parquet(gpu_check.records_path(tmp_path, "gp-ucb-mll", "cuda", 2))
    measured = {
        ("gp-ucb-mll", "cpu", 2): {"seconds": 2.0},
        ("gp-ucb-mll", "cuda", 2): {"seconds": 3.0},
        ("oscbo", "cpu", 2): {"seconds": 4.0},
        ("oscbo", "cuda", 2): {"over": 9.0},
    }
    rows = gpu_check.figures(
        measured, {"gp-ucb-mll": 3, "oscbo": 3}, {"gp-ucb-mll": "hartmann3", "oscbo": "hartmann3"}, 2, tmp_path, N_INIT
    )
    name = "gpu_check hartmann3, 3 rounds, 2 seeds: "
    assert rows == [
        (name + "gp-ucb-mll on cpu", 2.0, "s per seed-run"),
        (name + "gp-ucb-mll on cuda", 3.0, "s per seed-run"),
        (name + "gp-ucb-mll, CUDA / CPU", 1.5, "ratio"),
        (name + "gp-ucb-mll, first BO round the CUDA and CPU records part", 2, "round (0: never)"),
        (name + "oscbo on cpu", 4.0, "s per seed-run"),
    ]
