"""How much OCBO's standing depends on the task's evaluation noise, which the paper does not state.

    python benchmarks/ocbo_noise.py [--task hartmann3] [--seeds 10] [--budget 100] [--noise 0 0.1]

OCBO recalibrates its UCB width to Phi^-1(q_t), q_t the 0.9-quantile of the leave-one-out PIT
values. On a noise-free task the GP's fixed sigma^2 = 0.01 is larger than the residuals it comes
to see, the PIT values crowd round 0.5 and so does q_t: the width shrinks towards 0. This runs
OCBO and GP-UCB-MLL on the same seeds at each noise level (``oscbo.run.run(noise_std=...)``) and
prints the median final simple regret (of the noise-free f), the median cumulative regret and, for
OCBO, the median q_t and width Phi^-1(q_t) over the last 20 rounds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import norm

from oscbo import run as engine

#: The rounds at the end of a run over which q_t is summarised ("late in the run").
LATE = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="hartmann3")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.1])
    args = parser.parse_args()
    engine.limit_threads(1)
    seeds = list(range(args.seeds))
    for noise_std in args.noise:
        for method in ("ocbo", "gp-ucb-mll"):
            tic = time.perf_counter()
            result = engine.run(args.task, method, seeds, budget=args.budget, n_init=10, noise_std=noise_std)
            bo = [table[table["phase"] == "bo"] for table in result.tables.values()]
            simple = np.median([b["simple_regret"].iloc[-1] for b in bo])
            cumulative = np.median([b["cumulative_regret"].iloc[-1] for b in bo])
            line = (
                f"{args.task} noise_std {noise_std:g} {method:>10}: median final simple regret {simple:.4g}, "
                f"median cumulative regret {cumulative:.4g}"
            )
            if method == "ocbo":
                late = np.median([b["quantile_level"].iloc[-LATE:].median() for b in bo])
                line += f", median q_t over the last {LATE} rounds {late:.3f} (width {norm.ppf(late):.3f})"
            print(f"{line} ({time.perf_counter() - tic:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
