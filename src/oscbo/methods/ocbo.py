"""OCBO (Deshpande et al., 2025; paper D.1, Table S1): recalibrate the UCB width by LOO-PIT.

Each round t, on the posterior that chooses x_t:

1. the lengthscale is refit by MLL, exactly as GP-UCB-MLL;
2. the leave-one-out predictive of every observation, in closed form from
   ``A = (K + sigma^2 I)^-1`` (Rasmussen & Williams, 2006, eqs. 5.10-5.12):
   ``mu_-i = y_i - [A y]_i / A_ii`` and ``s2_-i + sigma^2 = 1 / A_ii``;
3. the probability integral transforms ``u_i = Phi((y_i - mu_-i) / sqrt(s2_-i + sigma^2))``;
4. the calibrated level ``q_t`` = empirical 0.9-quantile of the ``u_i``, clipped to
   [1e-4, 1 - 1e-4] (0.9 itself while fewer than 3 observations exist);
5. the acquisition ``mu(x) + Phi^-1(q_t) sigma(x)`` with the latent sigma.

The empirical quantile is ``torch.quantile``'s default, linear interpolation between order
statistics (numpy's default, type 7 of Hyndman & Fan, 1996).
"""

from __future__ import annotations

import torch
from torch import Tensor

from oscbo.methods.base import Observations
from oscbo.methods.gp_ucb_mll import GPUCBMLL
from oscbo.model.gp import GaussianProcess
from oscbo.model.rounding import matvec, sqrt

#: Below this many observations there is no recalibration and q_t = p (Table S1).
MIN_CALIBRATION = 3
#: q_t is clipped to [CLIP, 1 - CLIP] so that Phi^-1(q_t) stays finite (|width| <= 3.72).
CLIP = 1e-4


def leave_one_out(factor: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Closed-form leave-one-out predictive of each observation, per seed.

    Args:
        factor: ``S x n x n`` lower Cholesky factors ``L`` of ``K + sigma^2 I``.
        y: ``S x n`` standardised targets.

    Returns:
        ``S x n`` means ``mu_-i(x_i)`` and ``S x n`` observation-level variances
        ``s2_-i(x_i) + sigma^2``, each from the GP on the other ``n - 1`` points.
    """
    precision = torch.cholesky_inverse(factor)  # A = (K + sigma^2 I)^-1
    diagonal = precision.diagonal(dim1=-2, dim2=-1)
    mean = y - matvec(precision, y) / diagonal
    return mean, 1 / diagonal


def calibrated_level(factor: Tensor, y: Tensor, level: float) -> Tensor:
    """q_t per seed: the empirical ``level``-quantile of the LOO-PIT values, clipped.

    Args:
        factor: ``S x n x n`` Cholesky factors of ``K + sigma^2 I``; y: ``S x n`` standardised
            targets.
        level: the target coverage p = 1 - delta (Table S1: 0.9).

    Returns:
        ``S`` levels in [CLIP, 1 - CLIP].
    """
    if y.shape[-1] < MIN_CALIBRATION:
        return torch.full(y.shape[:-1], level, dtype=y.dtype, device=y.device)
    mean, variance = leave_one_out(factor, y)
    pit = torch.special.ndtr((y - mean) / sqrt(variance))
    return torch.quantile(pit, level, dim=-1).clamp(CLIP, 1 - CLIP)


class OCBO(GPUCBMLL):
    """GP-UCB-MLL's lengthscale with the width ``Phi^-1(q_t)`` recalibrated each round.

    q_t is computed when the round's posterior is built: the engine then asks for the :meth:`width`
    and, after it, the :meth:`state` to record, and both read that same q_t.

    Attributes:
        quantile_level: ``S`` q_t of this round, set by :meth:`posterior`, read by :meth:`width`
            and recorded by :meth:`state`.
    """

    name = "ocbo"

    def posterior(self, data: Observations, theta: Tensor) -> GaussianProcess:
        model = super().posterior(data, theta)
        self.quantile_level = calibrated_level(model.whitened.factor, model.train_y, 1 - self.settings.delta)
        return model

    def width(self, model: GaussianProcess) -> Tensor:
        """``S`` widths Phi^-1(q_t) of this round's posterior."""
        return torch.special.ndtri(self.quantile_level)

    def state(self) -> dict[str, Tensor | list[str]]:
        return {"quantile_level": self.quantile_level.clone()}
