"""oscbo's one-call API on BoTorch's test problems, beside the plain BoTorch loops a user would write.

    python benchmarks/beside_botorch.py [--seeds 3] [--n-init 10] [--budget 30] [--no-record]

What a researcher tries first: ``oscbo.optimize(problem, budget=30, n_init=10, seed=s)`` on a
``botorch.test_functions`` problem, and beside it BoTorch's own loop as its tutorials write it:
``SingleTaskGP`` (its defaults: Matérn-5/2 with ARD, learned noise, ``Standardize``) on inputs
scaled to the unit cube, ``fit_gpytorch_mll``, then ``UpperConfidenceBound(beta=2)`` or
``LogExpectedImprovement`` maximised by ``optimize_acqf(q=1, num_restarts=10, raw_samples=512)``;
the same budget (10 scrambled Sobol points, then 30 rounds), one thread each, seeded by ``seed``
(BoTorch's noise draws from torch's generator, seeded before its loop). The problems: Branin,
Ackley 4-D, Hartmann 6-D, and Branin with observation noise of standard deviation 1.

The figures, per problem and loop: the final regret of the best noiseless value among the points
evaluated (``problem.evaluate_true``: a noisy run is judged by what it found, not by its luckiest
draw), its mean and its range over the seeds, and the seconds a run took; and per problem each
BoTorch loop's seconds over oscbo's. Run it on an idle machine.
"""

from __future__ import annotations

import oscbo  # isort: skip  (first: it pins the numerical code path before torch starts)

import argparse
import time
import warnings

import torch
from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from botorch.test_functions import Ackley, Branin, Hartmann
from gpytorch.mlls import ExactMarginalLogLikelihood
from measurements import report

#: The problems: (name, problem factory).
PROBLEMS = {
    "Branin": lambda: Branin(),
    "Ackley 4-D": lambda: Ackley(dim=4),
    "Hartmann 6-D": lambda: Hartmann(dim=6),
    "noisy Branin (noise std 1)": lambda: Branin(noise_std=1.0),
}
#: BoTorch's acquisition functions beside oscbo, by the name the figures give them.
ACQUISITIONS = {
    "BoTorch UCB": lambda model, y: UpperConfidenceBound(model, beta=2.0, maximize=False),
    "BoTorch LogEI": lambda model, y: LogExpectedImprovement(model, best_f=y.min(), maximize=False),
}


def botorch_loop(problem, acquisition: str, seed: int, n_init: int, budget: int) -> torch.Tensor:
    """BoTorch's loop as its tutorials write it (minimising, as the problems are): the noiseless
    values of the points it evaluated."""
    torch.manual_seed(seed)
    low, high = problem.bounds.to(torch.float64)
    d = low.numel()
    unit = torch.stack([torch.zeros(d), torch.ones(d)]).to(torch.float64)
    X = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed).draw(n_init).to(torch.float64)
    y = problem(low + (high - low) * X).unsqueeze(-1)
    for _ in range(budget):
        model = SingleTaskGP(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            x, _ = optimize_acqf(ACQUISITIONS[acquisition](model, y), unit, q=1, num_restarts=10, raw_samples=512)
        X = torch.cat([X, x])
        y = torch.cat([y, problem(low + (high - low) * x).unsqueeze(-1)])
    return problem.evaluate_true(low + (high - low) * X)


def oscbo_run(problem, seed: int, n_init: int, budget: int) -> torch.Tensor:
    """``oscbo.optimize`` as a user calls it: the noiseless values of the points it evaluated."""
    run = oscbo.optimize(problem, budget=budget, n_init=n_init, seed=seed, progress=False)
    return torch.as_tensor(run.history["f"].to_numpy(dtype=float, copy=True))  # in the problem's own sign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--budget", type=int, default=30, help="BO rounds after the initial design")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()
    torch.set_num_threads(1)
    figures = []
    for name, make in PROBLEMS.items():
        seconds = {}
        for loop in ["oscbo (OSCBO)", *ACQUISITIONS]:
            regrets, times = [], []
            for seed in range(args.seeds):
                problem = make()
                tic = time.perf_counter()
                if loop in ACQUISITIONS:
                    values = botorch_loop(problem, loop, seed, args.n_init, args.budget)
                else:
                    values = oscbo_run(problem, seed, args.n_init, args.budget)
                times.append(time.perf_counter() - tic)
                regrets.append(float(values.min()) - problem.optimal_value)
            seconds[loop] = sum(times) / len(times)
            what = f"{name}, {args.n_init} + {args.budget} evaluations, {args.seeds} seeds, {loop}"
            figures += [
                (f"{what}: final regret of the best noiseless value, mean", sum(regrets) / len(regrets), "regret"),
                (f"{what}: final regret, lowest seed", min(regrets), "regret"),
                (f"{what}: final regret, highest seed", max(regrets), "regret"),
                (f"{what}: seconds a run", seconds[loop], "s"),
            ]
        figures += [
            (
                f"{name}, {args.n_init} + {args.budget} evaluations: {loop} / oscbo (OSCBO), seconds a run",
                seconds[loop] / seconds["oscbo (OSCBO)"],
                "ratio",
            )
            for loop in ACQUISITIONS
        ]
    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
