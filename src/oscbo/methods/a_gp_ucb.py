"""A-GP-UCB (Berkenkamp et al., 2019; paper D.1, Table S1): shrink the lengthscale on a schedule.

theta_0 is the MLL fit on the initial design (clipped to Theta = [theta_min, 10] with
theta_min = 1e-4, set by the registry). The lengthscale that chooses x_t in BO round t is

    theta = max(theta_0 / g_t, theta_min),   g_t = 1 for t <= t_0, sqrt(t) after,

with no calibration or likelihood feedback; UCB with beta = 2 as in the paper's D.1 (the
original A-GP-UCB also grows beta with g_t; the paper keeps it fixed).
"""

from __future__ import annotations

import math

from torch import Tensor

from oscbo.methods.base import Method, Observations

#: t_0 of Table S1: g_t = 1, so the lengthscale stays at theta_0, for the first 5 rounds.
T0 = 5


def growth(t: int, t0: int = T0) -> float:
    """g_t = 1 for t <= t0, sqrt(t) after (also LB-GP-UCB's schedule)."""
    return 1.0 if t <= t0 else math.sqrt(t)


class AGPUCB(Method):
    """theta_0 / g_t, floored at theta_min = ``settings.lengthscale_bounds[0]``."""

    name = "a-gp-ucb"

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        return (self.theta / growth(t)).clamp_min(self.settings.lengthscale_bounds[0])
