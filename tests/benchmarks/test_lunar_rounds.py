"""benchmarks/lunar_rounds.py: a Lunar round's price on W workers, against schedules worked out by
hand, its overheads fitted back, and a measured round's episodes as the task flies them."""

from __future__ import annotations

import pytest
from helpers import benchmark_module

lunar_rounds = benchmark_module("lunar_rounds")


def test_episodes_in_order_each_to_the_first_free_worker(lunar_rounds) -> None:
    # [3, 1, 1, 1] on 2: one worker flies the 3, the other the three 1s; [1, 1, 1, 3]: the 3 comes
    # last, to the worker free at 1, and the other idles over [2, 4)
    assert lunar_rounds.list_schedule([3, 1, 1, 1], 2) == 3
    assert lunar_rounds.list_schedule([1, 1, 1, 3], 2) == 4
    assert lunar_rounds.list_schedule([1, 1, 1], 8) == 1  # more workers than episodes
    assert lunar_rounds.list_schedule([], 4) == 0


def test_a_round_on_one_worker_is_its_serial_flights_and_on_more_pays_the_pool(lunar_rounds) -> None:
    model = lunar_rounds.PoolModel(per_episode=0.5, per_round=2.0)
    assert model.seconds([1, 1, 1, 3], 1) == 6  # in the job's own process: no pool
    assert model.seconds([1, 1, 1, 3], 2) == 5 + 2  # [1.5, 1.5, 1.5, 3.5] on 2: the 3.5 from 1.5 on, then the round's 2
    assert model.seconds([1] * 12, 4) == 3 * 1.5 + 2
    assert model.core_seconds([1, 1, 1, 3], 1) == 6
    assert model.core_seconds([1, 1, 1, 3], 2) == 6 + 4 * 0.5  # each pooled episode's overhead, not the round's


def test_the_fit_finds_the_overheads_that_made_the_rounds(lunar_rounds) -> None:
    made = lunar_rounds.PoolModel(per_episode=0.002, per_round=0.05)
    rounds = [[0.004 + 0.001 * (i % 7) for i in range(n)] for n in (50, 500, 5000)]
    fitted = lunar_rounds.PoolModel.fit([(costs, made.seconds(costs, 2)) for costs in rounds], workers=2)
    assert fitted.per_episode == pytest.approx(made.per_episode, rel=0.02)
    assert fitted.per_round == pytest.approx(made.per_round, rel=0.1)


def test_the_fit_keeps_overheads_at_zero_when_rounds_ran_faster_than_their_flights(lunar_rounds) -> None:
    rounds = [[0.01] * n for n in (100, 1000)]
    fitted = lunar_rounds.PoolModel.fit([(costs, 0.9 * sum(costs) / 2) for costs in rounds], workers=2)
    assert (fitted.per_episode, fitted.per_round) == (0.0, 0.0)
    with pytest.raises(ValueError, match="two sizes"):
        lunar_rounds.PoolModel.fit([(rounds[0], 1.0), (rounds[0], 1.1)], workers=2)


def test_episode_seconds_are_one_per_episode_of_each_point_in_the_pools_order(lunar_rounds, processes) -> None:
    points = [[0.1] * 12, [1.9] * 12]  # both crash at once, in a few dozen steps
    seconds = lunar_rounds.episode_seconds(points, episodes=3)
    assert len(seconds) == 6 and all(s > 0 for s in seconds)
    (_, first), (_, later) = lunar_rounds.pooled_rounds(points, episodes=3, workers=2, rounds=2)
    assert first == later == lunar_rounds.on(lunar_rounds.build_task("lunar12", episodes=3))(points)
