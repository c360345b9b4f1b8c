"""Acquisition functions and their batched multi-start optimiser (paper D.1, Table S1).

Every UCB-type method scores ``mu(x) + w * sigma(x)``: GP-UCB and OSCBO with
``w = sqrt(beta)``, OCBO with ``w = Phi^-1(q_t)``. :func:`ucb` and :func:`log_ei` are the
scores on a posterior's mean and variance.

:func:`maximize` is BoTorch's ``optimize_acqf(q=1, num_restarts=5, raw_samples=20)`` for all
seeds at once: each seed's raw samples come from its own Sobol stream, and the 5 best of
them start BoTorch's batched L-BFGS-B, which runs every (seed, restart) problem as an
independent L-BFGS-B with its own state and stopping rule and only evaluates them together.
(A batched projected Adam ascent was tried and rejected: from starts in the flat region of
a short lengthscale it stays near them, while L-BFGS-B's line search jumps to far better
optima; see the protocol section of the report.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from botorch.acquisition.analytic import _log_ei_helper
from botorch.optim.batched_lbfgs_b import fmin_l_bfgs_b_batched
from torch import Tensor

from oscbo.model.rounding import sqrt

#: BoTorch's floor on the posterior variance of analytic acquisition functions.
MIN_VARIANCE = 1e-12
#: ``gen_candidates_scipy``'s iteration limit (``optimize_acqf``'s default).
MAXITER = 2000

#: ``A x B x d`` points of the seeds with the ``A`` given indices (all ``S`` seeds: ``None``)
#: -> ``A x B`` acquisition values.
Score = Callable[[Tensor, Tensor | None], Tensor]


def ucb(mean: Tensor, variance: Tensor, width: Tensor) -> Tensor:
    """``mu + width * sigma`` (``width`` broadcasts from the left, e.g. ``S x 1``)."""
    return mean + width * sqrt(variance.clamp_min(MIN_VARIANCE))


def log_ei(mean: Tensor, variance: Tensor, best: Tensor) -> Tensor:
    """BoTorch's ``LogExpectedImprovement`` over ``best`` (maximisation), from mean and variance."""
    sigma = sqrt(variance.clamp_min(MIN_VARIANCE))
    return _log_ei_helper((mean - best) / sigma) + sigma.log()


def maximize(score: Score, raw_points: Tensor, restarts: int) -> tuple[Tensor, Tensor]:
    """Maximise each seed's acquisition over [0, 1]^d as the paper does.

    BoTorch's ``optimize_acqf(q=1)``: L-BFGS-B from the ``restarts`` best raw points of each
    seed, the best end point per seed. The raw points are passed in (seeded per seed and
    round) rather than drawn from the global random state, so that a seed's choice is
    reproducible on its own.

    Each call evaluates the seeds with a problem still running, all ``restarts`` problems of
    each (the finished ones at their end points): a problem's value and gradient are then
    bitwise independent of how far the others have got, and of which other seeds are scored.

    Args:
        score: see :data:`Score`; differentiable.
        raw_points: ``S x R x d`` raw samples (e.g. :func:`oscbo.seeding.sobol_points` per seed).
        restarts: how many of each seed's best raw points start L-BFGS-B.

    Returns:
        The maximisers (``S x d``) and their acquisition values (``S``).
    """
    n_seeds, _, d = raw_points.shape
    with torch.no_grad():
        best = score(raw_points, None).topk(restarts, dim=-1).indices
    current = raw_points.gather(-2, best.unsqueeze(-1).expand(n_seeds, restarts, d)).clone()
    flat = current.view(n_seeds * restarts, d)  # a view: writing it moves the problems

    def negative_score(x: np.ndarray, batch_indices: list[int]) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            flat[batch_indices] = torch.from_numpy(x.reshape(-1, d)).to(flat)
        seeds = sorted({i // restarts for i in batch_indices})
        rows = torch.tensor(seeds, device=current.device)
        points = current[rows].requires_grad_(True)
        values = -score(points, None if len(seeds) == n_seeds else rows)
        (gradient,) = torch.autograd.grad(values.sum(), points)
        if not torch.isfinite(gradient).all():
            raise FloatingPointError("the acquisition's gradient is not finite")
        position = {seed: row for row, seed in enumerate(seeds)}
        wanted = torch.tensor([position[i // restarts] * restarts + i % restarts for i in batch_indices])
        return (
            values.detach().reshape(-1)[wanted].cpu().numpy(),
            gradient.reshape(-1, d)[wanted].cpu().numpy().reshape(x.shape),
        )

    ends, _, _ = fmin_l_bfgs_b_batched(
        negative_score, x0=flat.cpu().numpy(), bounds=[(0.0, 1.0)] * d, maxiter=MAXITER, pass_batch_indices=True
    )
    ends = torch.from_numpy(np.stack(ends)).to(raw_points).clamp(0.0, 1.0).view(n_seeds, restarts, d)
    with torch.no_grad():
        values = score(ends, None)
    index = values.argmax(-1)
    seeds = torch.arange(n_seeds, device=raw_points.device)
    return ends[seeds, index], values[seeds, index]
