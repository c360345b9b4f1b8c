"""OSCBO's per-round sharpness loss and calibration constraint (paper eqs. 6 and 7).

Both are functions of the observation-level predictive variance ``s2 + sigma^2`` and the
standardised residual ``z = (y - mu) / sqrt(s2 + sigma^2)``. The engine evaluates them at the
query ``x_t`` for every method (the diagnostics); OSCBO's FTPL objective evaluates them at
every past row, where ``s2 + sigma^2 = L_jj^2`` and ``z = (L^-1 y)_j`` (eq. S13).
"""

from __future__ import annotations

import math

from torch import Tensor


def sharpness_loss(predictive_variance: Tensor, noise_var: float) -> Tensor:
    """L^s = log(1 + sigma^-2 s2) / log(1 + sigma^-2), eq. (6); ``predictive_variance = s2 + sigma^2``."""
    return (predictive_variance / noise_var).log() / math.log1p(1 / noise_var)


def calibration_loss(standardized_residual: Tensor, beta: float, power: int) -> Tensor:
    """L^c = |y - mu|^p / (sqrt(beta) sqrt(s2 + sigma^2))^p - 1, eq. (7); <= 0 iff y is covered."""
    return standardized_residual.abs().pow(power) / beta ** (power / 2) - 1


def clipped(calibration: Tensor, clip: bool = True) -> Tensor:
    """L^c clipped to [-1, 1], the utility range the paper's regret minimisers assume (B.2), or
    (``clip`` False) as it is: Algorithm 1 line 17 and eq. S10 use the raw value."""
    return calibration.clamp(-1.0, 1.0) if clip else calibration
