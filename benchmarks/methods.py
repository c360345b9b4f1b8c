"""Seconds per seed-run of each method in one lockstep job of S seeds.

    python benchmarks/methods.py [--task hartmann6] [--budget 100] [--seeds 20] [METHOD ...]

Single-threaded, imports excluded; prints one line per method.
"""

from __future__ import annotations

import argparse
import time

from oscbo import engine, methods
from oscbo.methods.base import MethodUnavailableError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("methods", nargs="*", default=methods.names())
    parser.add_argument("--task", default="hartmann6")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    engine.limit_threads(1)
    for method in args.methods:
        try:
            engine.run(args.task, method, [0], budget=2, n_init=10)  # warm-up
        except MethodUnavailableError as error:
            print(f"{method:12s} not run: {error}", flush=True)
            continue
        tic = time.perf_counter()
        engine.run(args.task, method, list(range(args.seeds)), budget=args.budget, n_init=10)
        elapsed = time.perf_counter() - tic
        print(f"{method:12s} {args.task} budget {args.budget}, {args.seeds} seeds: "
              f"{elapsed:7.1f} s per job, {elapsed / args.seeds:6.2f} s per seed-run", flush=True)


if __name__ == "__main__":
    main()
