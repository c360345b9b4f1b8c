"""What a BO method is: a rule for the lengthscale and the width of its acquisition.

The engine owns the loop (data, posterior, acquisition optimisation, oracle, records). Its
contract with a method is the order of the hooks, which a method may rely on:

* once, when the initial design D_0 is observed: :meth:`Method.start`;
* every round ``t = 1..T``, in this order:

  1. :meth:`Method.lengthscale` (t, D_{t-1}) -- theta_{t-1}, the lengthscale that chooses x_t;
  2. :meth:`Method.posterior` (D_{t-1}, theta_{t-1}) -- the round's model (a
     :class:`~oscbo.model.posterior.Posterior`);
  3. :meth:`Method.width` (that model) -- the UCB multiplier of each seed;
  4. :meth:`Method.state` -- what to record of the round (read after ``posterior``: OCBO's q_t,
     computed there, is both its width and its state);
  5. :meth:`Method.propose` -- x_t, the maximiser of :meth:`Method.score` (skipped when the
     caller chooses x_t itself, :class:`oscbo.api.OSCBOLengthscale`);
  6. :meth:`Method.observe` (t, D_t, the feedback) -- once y_t is known (LB-GP-UCB reads the
     model that ``posterior`` built in this round).

All tensors carry a leading seed dimension ``S``; a method must treat seeds independently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from oscbo.model.acquisition import Score, log_ei, maximize, ucb
from oscbo.model.gp import GaussianProcess, fit_initial_lengthscale, minimize_lengthscale
from oscbo.model.kernel import Distances
from oscbo.model.linalg import negative_mll
from oscbo.model.posterior import Posterior
from oscbo.model.rounding import sqrt
from oscbo.settings import Settings


def build_method(
    name: str, settings: Settings, budget: int, seeds: Sequence[int], options: Mapping[str, Any] | None = None
) -> Method:
    """An instance of registered method ``name`` with its defining settings applied on top of
    ``settings``, and ``options``, its own settings (keyword arguments of its class), checked
    against the class's parameters (:meth:`oscbo.registry.Entry.check_options`)."""
    from oscbo.methods import METHOD_ARGUMENTS, REGISTRY

    entry = REGISTRY[name]
    if options:
        entry.check_options(options, METHOD_ARGUMENTS)
    method = entry.load()(settings.replace(**entry.settings), budget, seeds, **(options or {}))
    method.name = name
    return method


class MethodUnavailableError(RuntimeError):
    """A method cannot run on this machine (e.g. TabICLv2 without its checkpoint).

    Raised before any BO round; the workflow records the job as not run and goes on.
    """


@dataclass(frozen=True)
class Observations:
    """The data seen so far, per seed, in query order (initial design first).

    Attributes:
        X: ``S x n x d`` inputs in [0, 1]^d.
        y: ``S x n`` observed values, raw units.
    """

    X: Tensor
    y: Tensor

    @property
    def n(self) -> int:
        return self.X.shape[-2]

    def statistics(self) -> tuple[Tensor, Tensor]:
        """Per-seed mean and (unbiased) std of y; a zero std is replaced by 1.

        The std is written out: ``torch.std``'s kernel rounds a row differently in a batch.
        """
        mean = self.y.mean(-1)
        if self.n > 1:
            std = sqrt((self.y - mean.unsqueeze(-1)).pow(2).sum(-1) / (self.n - 1))
        else:
            std = torch.ones_like(mean)
        return mean, torch.where(std > 0, std, torch.ones_like(std))

    def standardized(self) -> Tensor:
        """``S x n`` y standardised with the statistics of the data seen so far (protocol: "Input / output scaling")."""
        mean, std = self.statistics()
        return (self.y - mean.unsqueeze(-1)) / std.unsqueeze(-1)


@dataclass(frozen=True)
class Feedback:
    """What round t revealed, per seed (``S``), under the posterior that chose x_t.

    Attributes:
        loss_sharpness: L^s_t(theta_{t-1}), eq. (6).
        loss_calibration: L^c_t(theta_{t-1}), eq. (7), raw.
    """

    loss_sharpness: Tensor
    loss_calibration: Tensor


def shared_gp(data: Observations, theta: Tensor, settings: Settings) -> GaussianProcess:
    """The GP every GP method shares (D.1): on all of D_{t-1}, y standardised with D_{t-1}'s
    statistics, under the ``S x k`` lengthscale ``theta``."""
    return GaussianProcess(data.X, data.standardized(), theta, settings.nu, settings.noise_var)


