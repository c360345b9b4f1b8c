"""Lunar Lander 12-D (paper E.2): the heuristic controller of Eriksson et al. (2019).

gymnasium's ``LunarLander-v3`` (Box2D, discrete actions) flown by the 12-weight
generalisation of gymnasium's own ``heuristic``; with :data:`HEURISTIC_WEIGHTS` it acts exactly
as that heuristic. The objective of a weight vector w in [0, 2]^12 is the mean total reward
over a fixed set of episodes (seeds 0..49 by default), each at most 1000 steps. f* is
unknown: regret is taken against the best value seen on this task across the study (at
aggregation time).

Each process builds the simulator once and flies it without what changes no number: none of
gymnasium's wrappers (their checks, the time limit: an episode stops at ``max_steps`` itself),
``step`` trimmed to what ``LunarLander-v3`` computes (:meth:`~oscbo.tasks.lunar_simulator.Simulator.fly`),
the controller's float32 arithmetic on Python floats (:func:`float32_controller`), and an
episode's engine dispersion drawn in one call (:class:`EngineDraws`). The rewards are those of
``gymnasium.make("LunarLander-v3")`` bit for bit (tested, against ``benchmarks/plain_lunar.py``),
as an episode is a function of its seed alone (``reset`` builds a new Box2D world and random
generator).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from itertools import islice, repeat
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from oscbo.tasks.base import Task

if TYPE_CHECKING:
    import numpy as np

    from oscbo.tasks.lunar_simulator import Simulator

#: gymnasium's heuristic, written as weights of the 12-parameter controller.
HEURISTIC_WEIGHTS = (0.5, 1.0, 0.4, 0.55, 0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 0.05, 0.05)
EPISODES = 50
MAX_STEPS = 1000


def controller_action(state: Sequence[float], w: Sequence[float]) -> int:
    """The discrete action of the 12-weight heuristic (0 noop, 1 left, 2 main, 3 right).

    The state is gymnasium's float32 array: as in gymnasium's heuristic, the arithmetic is
    NumPy's float32, a weight cast to float32 where it meets the state, and the comparisons too.
    """
    x, y, vx, vy, angle, angular_velocity, left_contact, right_contact = state
    # np.clip(..., -w[2], w[2]) at a tenth of its cost (a bound is cast to float32 where it meets the state)
    angle_target = min(max(x * w[0] + vx * w[1], -w[2]), w[2])
    hover_target = w[3] * abs(x)
    angle_todo = (angle_target - angle) * w[4] - angular_velocity * w[5]
    hover_todo = (hover_target - y) * w[6] - vy * w[7]
    if left_contact or right_contact:
        angle_todo = w[8]
        hover_todo = -vy * w[9]
    if hover_todo > abs(angle_todo) and hover_todo > w[10]:
        return 2
    if angle_todo < -w[11]:
        return 3
    if angle_todo > w[11]:
        return 1
    return 0


def float32_controller(weights: Sequence[float]) -> Callable[[Sequence[float]], int]:
    """:func:`controller_action` for a float32 state held in Python floats, without NumPy scalars.

    The action of ``controller_action(np.float32 state, weights)``, bit for bit (tested): each of
    NumPy's float32 operations is done on doubles and rounded to float32 (``struct``'s ``f``, C's
    float conversion, as NumPy's). That is the float32 result: a product of two float32 values is
    exact in a double, and a sum or difference rounded twice (to a double, then to float32) is the
    float32 one, as a double's 53 bits are at least 2 * 24 + 2 (Figueroa, 1995). A weight meeting
    the state is cast to float32 first (NumPy's promotion of a Python float), and so is one compared
    with a float32 value; ``w[8]``, the angle to do with a leg down, stays a Python float, compared
    as one with ``w[11]``. A value past float32's range makes ``struct`` raise where NumPy would
    give inf: a failure, never a different number.
    """
    round1, round2 = _rounder(1), _rounder(2)
    w = [float(v) for v in weights]
    # as float32, where they meet the state (and |w[8]| where it meets float32 hover_todo)
    w0, w1, w2, w3, w4, w5, w6, w7, _, w9, w10, w11, w8_abs = _rounder(13)(*w, abs(w[8]))
    angle_todo_down, w11_down = w[8], w[11]

    def action(state: Sequence[float]) -> int:
        x, y, vx, vy, angle, angular_velocity, left_contact, right_contact = state
        if left_contact or right_contact:
            hover_todo = round1(-vy * w9)[0]
            if hover_todo > w8_abs and hover_todo > w10:
                return 2
            if angle_todo_down < -w11_down:
                return 3
            if angle_todo_down > w11_down:
                return 1
            return 0
        a, b = round2(x * w0, vx * w1)
        angle_target = round1(a + b)[0]
        # np.clip to [-w[2], w[2]]: a bound meets the float32 target as float32
        angle_target = -w2 if angle_target < -w2 else w2 if angle_target > w2 else angle_target
        hover_target, c = round2(w3 * abs(x), angular_velocity * w5)
        g, e = round2(angle_target - angle, hover_target - y)
        g, e = round2(g * w4, e * w6)
        d = round1(vy * w7)[0]
        angle_todo, hover_todo = round2(g - c, e - d)
        if hover_todo > abs(angle_todo) and hover_todo > w10:
            return 2
        if angle_todo < -w11:
            return 3
        if angle_todo > w11:
            return 1
        return 0

    return action


@cache
def _rounder(count: int) -> Callable[..., tuple[float, ...]]:
    """``count`` doubles rounded to float32, as Python floats."""
    packer = struct.Struct(f"{count}f")
    pack, unpack = packer.pack, packer.unpack
    return lambda *values: unpack(pack(*values))


@cache
def simulator() -> Simulator:
    """This process's simulator, built once: ``LunarLander-v3``'s class and arguments, unwrapped
    (no time limit: an episode stops at ``max_steps`` itself; none of the wrappers' checks)."""
    import gymnasium

    from oscbo.tasks.lunar_simulator import LunarLander, Simulator

    spec = gymnasium.spec("LunarLander-v3")
    if spec.entry_point != f"{LunarLander.__module__}:{LunarLander.__name__}":
        raise RuntimeError(f"LunarLander-v3 is {spec.entry_point}, not the class Simulator extends")
    env = Simulator(**spec.kwargs)
    if env.continuous or env.enable_wind or env.render_mode is not None:
        raise RuntimeError("Simulator.fly is LunarLander's step without wind, rendering or continuous actions")
    return env


class EngineDraws:
    """An episode's engine dispersion, drawn at its start: the generator ``step`` reads.

    gymnasium's ``LunarLander.step`` draws ``np_random.uniform(-1.0, +1.0)`` twice a step, and
    nothing else once ``reset`` is done (no wind). NumPy's generator makes the same doubles in
    one array call as in as many scalar calls (the same ``random_uniform``, one ``next_double``
    each), so the episode's ``2 * max_steps`` draws are made in one call, not two a step (an
    evaluation 1.03 to 1.11 times faster, docs/performance.md).
    """

    __slots__ = ("_next",)

    def __init__(self, generator: np.random.Generator, count: int) -> None:
        self._next = iter(generator.uniform(-1.0, 1.0, size=count).tolist()).__next__

    def uniform(self, low: float, high: float) -> float:
        if low != -1.0 or high != 1.0:
            raise ValueError(f"LunarLander.step drew uniform({low}, {high}); EngineDraws holds uniform(-1, 1) only")
        return self._next()


def episode_rewards(weights: Sequence[float], seed: int, max_steps: int = MAX_STEPS) -> list[float]:
    """The reward of each step of the episode of ``seed`` flown by the controller."""
    env = simulator()
    state, _ = env.reset(seed=seed)
    env.np_random = EngineDraws(env.np_random, 2 * max_steps)  # the next reset(seed=...) makes a new generator
    state, act, fly = state.tolist(), float32_controller(weights), env.fly
    rewards = []
    for _ in range(max_steps):
        state, reward, terminated = fly(act(state))
        rewards.append(reward)
        if terminated:
            break
    return rewards


def mean_of_episodes(episodes: Iterable[list[float]], count: int) -> float:
    """The mean total reward of ``count`` episodes' step rewards, summed step by step in
    episode order: the float sum of one loop over the episodes, wherever they were flown."""
    total = 0.0
    for rewards in episodes:
        for reward in rewards:
            total += reward
    return total / count


def mean_reward(weights: Sequence[float], episodes: int = EPISODES, max_steps: int = MAX_STEPS) -> float:
    """Mean total reward of the controller over episode seeds 0..episodes-1."""
    return mean_of_episodes((episode_rewards(weights, seed, max_steps) for seed in range(episodes)), episodes)


class LunarLander(Task):
    """Maximise the controller's mean reward over w in [0, 2]^12.

    Args:
        episodes: episodes per evaluation (seeds 0..episodes-1); the paper uses 50.
        max_steps: step cap per episode.
        workers: processes flying a batch's episodes in parallel (1: in this process). A
            workflow job gets its ``oracle_threads`` here (config): the seeds of a lockstep
            job query one point each a round, flown episode by episode so that every worker
            stays busy to the round's end, even with fewer points than workers. The pool is
            started on the first batch and kept for the task's life.
    """

    name = "lunar12"

    def __init__(self, episodes: int = EPISODES, max_steps: int = MAX_STEPS, workers: int = 1) -> None:
        if episodes < 1 or max_steps < 1 or workers < 1:
            raise ValueError(f"lunar12 needs episodes, max_steps, workers >= 1, got {episodes}, {max_steps}, {workers}")
        self.episodes, self.max_steps, self.workers = episodes, max_steps, workers
        self._pool: ProcessPoolExecutor | None = None
        self.bounds = torch.tensor([[0.0] * 12, [2.0] * 12], dtype=torch.float64)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_pool": None}  # a copy starts its own pool

    @property
    def optimal_value(self) -> None:
        return None

    def evaluate_true(self, X: Tensor) -> Tensor:
        points = X.detach().cpu().reshape(-1, 12).tolist()
        if self.workers > 1:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.workers)
            weights = [point for point in points for _ in range(self.episodes)]
            seeds = [seed for _ in points for seed in range(self.episodes)]
            rewards = self._pool.map(episode_rewards, weights, seeds, repeat(self.max_steps))
            values = [mean_of_episodes(islice(rewards, self.episodes), self.episodes) for _ in points]
        else:
            values = [mean_reward(point, self.episodes, self.max_steps) for point in points]
        return torch.tensor(values, dtype=torch.float64).reshape(X.shape[:-1])

    def describe(self) -> dict:
        return {**super().describe(), "episodes": self.episodes, "max_steps": self.max_steps}


def lunar12(episodes: int = EPISODES, max_steps: int = MAX_STEPS, workers: int = 1) -> LunarLander:
    return LunarLander(episodes=episodes, max_steps=max_steps, workers=workers)
