"""OSCBO: Online Sharp-Calibrated Bayesian Optimization (paper Algorithms 1 and 2).

The lengthscale is the action of a primal regret minimiser (FTPL, appendix B.3) in a
Lagrangian game whose loss is the sharpness L^s (eq. 6) and whose constraint is the
calibration L^c (eq. 7); a dual regret minimiser (OMD with negative entropy, B.4) sets the
multiplier lambda. A play/recovery switch (Algorithm 1, line 8) guards the cumulative
violation. Per round t = 1..T (the engine runs lines 14-15: choose x_t, query y_t):

* line 8-11  :meth:`OSCBO.lengthscale` checks the switch and plays theta_{t-1};
* line 16    :meth:`OSCBO.observe` is RECALIBRATE (Algorithm 2): the dual step (S10 or S9)
  and the FTPL step (S4/S5), which yields theta_t for the next round;
* line 17    V_{t+1} = V_t + L^c_t.

Constants (Table S1; lambda_0, which the paper does not state, is the protocol's): rho^ = 0.5,
delta = 0.1, eta = delta / 3, rho~ =
max(T_rho^(-1/4), rho^/2) with T_rho = 150, omega = 0.001, lambda_0 = 1, FTPL perturbation
N(0, 0.1^2 I) drawn afresh each round, Adam oracle (lr 0.01, 50 steps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from oscbo.methods.base import Feedback, Method, Observations
from oscbo.model.gp import minimize_lengthscale
from oscbo.model.kernel import Distances
from oscbo.model.linalg import whiten
from oscbo.model.losses import calibration_loss, clipped, sharpness_loss
from oscbo.seeding import generator
from oscbo.settings import Settings


def ftpl_objective(
    theta: Tensor,
    X: Tensor | Distances,
    y: Tensor,
    sharpness_weight: Tensor,
    calibration_weight: Tensor,
    perturbation: Tensor,
    settings: Settings,
) -> Tensor:
    """The FTPL objective (S4) of every seed, in the row-by-row form of Proposition B.1 (S5).

    sum_j [ w^s_j L^s_j(theta) + w^c_j L^c_j(theta) ] - <eta, theta>

    In the play phase w^s_j = 1 and w^c_j = lambda_{j-1} for every row, which is S5: the
    sharpness rows sum to (log det(K + sigma^2 I) - n log sigma^2) / log(1 + sigma^-2)
    (S12) and the calibration rows to lambda^T |diag(v) L^-1 y|^p - sum_j lambda_{j-1}
    (S13). Rows outside the current phase carry weight 0. The |.|^p terms are not clipped.

    Args:
        theta: ``S x k`` lengthscale(s), natural units.
        X: ``S x n x d`` inputs in query order (or their :class:`~oscbo.model.kernel.Distances`);
            y: ``S x n`` standardised with the current statistics.
        sharpness_weight, calibration_weight: ``S x n`` row weights.
        perturbation: ``S x k`` FTPL noise eta.

    Returns:
        ``S`` objective values.
    """
    whitened = whiten(X, y, theta, settings.nu, settings.noise_var)
    rows = sharpness_weight * sharpness_loss(whitened.predictive_variance, settings.noise_var) + calibration_weight * (
        calibration_loss(whitened.z, settings.beta, settings.calibration_power)
    )
    return rows.sum(-1) - (perturbation * theta).sum(-1)


def violation_budget(t: int, T: int, settings: Settings) -> float:
    """M_rho~ of eq. (S3) at round t, with R^P_T = R^D_T = sqrt(T) (or the configured value)."""
    if settings.violation_budget is not None:
        return settings.violation_budget
    rho = settings.rho_tilde
    eta = settings.delta / 3
    concentration = math.sqrt(8 * t * math.log(18 * t**2 / eta))  # E_{t, eta}
    regret = math.sqrt(T)
    return 2 / rho * math.sqrt(T) + (2 + 3 / rho) * concentration + (1 + 2 / rho) * regret + regret / rho


def switch_threshold(t: int, T: int, settings: Settings) -> float:
    """Algorithm 1, line 8: recovery starts once V_t > (T - t) rho~ + M_rho~ - 1."""
    return (T - t) * settings.rho_tilde + violation_budget(t, T, settings) - 1


class OSCBO(Method):
    """OSCBO with calibration exponent ``settings.calibration_power`` (p = 2; OSCBO-L1: p = 1)."""

    name = "oscbo"

    def __init__(self, settings: Settings, budget: int, seeds: Sequence[int]) -> None:
        super().__init__(settings, budget, seeds)
        # One perturbation stream per seed keeps seeds independent of their batch.
        self.generators = [generator("oscbo-ftpl", seed) for seed in self.seeds]

    def start(self, data: Observations) -> None:
        super().start(data)  # theta_0 by MLL on D_0
        n_seeds, n = data.y.shape
        like = data.y
        # Play phase (Algorithm 1, lines 3-6): R^D on S_rho~ = [0, 1/rho~] (see cap), lambda_0.
        self.lam = torch.full((n_seeds,), self.settings.lambda0, dtype=like.dtype, device=like.device)
        self.violation = torch.zeros(n_seeds, dtype=like.dtype, device=like.device)  # V_t
        self.recovery = torch.zeros(n_seeds, dtype=torch.bool, device=like.device)
        # FTPL rows: the initial design enters with lambda_0 (protocol: "FTPL row weights").
        self.row_lambda = self.lam.unsqueeze(-1).expand(n_seeds, n).clone()
        self.first_row = torch.zeros(n_seeds, dtype=torch.long, device=like.device)

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        # Line 8-11: switch once, one way, to the recovery phase. The FTPL objective restarts
        # from this round's row and lambda restarts at 1 on Delta = [0, 1]; theta keeps its
        # last value (a fresh FTPL with no history would jump to a corner of Theta).
        switch = ~self.recovery & (self.violation > switch_threshold(t, self.budget, self.settings))
        self.recovery = self.recovery | switch
        self.lam = torch.where(switch, torch.ones_like(self.lam), self.lam)
        self.first_row = torch.where(switch, torch.full_like(self.first_row, data.n), self.first_row)
        return self.theta  # line 12: theta_{t-1}

    @property
    def cap(self) -> Tensor:
        """``S`` upper ends of the dual domain: 1/rho~ on S_rho~ (play), 1 on Delta (recovery)."""
        # full_like keeps lambda's float64 (a Python-scalar torch.where would round 1/rho~ to float32)
        return torch.full_like(self.lam, 1 / self.settings.rho_tilde).masked_fill(self.recovery, 1.0)

    def observe(self, t: int, data: Observations, feedback: Feedback) -> None:
        settings = self.settings
        violation = clipped(feedback.loss_calibration, settings.calibration_clip)
        # Row t of the primal objective is weighted by lambda_{t-1}, the multiplier in force.
        self.row_lambda = torch.cat([self.row_lambda, self.lam.unsqueeze(-1)], dim=-1)
        # Dual RM (S9/S10): grad u^D = -L^c, so lambda_t = min(lambda_{t-1} exp(omega L^c_t), cap).
        self.lam = torch.minimum(self.lam * torch.exp(settings.omega * violation), self.cap)
        self.violation = self.violation + violation  # line 17
        self.theta = self._ftpl(data)

    def _ftpl(self, data: Observations) -> Tensor:
        """Primal RM (S4): approx argmin of the perturbed cumulative utility, by Adam."""
        settings = self.settings
        n_seeds, n = data.y.shape
        active = torch.arange(n, device=data.y.device).unsqueeze(0) >= self.first_row.unsqueeze(-1)
        recovery_sharpness = 1.0 if settings.recovery_utility == "sharpness+calibration" else 0.0
        sharpness_weight = active * torch.where(self.recovery, recovery_sharpness, 1.0).to(data.y).unsqueeze(-1)
        calibration_weight = active * self.row_lambda
        perturbation = torch.stack(
            [
                settings.sigma_eta * torch.randn(self.theta.shape[-1], generator=g, dtype=torch.float64)
                for g in self.generators
            ]
        ).to(self.theta)
        distances, y = Distances(data.X, data.X), data.standardized()
        return minimize_lengthscale(
            lambda theta: ftpl_objective(
                theta, distances, y, sharpness_weight, calibration_weight, perturbation, settings
            ),
            self.theta,
            settings.lengthscale_bounds,
            settings.refit_lr,
            settings.refit_steps,
        )

    def state(self) -> dict[str, Tensor | list[str]]:
        return {
            "lambda": self.lam.clone(),
            "rm_phase": ["recovery" if r else "play" for r in self.recovery.tolist()],
        }
