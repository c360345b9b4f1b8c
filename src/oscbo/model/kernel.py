"""The Matérn kernel with unit output scale (paper D.3), on pairwise distances computed once.

A round's lengthscale fit evaluates the kernel on the same inputs 50 times: :class:`Distances`
holds the pairwise differences, and the kernel's lengthscale derivatives follow from the slope of
:func:`matern_with_slope` (used by the hand-written backwards of :mod:`oscbo.model.linalg`).
Every function takes ``batch x n x d`` inputs, the seeds first.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from oscbo.model.rounding import sqrt


class Distances:
    """Pairwise differences of two point sets, computed once for many lengthscales.

    A round's lengthscale fit evaluates the kernel on the same inputs 50 times; the
    ``d x n x m`` squared differences are its costliest part and do not depend on theta.

    Args:
        x1: ``batch x n x d`` points; x2: ``batch x m x d`` points (batch dimensions broadcast).
    """

    def __init__(self, x1: Tensor, x2: Tensor) -> None:
        # batch x d x n x m: each dimension's n x m block contiguous, for ARD's weighted sum
        self.squares = (x1.mT.unsqueeze(-1) - x2.mT.unsqueeze(-2)).pow(2)
        self.squared = self.squares.sum(-3)  # batch x n x m
        # The floor keeps the gradient of sqrt finite at r = 0 (it is multiplied by a zero there).
        self.euclidean = sqrt(self.squared.clamp_min(1e-36))

    def scaled(self, lengthscale: Tensor) -> Tensor:
        """``batch x n x m`` distances ``r = sqrt(sum_k (x_k - x'_k)^2 / theta_k^2)``.

        Args:
            lengthscale: ``batch x 1 x k`` with ``k = 1`` (isotropic) or ``k = d`` (ARD).
        """
        if lengthscale.shape[-1] == 1:
            return self.euclidean / lengthscale
        return sqrt((self.squares / lengthscale.mT.unsqueeze(-1).pow(2)).sum(-3).clamp_min(1e-36))


def matern_with_slope(r: Tensor, nu: float) -> tuple[Tensor, Tensor]:
    """The Matérn correlation with unit output scale at scaled distances ``r`` (paper D.3), and
    ``q = -(dk/dr) / r``, from which the kernel's lengthscale derivatives follow:
    ``dk/dtheta_k = q (x_k - x'_k)^2 / theta_k^3``."""
    if nu == 0.5:
        e = torch.exp(-r)
        return e, e / r
    if nu == 1.5:
        scaled = math.sqrt(3) * r
        e = torch.exp(-scaled)
        return (1 + scaled) * e, 3 * e
    if nu == 2.5:
        scaled = math.sqrt(5) * r
        e = torch.exp(-scaled)
        polynomial = 1 + scaled
        return (polynomial + scaled.pow(2) / 3) * e, (5 / 3) * polynomial * e
    raise ValueError(f"nu must be 0.5, 1.5 or 2.5, got {nu}")


def matern(r: Tensor, nu: float) -> Tensor:
    """The Matérn correlation with unit output scale at scaled distances ``r`` (paper D.3)."""
    return matern_with_slope(r, nu)[0]


def matern_covariance(x1: Tensor | Distances, x2: Tensor | None, lengthscale: Tensor, nu: float) -> Tensor:
    """Matérn covariance with unit output scale (paper D.3).

    Args:
        x1: ``batch x n x d`` inputs, or the :class:`Distances` of x1 to x2 (then ``x2`` is None).
        x2: ``batch x m x d`` inputs.
        lengthscale: ``batch x 1 x k`` with ``k = 1`` (isotropic) or ``k = d`` (ARD).
        nu: smoothness, 0.5, 1.5 or 2.5.

    Returns:
        ``batch x n x m`` covariance matrix (batch dimensions broadcast).
    """
    distances = x1 if isinstance(x1, Distances) else Distances(x1, x2)
    return matern(distances.scaled(lengthscale), nu)


def lengthscale_gradient(weighted: Tensor, distances: Distances, lengthscale: Tensor) -> Tensor:
    """``dF/dtheta_k = sum_ij dF/dK_ij q_ij (x_ik - x_jk)^2 / theta_k^3`` (see :func:`matern_with_slope`).

    Args:
        weighted: ``batch x n x m``: dF/dK times the slope ``q`` of the kernel.
        distances: the kernel's :class:`Distances`.
        lengthscale: ``batch x k``.

    Returns:
        ``batch x k``.
    """
    cube = lengthscale.pow(3)
    if lengthscale.shape[-1] == 1:
        return (weighted * distances.squared).flatten(-2).sum(-1, keepdim=True) / cube
    return (weighted.unsqueeze(-3) * distances.squares).flatten(-2).sum(-1) / cube
