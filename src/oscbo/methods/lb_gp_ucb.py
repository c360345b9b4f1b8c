"""LB-GP-UCB (Ziomek et al., 2024; paper D.1, Table S1): lengthscale balancing.

A growing grid of ever shorter lengthscale candidates, each treated as an arm: each round the
live candidate with the smallest regret bound R^theta(|S^theta| + 1) is played (its UCB chooses
x_t), and a candidate whose upper bound falls below the best lower bound is eliminated.
Per round t = 1..T of the engine:

* :meth:`LBGPUCB.lengthscale` grows the grid to Theta_t and plays theta_{t-1}, the argmin of R;
* :meth:`LBGPUCB.observe` files (y_t, sqrt(beta) sigma_{t-1}(x_t)) under the candidate played
  and runs the elimination test.

The rules follow Table S1 and the authors' released code (github.com/JuliuszZiomek/LB-GP-UCB,
``utils/_hb_ucb.py``, ``run.py``: "the released code" below). Where they leave room (each
reading is a row of the report's protocol):

* Grid. Theta_t holds q(i) = theta_0 e^(-i/d) for every i with q(i) >= theta_0 / g_t, i.e.
  i <= d ln g_t, less the eliminated ones; the candidate that chooses x_t is taken from Theta_t
  (g_t of the same round, as A-GP-UCB's theta_0 / g_t). Table S1's "add q(l+1) when
  q(l+1) <= theta_0 / g_t" is read with the inequality turned round: taken literally it would
  add q(1) < theta_0 = theta_0 / g_1 at once and never stop, and the released code adds while
  q(l+1) > theta_0 / g(t). Every new candidate that qualifies is added at once (two or more at
  t = 6 when d >= 2); the released code adds at most one per round. With g_t = 1 up to t0 = 5
  the grid starts as {theta_0}; the released code starts with five candidates (its
  g_t = max(e^(5/(d+5)), sqrt(t))).
* Floor. A candidate below theta_min (``settings.lengthscale_bounds[0]``, 1e-4 in the
  registry) is never added; the grid is not padded with copies of theta_min.
* Ratio. e^(-1/d), Table S1's; the released code uses e^(-1/(d + 2 nu)) for Matérn kernels.
* Selection ties. R^theta(1) = 0 for every unplayed candidate (ln 1 = 0), so a new candidate is
  played at once; among ties the first in grid order (the longest lengthscale) is played, as
  ``torch.argmin`` does in the released code.
* Elimination, the released rule (``Is_u_below_Lt_max`` and ``Lt``). After round t, once every
  live candidate has been played, theta is eliminated when its upper bound is below the best
  lower bound::

      U(theta) = mean_S(y) + mean_S(sqrt(beta) sigma_{tau-1}(x_tau)) + sqrt(xi_t / |S|)
      L(theta) = mean_S(y) - sqrt(xi_t / |S|)
      eliminate theta  if  U(theta) < max_theta' L(theta')

  with xi_t = 2 sigma^2 log(|Theta_t| pi^2 t^2 / (6 delta)), |Theta_t| the live candidates
  before the test and t the round just observed. U >= L, so the candidate with the best lower
  bound always survives and the grid never empties. (The released code's ``beta`` multiplies
  sigma itself: it is this sqrt(beta).)
* y. Standardised with the statistics of D_t at each test (recomputed every round, as the
  engine standardises everything); the released code uses D_{t-1}'s statistics.
* sigma. The latent posterior std at x_tau under the posterior that chose it (the record's
  ``sigma`` column), taken from the model that :meth:`LBGPUCB.posterior` built, rather than by
  inverting L^s (exact, no round trip through a log). The released code uses the predictive
  std including noise; the width of every UCB here uses the latent std (paper D.1).
* ARD. With k = d lengthscales theta^-d becomes prod_j theta_j^-1 (the same for isotropic).

Records: ``candidate_index`` (the i of the q(i) played) and ``candidates_alive`` (|Theta_t|).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from oscbo.methods.a_gp_ucb import T0, growth
from oscbo.methods.base import Feedback, Method, Observations
from oscbo.model.gp import GaussianProcess
from oscbo.model.rounding import sqrt
from oscbo.settings import Settings


def regret_bound(plays: int, lengthscale: Sequence[float], dim: int, C: float, B: float) -> float:
    """R^theta(m) = C sqrt(m gamma) (sqrt(gamma) + B), gamma = theta^-d ln(m)^(d+1), at m plays (the
    LB-GP-UCB paper writes T for m; here T is the run's budget).

    Args:
        plays: m, the number of plays, |S^theta| + 1 at selection.
        lengthscale: theta, one value (isotropic) or d values (ARD: theta^-d = prod theta_j^-1).
        dim: d.
    """
    inverse_volume = math.exp(-dim / len(lengthscale) * math.fsum(math.log(v) for v in lengthscale))
    gamma = inverse_volume * math.log(plays) ** (dim + 1)
    return C * math.sqrt(plays * gamma) * (math.sqrt(gamma) + B)


@dataclass
class Candidate:
    """One lengthscale q(i) of one seed and the rounds at which it was played.

    Attributes:
        index: i of q(i) = theta_0 e^(-i/d).
        lengthscale: ``k`` q(i).
        rows: positions in the data (query order) of the x_tau it chose, tau in S^theta.
        widths: sqrt(beta) sigma_{tau-1}(x_tau) at those rounds.
    """

    index: int
    lengthscale: Tensor
    rows: list[int] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)


def eliminate(live: list[Candidate], y: Sequence[float], t: int, noise_var: float, delta: float) -> list[Candidate]:
    """The candidates that survive the test after round t (all of them while one is unplayed).

    theta goes when U(theta) < max L (module docstring; the released code's rule).

    Args:
        live: one seed's live candidates, Theta_t.
        y: that seed's observations, standardised with D_t's statistics, in query order.
        t: the round just observed.
        noise_var: sigma^2 in xi_t.
        delta: confidence in xi_t.
    """
    if any(not c.rows for c in live):
        return live
    xi = 2 * noise_var * math.log(len(live) * math.pi**2 * t**2 / (6 * delta))

    def mean(values: Sequence[float]) -> float:
        return math.fsum(values) / len(values)

    means = [mean([y[r] for r in c.rows]) for c in live]
    radii = [math.sqrt(xi / len(c.rows)) for c in live]
    best_lower = max(m - r for m, r in zip(means, radii))
    return [c for c, m, r in zip(live, means, radii) if not m + mean(c.widths) + r < best_lower]


class LBGPUCB(Method):
    """LB-GP-UCB: the UCB (beta = 2) of the live lengthscale with the smallest regret bound."""

    name = "lb-gp-ucb"

    #: C of R^theta, Table S1 / the original run.py (it only sets R's scale against B).
    C = 0.01
    #: B, the RKHS norm bound in R^theta (Table S1).
    B = 1.0
    #: t0 of g_t: the grid stays {theta_0} up to round t0 (Table S1, as A-GP-UCB).
    T0 = T0
    #: delta of xi_t, the confidence of the elimination test (Table S1).
    DELTA = 0.1

    def __init__(self, settings: Settings, budget: int, seeds: Sequence[int]) -> None:
        super().__init__(settings, budget, seeds)
        self.model: GaussianProcess | None = None

    def start(self, data: Observations) -> None:
        super().start(data)  # theta_0 by MLL on D_0, clipped to [theta_min, 10]
        n_seeds, _, self.dim = data.X.shape
        self.theta0 = self.theta
        self.live: list[list[Candidate]] = [[] for _ in range(n_seeds)]
        self.created = [0] * n_seeds  # candidates q(0..created-1) exist or existed
        self.chosen: list[Candidate] = []

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        for seed_index in range(len(self.live)):
            self._grow(seed_index, t)
        self.chosen = [self._select(live) for live in self.live]
        self.theta = torch.stack([c.lengthscale for c in self.chosen])
        return self.theta

    def _select(self, live: list[Candidate]) -> Candidate:
        """argmin over Theta_t of R^theta(|S^theta| + 1); ties: the first, the longest."""
        bounds = [regret_bound(len(c.rows) + 1, c.lengthscale.tolist(), self.dim, self.C, self.B) for c in live]
        return live[min(range(len(live)), key=bounds.__getitem__)]

    def _grow(self, seed_index: int, t: int) -> None:
        """Add every q(i) >= max(theta_0 / g_t, theta_min) not yet created to the grid of the batch's
        ``seed_index``-th seed."""
        theta0 = self.theta0[seed_index]
        shortest = theta0.min().item()
        theta_min = self.settings.lengthscale_bounds[0]
        log_growth = math.log(growth(t, self.T0))

        def wanted(i: int) -> bool:
            return i / self.dim <= log_growth and shortest * math.exp(-i / self.dim) >= theta_min

        while wanted(i := self.created[seed_index]):
            self.live[seed_index].append(Candidate(i, theta0 * math.exp(-i / self.dim)))
            self.created[seed_index] += 1

    def posterior(self, data: Observations, theta: Tensor) -> GaussianProcess:
        self.model = super().posterior(data, theta)  # kept for sigma_{t-1}(x_t) in observe
        return self.model

    def observe(self, t: int, data: Observations, feedback: Feedback) -> None:
        with torch.no_grad():
            _, variance = self.model.predict(data.X[..., -1:, :])
        widths = (math.sqrt(self.settings.beta) * sqrt(variance.squeeze(-1))).tolist()
        y = data.standardized().tolist()
        for seed_index, candidate in enumerate(self.chosen):
            candidate.rows.append(data.n - 1)
            candidate.widths.append(widths[seed_index])
            self.live[seed_index] = eliminate(
                self.live[seed_index], y[seed_index], t, self.settings.noise_var, self.DELTA
            )

    def state(self) -> dict[str, Tensor | list[str]]:
        return {
            "candidate_index": torch.tensor([c.index for c in self.chosen]),
            "candidates_alive": torch.tensor([len(live) for live in self.live]),
        }
