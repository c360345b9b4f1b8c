"""Lunar Lander's oracle measured round by round, and a round's price on any number of workers.

What ``benchmarks/lunar.py`` and ``benchmarks/project_full_study.py`` share. A lunar12 job's
oracle call is one BO round: one point per seed (the initial design: ``n_init`` per seed), each
flown for ``episodes`` episodes. On ``workers`` > 1 the task's pool maps the round's episodes in
order (point by point, episode by episode), each to the first worker free; on 1 they run in the
job's own process (:class:`oscbo.tasks.lunar.LunarLander`).

The price of a round (:class:`PoolModel`): on 1 worker, the sum of its episodes' serial seconds
(measured one by one, :func:`episode_seconds`); on W workers, the episodes, each its serial
seconds plus ``per_episode`` (sending it to a worker and its step rewards back), list-scheduled
in order on W workers (:func:`list_schedule`: the idle of the workers that finish first when
the episodes do not divide evenly), plus ``per_round`` (the pool's wake-up, the last results
gathered). Both overheads are fitted (:meth:`PoolModel.fit`) from rounds measured through the
task's own pool (:func:`pooled_rounds`) against their episodes' serial seconds. ``per_episode``
is counted on the workers, so it divides with them; the parent's share of it (pickling the
calls, reading the results) does not, which bounds the model to pools whose per-round parent
work stays small beside a round (a few ms of 500 episodes against seconds of flight).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import nnls

from oscbo.tasks.base import build_task
from oscbo.tasks.lunar import HEURISTIC_WEIGHTS, LunarLander, episode_rewards


def sample_points(rng: np.random.Generator, count: int) -> list[list[float]]:
    """Half uniform in [0, 2]^12 (as an initial design: most crash within 100 steps), half
    :func:`near_heuristic` (as a late round: they land, crash or hover to the step cap, up to ten
    times longer)."""
    uniform = rng.uniform(0, 2, size=(count - count // 2, 12)).tolist()
    return uniform + near_heuristic(rng, count // 2)


def near_heuristic(rng: np.random.Generator, count: int) -> list[list[float]]:
    """The heuristic's weights plus N(0, 0.1) noise, clipped to [0, 2]: a late BO round's points."""
    return np.clip(np.asarray(HEURISTIC_WEIGHTS) + rng.normal(0, 0.1, size=(count, 12)), 0, 2).tolist()


def timed(evaluate: Callable, points: list[list[float]]) -> tuple[float, list[float]]:
    """Seconds of ``evaluate(points)`` and its values."""
    tic = time.perf_counter()
    values = evaluate(points)
    return time.perf_counter() - tic, values


def on(task: LunarLander) -> Callable[[list[list[float]]], list[float]]:
    """The task as a function of weight vectors in [0, 2]^12 (it takes [0, 1]^12: w / 2 exactly)."""
    return lambda points: task(torch.tensor(points, dtype=torch.float64) / 2).tolist()


def episode_seconds(points: Sequence[Sequence[float]], episodes: int) -> list[float]:
    """Serial seconds of each episode of each point (weights in [0, 2]^12), in the order the task's
    pool maps them, flown in this process as the task flies them on 1 worker."""
    seconds = []
    for weights in points:
        for seed in range(episodes):
            tic = time.perf_counter()
            episode_rewards(list(weights), seed)
            seconds.append(time.perf_counter() - tic)
    return seconds


def pooled_rounds(
    points: list[list[float]], episodes: int, workers: int, rounds: int
) -> list[tuple[float, list[float]]]:
    """``rounds`` rounds of ``points`` through the task's own pool (``lunar12(episodes, workers)``,
    as a workflow job builds it): each round's seconds and values, the first with the pool's start."""
    task = build_task("lunar12", episodes=episodes, workers=workers)
    return [timed(on(task), points) for _ in range(rounds)]


def list_schedule(costs: Sequence[float], workers: int) -> float:
    """Makespan of ``costs`` taken in order, each by the first of ``workers`` to be free."""
    free = [0.0] * min(workers, max(len(costs), 1))
    for cost in costs:
        heapq.heapreplace(free, free[0] + cost)
    return max(free)


@dataclass(frozen=True)
class PoolModel:
    """A round's seconds on W workers from its episodes' serial seconds (module docstring).

    Attributes:
        per_episode: seconds a pooled episode costs a worker beyond its serial flight.
        per_round: seconds a pooled round costs beyond its episodes.
        start: seconds the pool's first round costs beyond a later one (its processes started),
            once per job.
    """

    per_episode: float
    per_round: float
    start: float = 0.0

    def seconds(self, costs: Sequence[float], workers: int) -> float:
        """Seconds of a round whose episodes cost ``costs`` serially, on ``workers`` workers."""
        if workers == 1:
            return sum(costs)
        return list_schedule([cost + self.per_episode for cost in costs], workers) + self.per_round

    def core_seconds(self, costs: Sequence[float], workers: int) -> float:
        """Core-seconds of that round: its flights, each with its overhead on a worker when pooled."""
        return sum(costs) + (len(costs) * self.per_episode if workers > 1 else 0.0)

    @classmethod
    def fit(cls, measured: Sequence[tuple[Sequence[float], float]], workers: int, start: float = 0.0) -> PoolModel:
        """The overheads that best explain ``measured`` rounds (each: its episodes' serial seconds,
        the round's seconds on ``workers``): what a round took beyond its list-scheduled episodes,
        least squares on ``episodes / workers`` and 1, neither overhead below 0 (on a busy machine
        noise can make a round look faster than its flights)."""
        if len({len(costs) for costs, _ in measured}) < 2:
            raise ValueError("fitting two overheads needs rounds of at least two sizes")
        beyond = np.array([seconds - list_schedule(costs, workers) for costs, seconds in measured])
        design = np.array([[len(costs) / workers, 1.0] for costs, _ in measured])
        (per_episode, per_round), _ = nnls(design, beyond)
        return cls(float(per_episode), float(per_round), start)


def measure_pool(
    episodes: int, workers: int = 2, sizes: Sequence[int] = (4, 20), repeats: int = 2
) -> tuple[PoolModel, list[tuple[list[float], float]]]:
    """The pool's overheads on ``workers``, and the rounds they were fitted from.

    A round of each of ``sizes`` points (:func:`sample_points`) is flown serially, episode by
    episode (the faster of two passes, each episode), then ``1 + repeats`` times through the task's
    pool: the fastest later round is the round's seconds, the first's excess over it the pool's start.
    """
    rng = np.random.default_rng(0)
    measured, starts = [], []
    for size in sizes:
        points = sample_points(rng, size)
        costs = [min(pair) for pair in zip(episode_seconds(points, episodes), episode_seconds(points, episodes))]
        (first, _), *later = pooled_rounds(points, episodes, workers, rounds=1 + repeats)
        fastest = min(seconds for seconds, _ in later)
        measured.append((costs, fastest))
        starts.append(max(first - fastest, 0.0))
    return PoolModel.fit(measured, workers, start=float(np.mean(starts))), measured
