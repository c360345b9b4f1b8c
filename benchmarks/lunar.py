"""Lunar Lander: the task's evaluation against the plain gymnasium loop, in one run.

    python benchmarks/lunar.py [--episodes 50] [--points 20] [--workers 1 2] [--repeats 3]

The points: half uniform in [0, 2]^12 (as an initial design: most crash within 100 steps),
half the heuristic's weights plus N(0, 0.1) noise (as a late round: they land, crash or hover
to the step cap, up to ten times longer).

1. One evaluation (``--episodes`` episodes, 50 in the study) of the heuristic's weights and of
   four points, in one process: the loop a gymnasium user writes (the registered, wrapped
   ``gymnasium.make("LunarLander-v3")``, a new one per evaluation, and the 12-weight heuristic
   on NumPy scalars) against the task (``lunar12``). Prints seconds per evaluation (the best
   of ``--repeats``) and their ratio.
2. One BO round's ``--points`` points on each of ``--workers`` processes: the plain loop as the
   task ran it before (in this process on 1 worker, else one point per process of a pool kept
   for the task's life) against the task's ``workers`` option. Prints the seconds of the first
   round (the pool's start included) and of the next.

Every value is checked to be identical, bit for bit, to the plain loop's.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat

import numpy as np
import torch
from lunar_rounds import on, pooled_rounds, sample_points, timed  # benchmarks/ is on the path of the scripts in it
from plain_lunar import plain_mean_reward

from oscbo.tasks.base import build_task
from oscbo.tasks.lunar import HEURISTIC_WEIGHTS


def best_of(repeats, evaluate, points):
    runs = [timed(evaluate, points) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    evaluated = [list(HEURISTIC_WEIGHTS), *sample_points(rng, 4)]
    round_points = sample_points(rng, args.points)

    def plain(points):
        return [plain_mean_reward(w, args.episodes) for w in points]

    task = build_task("lunar12", episodes=args.episodes)
    on(task)(evaluated[:1])  # warm-up: the simulator built, first-call overheads
    plain_seconds, expected = best_of(args.repeats, plain, evaluated)
    task_seconds, values = best_of(args.repeats, on(task), evaluated)
    assert values == expected, "the task's values differ from the plain loop's"
    print(f"one evaluation ({args.episodes} episodes; the heuristic, 4 points; best of {args.repeats}), one process:")
    print(f"  plain gymnasium loop  {plain_seconds / len(evaluated):7.3f} s")
    print(f"  lunar12               {task_seconds / len(evaluated):7.3f} s")
    print(f"  ratio (plain / task)  {plain_seconds / task_seconds:7.2f}")

    print(f"\none round of {args.points} points ({args.episodes} episodes each), seconds, first round / later:")
    expected, baseline = None, None  # the first plain round's values; lunar12's later round on the first --workers
    for workers in args.workers:
        with ProcessPoolExecutor(max_workers=workers) as pool:

            def plain_pooled(points, pool=pool):
                return list(pool.map(plain_mean_reward, points, repeat(args.episodes)))

            before = plain if workers == 1 else plain_pooled
            plain_rounds = [timed(before, round_points) for _ in range(2)]
        task_rounds = pooled_rounds(round_points, args.episodes, workers, rounds=2)
        expected = expected or plain_rounds[0][1]
        for _, values in plain_rounds + task_rounds:
            assert values == expected, f"values on {workers} workers differ from the plain loop's"
        (plain_first, _), (plain_later, _) = plain_rounds
        (task_first, _), (task_later, _) = task_rounds
        baseline = baseline or task_later
        print(
            f"  {workers} worker(s): plain loop {plain_first:6.2f} / {plain_later:6.2f}, "
            f"lunar12 {task_first:6.2f} / {task_later:6.2f}; ratio (plain / task) {plain_later / task_later:5.2f}, "
            f"lunar12 {baseline / task_later:5.2f}x its speed on {args.workers[0]}"
        )


if __name__ == "__main__":
    main()
