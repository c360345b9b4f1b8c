"""Seconds per seed-run when S seeds share one lockstep job, against one seed per job.

    python benchmarks/seeds_per_job.py [--task hartmann6] [--method oscbo] [--budget 100] [--seeds 20]

Prints the wall-clock of one job of S seeds and of one job of a single seed (the same
seed 0), both single-threaded, and the ratio of seconds per seed-run. Start-up (imports) is
excluded: it is paid once per job in the workflow.
"""

from __future__ import annotations

import argparse
import time

from oscbo import run as engine


def seconds(task: str, method: str, seeds: list[int], budget: int) -> float:
    tic = time.perf_counter()
    engine.run(task, method, seeds, budget=budget, n_init=10)
    return time.perf_counter() - tic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="hartmann6")
    parser.add_argument("--method", default="oscbo")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    engine.limit_threads(1)
    seconds(args.task, args.method, [0], 2)  # warm-up: lazy imports, first-call overheads
    single = seconds(args.task, args.method, [0], args.budget)
    batch = seconds(args.task, args.method, list(range(args.seeds)), args.budget)
    per_seed = batch / args.seeds
    print(f"task {args.task}, method {args.method}, budget {args.budget}, 1 thread")
    print(f"1 seed:    {single:8.2f} s per seed-run")
    print(f"{args.seeds} seeds: {batch:8.2f} s per job, {per_seed:8.2f} s per seed-run")
    print(f"ratio (batched / single, per seed-run): {per_seed / single:.3f}")


if __name__ == "__main__":
    main()
