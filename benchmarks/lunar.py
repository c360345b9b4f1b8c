"""Lunar Lander: the task's evaluation against the plain gymnasium loop, in one run.

    python benchmarks/lunar.py [--episodes 50] [--points 20] [--workers 1 2] [--repeats 3] [--record]

The plain loop is the one a gymnasium user writes (``benchmarks/plain_lunar.py``: the registered,
wrapped ``gymnasium.make("LunarLander-v3")``, a new one per evaluation, and the 12-weight
heuristic on NumPy scalars); the task is ``lunar12``.

1. One evaluation (``--episodes`` episodes, 50 in the study), in one process, on 1 worker, of
   a late round's points: the heuristic's weights and four points near it (N(0, 0.1) noise:
   they land, crash or hover to the step cap, the longest episodes); then of an initial
   design's: four points uniform in [0, 2]^12 (most crash within 100 steps). Prints seconds per
   evaluation (the best of ``--repeats``) and their ratio, the late round's first: the figure
   the task's trims are for. Then, in one more evaluation of the late round with Box2D's
   ``b2World.Step`` timed (the physics and gymnasium's contact callbacks), its share of the
   task's time, and the late round's ratio over that share: what the ratio would be were all
   else free, the most that trimming the Python around Box2D's step can give (an estimate: the
   timer's own cost counts in the share).
2. One BO round's ``--points`` points (half each kind) on each of ``--workers`` processes: the
   plain loop as the task ran it before (in this process on 1 worker, else one point per
   process of a pool kept for the task's life) against the task's ``workers`` option. Prints the
   seconds of the first round (the pool's start included) and of the next.

Every value is checked to be identical, bit for bit, to the plain loop's. With ``--record``,
the figures are appended to the measurements table (``benchmarks/measurements.py``).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat

import numpy as np
import torch

# benchmarks/ is on the path of the scripts in it
from lunar_rounds import near_heuristic, on, pooled_rounds, sample_points, timed
from plain_lunar import plain_mean_reward

from oscbo.tasks.base import build_task
from oscbo.tasks.lunar import HEURISTIC_WEIGHTS

LATE, INITIAL = "late round: the heuristic, 4 points near it", "initial design: 4 uniform points"


def best_of(repeats, evaluate, points):
    runs = [timed(evaluate, points) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[0][1]


def box2d_share(evaluate, points):
    """The share of ``evaluate(points)``'s seconds in this process spent in Box2D's
    ``b2World.Step`` (the physics, its contact callbacks included), the step timed meanwhile."""
    import Box2D

    step, spent, clock = Box2D.b2World.__dict__["Step"], [0.0], time.perf_counter

    def timed_step(world, *args):
        start = clock()
        step(world, *args)
        spent[0] += clock() - start

    Box2D.b2World.Step = timed_step
    try:
        seconds, _ = timed(evaluate, points)
    finally:
        Box2D.b2World.Step = step
    return spent[0] / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="append the figures to benchmarks/measurements.csv")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    late = [list(HEURISTIC_WEIGHTS), *near_heuristic(rng, 4)]
    initial = rng.uniform(0, 2, size=(4, 12)).tolist()
    round_points = sample_points(rng, args.points)

    def plain(points):
        return [plain_mean_reward(w, args.episodes) for w in points]

    task = build_task("lunar12", episodes=args.episodes)
    on(task)(late[:1])  # warm-up: the simulator built, first-call overheads
    print(f"one evaluation ({args.episodes} episodes, best of {args.repeats}), one process, 1 worker, seconds:")
    figures, ratios = [], {}
    for kind, points in [(LATE, late), (INITIAL, initial)]:
        plain_seconds, expected = best_of(args.repeats, plain, points)
        task_seconds, values = best_of(args.repeats, on(task), points)
        assert values == expected, f"the task's values differ from the plain loop's ({kind})"
        plain_seconds, task_seconds = plain_seconds / len(points), task_seconds / len(points)
        ratio = ratios[kind] = plain_seconds / task_seconds
        print(
            f"  {kind}: plain loop {plain_seconds:6.3f}, lunar12 {task_seconds:6.3f}; ratio (plain / task) {ratio:5.2f}"
        )
        name = f"lunar12 evaluation ({args.episodes} episodes), {kind}, 1 worker"
        figures += [
            (f"{name}: plain gymnasium loop, best of {args.repeats}", plain_seconds, "s"),
            (f"{name}: lunar12, best of {args.repeats}", task_seconds, "s"),
            (f"{name}: plain loop / lunar12", ratio, "ratio"),
        ]
    share = box2d_share(on(task), late)
    ceiling = ratios[LATE] / share  # the late round's ratio, had lunar12 nothing but Box2D's step to do
    print(f"  late round: Box2D's b2World.Step {share:.0%} of lunar12's time; ratio were all else free {ceiling:5.2f}")
    name = f"lunar12 evaluation ({args.episodes} episodes), {LATE}, 1 worker"
    figures += [
        (f"{name}: Box2D b2World.Step's share of lunar12's time (one more evaluation, timed)", share, "ratio"),
        (f"{name}: plain loop / lunar12 were all but Box2D b2World.Step free", ceiling, "ratio"),
    ]

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
        name = f"lunar12 BO round ({args.points} points, {args.episodes} episodes), {workers} worker(s), later round"
        figures += [
            (f"{name}: plain loop", plain_later, "s"),
            (f"{name}: lunar12", task_later, "s"),
            (f"{name}: plain loop / lunar12", plain_later / task_later, "ratio"),
        ]
        print(
            f"  {workers} worker(s): plain loop {plain_first:6.2f} / {plain_later:6.2f}, "
            f"lunar12 {task_first:6.2f} / {task_later:6.2f}; ratio (plain / task) {plain_later / task_later:5.2f}, "
            f"lunar12 {baseline / task_later:5.2f}x its speed on {args.workers[0]}"
        )

    if args.record:
        from measurements import record

        record(figures)


if __name__ == "__main__":
    main()
