"""GP-UCB-MLL (Srinivas et al., 2010; paper D.1): refit the lengthscale by MLL every round."""

from __future__ import annotations

from torch import Tensor

from oscbo.methods.base import Method, Observations


class GPUCBMLL(Method):
    """theta_{t-1} maximises the marginal likelihood of D_{t-1}; UCB with beta = 2.

    Round 1 plays theta_0 (BoTorch's MLL fit on the initial design). Later rounds refit
    with Adam (lr 0.01, 50 steps) on log-lengthscale, warm-started from the last value.
    """

    name = "gp-ucb-mll"

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        if t > 1:
            self.theta = self.refit_mll(data.X, data.standardized())
        return self.theta
