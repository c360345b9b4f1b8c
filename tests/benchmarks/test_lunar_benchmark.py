"""benchmarks/lunar.py: a tiny run, its values checked against the plain loop's, its figures as
``--record`` appends them (captured here: the measurements table is left as it is)."""

from __future__ import annotations

import sys

import Box2D
import pytest
from helpers import benchmark_module

from oscbo.tasks.lunar import HEURISTIC_WEIGHTS, episode_rewards

lunar = benchmark_module("lunar")


def test_a_tiny_run_records_the_late_round_ratio(lunar, monkeypatch, capsys) -> None:
    import measurements  # on the path while this module's tests run

    recorded = []
    monkeypatch.setattr(measurements, "record", recorded.extend)
    command = ["lunar.py", "--episodes", "1", "--points", "2", "--workers", "1", "--repeats", "1", "--record"]
    monkeypatch.setattr(sys, "argv", command)
    lunar.main()  # asserts every value equals the plain loop's
    figures = {name: (value, unit) for name, value, unit in recorded}
    late = f"lunar12 evaluation (1 episodes), {lunar.LATE}, 1 worker"
    plain, _ = figures[f"{late}: plain gymnasium loop, best of 1"]
    task, _ = figures[f"{late}: lunar12, best of 1"]
    assert figures[f"{late}: plain loop / lunar12"] == (pytest.approx(plain / task), "ratio")
    assert 0 < figures[f"{late}: Box2D b2World.Step's share of lunar12's time (one more evaluation, timed)"][0] < 1
    assert "ratio (plain / task)" in capsys.readouterr().out


def test_box2d_share_puts_the_step_back(lunar) -> None:
    step = Box2D.b2World.__dict__["Step"]
    share = lunar.box2d_share(lambda points: [episode_rewards(w, 0, 50) for w in points], [HEURISTIC_WEIGHTS])
    assert 0 < share < 1
    assert Box2D.b2World.__dict__["Step"] is step
    assert len(episode_rewards(HEURISTIC_WEIGHTS, 0, 50)) == 50  # the world still steps
