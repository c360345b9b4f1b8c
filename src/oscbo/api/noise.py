"""Noisy objectives, as BO users expect them: the regret from the noiseless value where the
problem knows it, a BoTorch problem's noise drawn from the run's own seeded stream, and the best
point chosen by the model's posterior mean among the evaluated points.

A noisy observation can beat every noiseless value (a "best" read from the observations is the
luckiest draw, not the best point), so for a noisy run :class:`Best` is the evaluated point with
the highest posterior mean under the last round's model, as Ax's and BoTorch's tutorials report
it, with the best observed value beside it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from oscbo.methods.base import Method, Observations
from oscbo.seeding import stable_seed


class Best(NamedTuple):
    """The best point told so far, in the objective's units and sign.

    Attributes:
        x: the point; y: its observed value; by: how it was chosen, ``observed`` (the best value
            told: a noise-free objective) or ``posterior mean`` (a noisy one: the highest posterior
            mean among the evaluated points); f: its noiseless value where known (else None);
            best_observed: the best value told at any point (a noisy run's luckiest draw).
    """

    x: np.ndarray
    y: float
    by: str = "observed"
    f: float | None = None
    best_observed: float | None = None


def botorch_noisy(problem: Any, name: str, seed: int) -> Any:
    """``x -> (y, f)`` for a BoTorch test problem with observation noise: ``f`` its noiseless value
    (``problem(x, noise=False)``, negated as the problem is), ``y`` that plus ``noise_std`` times a
    standard normal drawn from the run's own stream (seeded by the objective's name and the seed,
    not torch's global generator), so one seed repeats the run."""
    generator = torch.Generator().manual_seed(stable_seed("observation-noise", name, seed))
    std = float(problem.noise_std)

    def evaluate(x: np.ndarray) -> tuple[float, float]:
        f = float(problem(torch.as_tensor(x, dtype=problem.bounds.dtype), noise=False))
        return f + std * float(torch.randn((), generator=generator, dtype=torch.float64)), f

    return evaluate


def highest_mean(method: Method, data: Observations, lengthscale: Tensor) -> int:
    """The index of the evaluated point (of seed 0's ``data``) with the highest posterior mean under
    the method's model at ``lengthscale`` (``1 x k``), the last round's."""
    with torch.no_grad():
        mean, _ = method.posterior(data, lengthscale).predict(data.X)
    return int(torch.argmax(mean[0]))


def best(table: pd.DataFrame, points: np.ndarray, sign: float, highest: int | None) -> Best:
    """The best of a run's ``table`` (its record, in the objective's sign; ``points``: its x in the
    objective's units): the point at ``highest`` (a noisy run's highest posterior mean), or where
    none is given the best value told; the best value told beside it either way."""
    y, f = table["y"].to_numpy(dtype=float), table["f"].to_numpy(dtype=float)
    observed = int(np.argmax(sign * y))
    i, by = (observed, "observed") if highest is None else (highest, "posterior mean")
    return Best(points[i], float(y[i]), by, float(f[i]), float(y[observed]))