class Method:
    """Base class: theta_0 from the MLL fit, then held fixed; UCB with ``sqrt(beta)``.

    Args:
        settings: the run's settings.
        budget: T, the number of BO rounds.
        seeds: the seeds of the batch, in batch order (for per-seed random streams).
    """

    #: The registry name, set by subclasses.
    name = "method"

    def __init__(self, settings: Settings, budget: int, seeds: Sequence[int]) -> None:
        self.settings = settings
        self.budget = budget
        self.seeds = list(seeds)
        self.theta: Tensor | None = None
        #: What the task says of itself (``Task.describe``), set by the engine before :meth:`start`:
        #: a known-truth task gives its true lengthscale (GP-UCB at the true kernel reads it).
        self.task: dict = {}

    def start(self, data: Observations) -> None:
        """Called once the initial design is observed: theta_0 by MLL (protocol: "Initial lengthscale theta_0")."""
        settings = self.settings
        self.theta = fit_initial_lengthscale(
            data.X, data.standardized(), settings.nu, settings.noise_var, settings.ard, settings.lengthscale_bounds
        )

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        """theta_{t-1}: ``S x k`` lengthscale that chooses x_t, given D_{t-1}."""
        return self.theta

    def true_lengthscale(self, data: Observations) -> Tensor | None:
        """theta_true: ``S x k``, the lengthscale a known-truth task was drawn with (``true_lengthscale``
        of its description; every dimension's with ARD), for ``data``'s seeds; None where the task
        declares none. GP-UCB at the true kernel plays it; the engine diagnoses every method at it."""
        value = self.task.get("true_lengthscale")
        if value is None:
            return None
        X = data.X
        shape = (X.shape[0], X.shape[-1] if self.settings.ard else 1)
        return torch.full(shape, float(value), dtype=X.dtype, device=X.device)

    def refit_mll(self, X: Tensor, y: Tensor) -> Tensor:
        """The per-round MLL refit (Table S1): projected Adam on log-lengthscale, warm-started
        from ``self.theta``; ``X``: ``S x n x d``, ``y``: ``S x n`` standardised."""
        settings = self.settings
        distances = Distances(X, X)
        return minimize_lengthscale(
            lambda theta: negative_mll(distances, y, theta, settings.nu, settings.noise_var),
            self.theta,
            settings.lengthscale_bounds,
            settings.refit_lr,
            settings.refit_steps,
        )

    def posterior(self, data: Observations, theta: Tensor) -> Posterior:
        """The posterior on D_{t-1} under theta_{t-1} that chooses x_t and is diagnosed at it.

        The default is the shared GP on all data, y standardised with D_{t-1}'s statistics.
        A method with another surrogate (SCGP's split, TabICLv2) returns its own
        :class:`~oscbo.model.posterior.Posterior`.
        """
        return shared_gp(data, theta, self.settings)

    def width(self, model: Posterior) -> Tensor:
        """``S`` UCB multipliers of sigma on this round's posterior: sqrt(beta) by default."""
        like = model.train_X
        return torch.full(model.batch_shape, math.sqrt(self.settings.beta), dtype=like.dtype, device=like.device)

    def score(self, model: Posterior, width: Tensor) -> Score:
        """The acquisition of every seed (see :data:`~oscbo.model.acquisition.Score`).

        UCB ``mu + width * sigma`` (latent sigma), or BoTorch's LogEI over each seed's best
        standardised y so far when ``settings.acquisition`` is ``logei`` (the width then only
        sets the interval).
        """
        if self.settings.acquisition == "logei":
            best = model.train_y.max(-1, keepdim=True).values
            return lambda x, seeds: log_ei(*model.predict(x, seeds), best if seeds is None else best[seeds])
        widths = width.unsqueeze(-1)
        return lambda x, seeds: ucb(*model.predict(x, seeds), widths if seeds is None else widths[seeds])

    def propose(self, model: Posterior, width: Tensor, raw_points: Tensor) -> Tensor:
        """x_t of every seed (``S x d``): the maximiser over [0, 1]^d of :meth:`score` from each
        seed's ``R x d`` raw points (``S x R x d``, seeded per seed and round), by BoTorch's
        L-BFGS-B from the ``acq_restarts`` best of them (Table S1). TabICL: Adam on x."""
        return maximize(self.score(model, width), raw_points, self.settings.acq_restarts)[0]

    def halfwidth(self, variance: Tensor, width: Tensor) -> Tensor:
        """``S`` interval half-widths at observation level (standardised units)."""
        return width * sqrt(variance + self.settings.noise_var)

    def observe(self, t: int, data: Observations, feedback: Feedback) -> None:
        """Round t's feedback; ``data`` is D_t (it includes x_t, y_t)."""

    def state(self) -> dict[str, Tensor | list[str]]:
        """Per-seed algorithm state to record for the round just chosen (e.g. lambda)."""
        return {}
