"""benchmarks/crosscheck.py: its printed table, and that its GP-UCB-MLL loop (BoTorch's own GP,
nothing of the engine's) refits exactly the engine's lengthscales when fed the engine's data."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import torch
from helpers import BENCHMARKS, benchmark_module

from oscbo import run as engine

COMMAND = ["benchmarks/crosscheck.py", "--seeds", "3", "--budget", "5"]
COMMAND += ["--gp-ucb-mll-tasks", "hartmann3", "--vanilla-bo-tasks", "hartmann6"]


botorch_loops = benchmark_module("botorch_loops")


@pytest.mark.slow
def test_the_printed_comparison(tmp_path):
    """3 seeds, 5 rounds: the command first, then one row per (task, method, implementation); the
    table it writes (what the report shows) holds the same numbers, unrounded."""
    command = [*COMMAND, "--table", str(tmp_path / "crosscheck.parquet")]
    done = subprocess.run([sys.executable, *command], cwd=BENCHMARKS.parent, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "command: python " + " ".join(command)
    written = pd.read_parquet(tmp_path / "crosscheck.parquet")
    assert (written["command"] == " ".join(["python", *command])).all() and (written["seeds"] == 3).all()
    for line, row in zip(lines[4:], written.itertuples(), strict=True):
        cells = line.split()
        assert cells[:3] == [row.task, row.method, row.implementation] and row.description
        assert cells[-3 if row.implementation == "engine" else -4] == f"{row.median_sr:.4f}"
    header = lines[2].split()
    assert header[:3] == ["task", "method", "implementation"]
    rows = [line.split() for line in lines[4:]]
    assert [row[:3] for row in rows] == [
        ["hartmann3", "gp-ucb-mll", "engine"],
        ["hartmann3", "gp-ucb-mll", "botorch-loop"],
        ["hartmann6", "vanilla-bo", "engine"],
        ["hartmann6", "vanilla-bo", "botorch-default"],
        ["hartmann6", "vanilla-bo", "botorch-study"],
    ]
    for row in rows:
        if row[2] == "engine":  # medians and seconds only
            assert len(row) == 6 and float(row[3]) >= 0 and float(row[4]) > 0
            continue
        p_sr, p_cr, p_ls, gap_ls, gap_sr, agree, median_sr, median_ls, seconds, retries = row[3:]
        assert all(0 <= float(p) <= 1 for p in (p_sr, p_cr, p_ls))
        assert float(gap_ls) >= 0 and float(gap_sr) >= 0
        within, seeds = agree.split("/")
        assert seeds == "3" and 0 <= int(within) <= 3
        assert float(median_sr) >= 0 and float(median_ls) > 0 and float(seconds) > 0 and int(retries) >= 0
        if row[2] in ("botorch-loop", "botorch-study"):  # the engine's own model in BoTorch: five rounds coincide
            assert float(gap_ls) < 0.01 and float(gap_sr) < 0.01


@pytest.mark.slow
def test_gp_ucb_mll_loop_refits_the_engines_lengthscales_on_its_data(botorch_loops):
    """Fed each seed's D_{t-1} and theta_{t-2} from the engine's record, the loop's theta_0
    (fit_gpytorch_mll) and refits (Adam on log-lengthscale through GPyTorch's marginal likelihood)
    are the engine's theta_{t-1}.

    Tolerance 1e-12 relative: the same objective, optimiser and start, so only the rounding of the
    marginal likelihood's gradient differs (the engine's hand-written backward against GPyTorch's
    autograd, about 1e-16); 50 Adam steps leave it below 1e-15 (observed).
    """
    result = engine.run("hartmann3", "gp-ucb-mll", [0, 1, 2], budget=5, n_init=10)
    for table in result.tables.values():
        X = torch.tensor(table[[f"x_{i}" for i in range(3)]].to_numpy())
        y = torch.tensor(table["y"].to_numpy())
        played = torch.tensor(table[table.phase == "bo"]["lengthscale_0"].to_numpy())
        theta_0 = botorch_loops.initial_lengthscale(X[:10], botorch_loops.standardized(y[:10]))
        torch.testing.assert_close(theta_0, played[:1], rtol=1e-12, atol=0)
        for t in range(2, 6):
            n = 10 + t - 1
            refit = botorch_loops.refit_lengthscale(X[:n], botorch_loops.standardized(y[:n]), played[t - 2 : t - 1])
            torch.testing.assert_close(refit, played[t - 1 : t], rtol=1e-12, atol=0)
            assert not torch.equal(played[t - 1], played[t - 2])  # a refit that moved: the check can fail
