"""What the pinned numerical code path costs, against the machine's own kernels, in one run.

    python benchmarks/code_path.py [--task hartmann6] [--methods gp-ucb-mll oscbo] [--seeds 20] [--budget 100]

Each method runs one lockstep job of ``--seeds`` seeds twice, each time in a fresh single-threaded
process (imports excluded from its time): once on the pinned path (``oscbo.reproducibility``: MKL
``COMPATIBLE``, torch AVX2, OpenBLAS Haswell, NumPy at most AVX2) and once on the machine's own
kernels with MKL's CNR mode as the engine used before the pin (``OSCBO_NUMERICS=native``,
``MKL_CBWR=AUTO,STRICT``). Prints both times, their ratio, and whether the two records agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

NATIVE = {"OSCBO_NUMERICS": "native", "MKL_CBWR": "AUTO,STRICT"}
CHILD = """
import json, sys, time
import oscbo
from oscbo import reproducibility
from oscbo.run import run
task, method, seeds, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tic = time.perf_counter()
result = run(task, method, list(range(seeds)), budget=budget, n_init=10)
seconds = time.perf_counter() - tic
y = [float(v) for seed in sorted(result.tables) for v in result.tables[seed]["y"]]
print(json.dumps({"seconds": seconds, "path": reproducibility.code_path()["summary"], "y": y}))
"""


def measure(task: str, method: str, seeds: int, budget: int, env: dict[str, str]) -> dict:
    """One job in a fresh process under ``env`` (added to this one's environment)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, task, method, str(seeds), str(budget)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="hartmann6")
    parser.add_argument("--methods", nargs="+", default=["gp-ucb-mll", "oscbo"])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=100)
    args = parser.parse_args(argv)
    clean = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "OSCBO_NUMERICS")}
    os.environ.clear()
    os.environ.update(clean)
    print(f"{args.task}, {args.seeds} seeds x {args.budget} BO rounds, one job per method and path")
    print(f"{'method':<12} {'pinned s':>9} {'native s':>9} {'ratio':>6}  records  paths")
    for method in args.methods:
        pinned = measure(args.task, method, args.seeds, args.budget, {})
        native = measure(args.task, method, args.seeds, args.budget, NATIVE)
        same = "equal" if pinned["y"] == native["y"] else "differ"
        print(
            f"{method:<12} {pinned['seconds']:9.1f} {native['seconds']:9.1f} "
            f"{pinned['seconds'] / native['seconds']:6.3f}  {same:<7}  {pinned['path']} | {native['path']}"
        )


if __name__ == "__main__":
    main()
