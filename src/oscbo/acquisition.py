"""Acquisition functions and their batched multi-start optimiser (SPEC section 3).

Every UCB-type method scores ``mu(x) + w * sigma(x)``: GP-UCB and OSCBO with
``w = sqrt(beta)``, OCBO with ``w = Phi^-1(q_t)``. :class:`WidthUCB` takes ``w`` per seed.

:func:`maximize` is BoTorch's ``optimize_acqf(q=1, num_restarts=5, raw_samples=20)``, one seed
at a time, with the raw samples drawn from the seed's own Sobol stream. (A batched projected
Adam ascent over all seeds was tried and rejected: from starts in the flat region of a short
lengthscale it stays near them, while L-BFGS-B's line search jumps to far better optima; see
the protocol section of the report.)
"""

from __future__ import annotations

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.models.model import Model
from botorch.optim import optimize_acqf
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor
from torch.quasirandom import SobolEngine


class WidthUCB(AnalyticAcquisitionFunction):
    """``mu(x) + width * sigma(x)`` with a width per seed (latent sigma).

    Args:
        model: a model with batch shape ``S``.
        width: ``S`` (or scalar) widths; ``sqrt(beta)`` for GP-UCB.
    """

    def __init__(self, model: Model, width: Tensor | float) -> None:
        super().__init__(model=model)
        self.register_buffer("width", torch.as_tensor(width))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        mean, sigma = self._mean_and_sigma(X)  # b x S x 1 (one output)
        return mean.squeeze(-1) + self.width * sigma.squeeze(-1)


def sobol_points(count: int, dim: int, seed: int, device: torch.device | None = None) -> Tensor:
    """``count x dim`` scrambled Sobol points in [0, 1]^dim, reproducible from ``seed``."""
    engine = SobolEngine(dim, scramble=True, seed=seed)
    return engine.draw(count, dtype=torch.float64).to(device)


def maximize(acquisition: AcquisitionFunction, raw_points: Tensor, restarts: int) -> tuple[Tensor, Tensor]:
    """Maximise a one-seed acquisition function over [0, 1]^d as the paper does.

    BoTorch's ``optimize_acqf(q=1)``: L-BFGS-B from the ``restarts`` best of the raw points.
    The raw points are passed in (seeded per seed and round) rather than drawn from the
    global random state, so that a seed's choice is reproducible on its own.

    Args:
        acquisition: evaluated at ``b x 1 x d``, returns ``b``.
        raw_points: ``R x d`` raw samples (e.g. :func:`sobol_points`).
        restarts: how many of the best raw points start L-BFGS-B.

    Returns:
        The maximiser (``d``) and its acquisition value (scalar tensor).
    """
    with torch.no_grad():
        values = acquisition(raw_points.unsqueeze(-2))
    starts = raw_points[values.topk(restarts).indices].unsqueeze(-2)
    bounds = torch.stack([torch.zeros_like(raw_points[0]), torch.ones_like(raw_points[0])])
    candidate, value = optimize_acqf(acquisition, bounds=bounds, q=1, num_restarts=restarts, batch_initial_conditions=starts)
    return candidate.squeeze(0), value
