"""The rounds of the BO loop for S seeds in lockstep, one ask/tell at a time: :class:`Loop`.

Round t = 1..T, for all seeds at once (tensors ``S x n x d``), the method's hooks in the order of
its contract (:class:`oscbo.methods.base.Method`):

1. the method plays theta_{t-1} (:meth:`Method.lengthscale`);
2. the posterior on D_{t-1} (y standardised with D_{t-1}'s statistics) under theta_{t-1}, its
   UCB width and the method's state to record;
3. x_t = argmax of the method's acquisition, all seeds at once (:meth:`Method.propose`);
4. y_t from the caller; the diagnostics (L^s, L^c, interval, coverage: eqs. 6-7) at x_t under
   that posterior, and on a known-truth task L^s at x_t under the shared GP on D_{t-1} at the
   task's true lengthscale (Lemma 6.2's comparator: the sharpness gap, eq. 8, sums the difference);
5. the method observes the round's feedback (OSCBO's RECALIBRATE).

The one place for these steps: :func:`oscbo.run.run` drives it with a task,
:class:`oscbo.api.Optimizer` with a user's function, :class:`oscbo.api.OSCBOLengthscale` with the
user's own choice of x_t. All three therefore record the same numbers for the same data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from oscbo.methods.base import Feedback, Method, Observations, shared_gp
from oscbo.model import DTYPE
from oscbo.model.losses import calibration_loss, clipped, sharpness_loss
from oscbo.model.posterior import Posterior
from oscbo.model.rounding import sqrt
from oscbo.run.rows import Round, Rows
from oscbo.seeding import sobol_points, stable_seed


class MethodOutputError(TypeError):
    """A method's hook returned what the engine cannot use; the message names the hook, what it
    returned and the shape the contract (:class:`oscbo.methods.base.Method`) asks for."""


def _checked(method: Method, hook: str, value: Any, shapes: list[tuple[int, ...]], meaning: str) -> Any:
    """``value`` if it is a tensor of one of ``shapes``, else :class:`MethodOutputError`."""
    found = tuple(value.shape) if isinstance(value, torch.Tensor) else None
    if found not in shapes:
        got = f"a tensor of shape {found}" if found is not None else f"a {type(value).__name__}"
        wanted = " or ".join(" x ".join(map(str, shape)) for shape in shapes)
        raise MethodOutputError(
            f"method {method.name!r}: {hook} returned {got}; expected a tensor of {wanted} ({meaning})"
        )
    return value


@dataclass
class _Pending:
    """What round t fixed before y_t is known (see :meth:`Loop.begin`)."""

    t: int
    theta: torch.Tensor
    model: Posterior
    width: torch.Tensor
    state: dict[str, Any]
    fit_seconds: float
    x: torch.Tensor | None = None
    acq_seconds: float = float("nan")


class Loop:
    """The rounds of the BO loop for S seeds in lockstep, one ask/tell at a time.

    Steps 1-5 of the module docstring (:class:`oscbo.api.OSCBOLengthscale` calls :meth:`begin` and
    :meth:`tell`, never :meth:`ask`).

    Args:
        method: the method, built for the seeds of ``data``.
        data: the observed initial design D_0 (``S x n x d`` inputs in [0, 1]^d, ``S x n`` y).
        f: ``S x n`` noise-free values of the initial design (y itself where unknown).
        oracle_seconds: the initial design's oracle wall-clock, all seeds and points together.
    """

    def __init__(self, method: Method, data: Observations, f: torch.Tensor, oracle_seconds: float) -> None:
        n_seeds, n = data.y.shape
        self.method = method
        self.data = data
        self.t = 0  # rounds completed
        self.rows = Rows(n_seeds, n)
        self.rows.add_initial(data.X, data.y, f, oracle_seconds / (n_seeds * n))
        tic = time.perf_counter()
        method.start(data)
        self._start_seconds = time.perf_counter() - tic  # theta_0's fit, counted in round 1
        self.true_theta = method.true_lengthscale(data)
        self.violation = torch.zeros(n_seeds, dtype=DTYPE, device=data.X.device)
        self._round: _Pending | None = None

    def begin(self) -> torch.Tensor:
        """Steps 1-2 of round t = self.t + 1: theta_{t-1} (``S x k``) and the posterior that chooses x_t."""
        if self._round is None:
            t = self.t + 1
            tic = time.perf_counter()
            n_seeds, d = self.data.y.shape[0], self.data.X.shape[-1]
            theta = _checked(
                self.method,
                f"lengthscale(t={t}, data)",
                self.method.lengthscale(t, self.data),
                list(dict.fromkeys([(n_seeds, 1), (n_seeds, d)])),
                "S x k: per seed one lengthscale, or one per input dimension (ARD)",
            )
            model = self.method.posterior(self.data, theta)
            width = _checked(self.method, "width(model)", self.method.width(model), [(n_seeds,)], "S: per seed")
            state = self.method.state()
            fit_seconds = time.perf_counter() - tic + (self._start_seconds if t == 1 else 0.0)
            self._round = _Pending(t, theta, model, width, state, fit_seconds)
        return self._round.theta

    def ask(self) -> torch.Tensor:
        """Step 3: x_t (``S x d``), each seed's maximiser of its acquisition (asked again: the same x_t)."""
        self.begin()
        r, settings = self._round, self.method.settings
        if r.x is None:
            d, dev = self.data.X.shape[-1], self.data.X.device
            tic = time.perf_counter()
            raw_points = torch.stack(
                [
                    sobol_points(settings.acq_raw_samples, d, stable_seed("acquisition", seed, r.t), dev)
                    for seed in self.method.seeds
                ]
            )
            r.x = _checked(
                self.method,
                "propose(model, width, raw_points)",
                self.method.propose(r.model, r.width, raw_points),
                [(len(self.method.seeds), d)],
                "S x d: per seed one query in [0, 1]^d",
            )
            r.acq_seconds = time.perf_counter() - tic
        return r.x

    def tell(self, x: torch.Tensor, y: torch.Tensor, f: torch.Tensor, oracle_seconds: float) -> None:
        """Steps 4-5: y_t's diagnostics at x_t under the round's posterior; the method observes D_t.

        Args:
            x: ``S x d`` queries in [0, 1]^d (those of :meth:`ask`, or the caller's own).
            y: ``S`` observed values; f: ``S`` noise-free values (y where unknown).
            oracle_seconds: the oracle's wall-clock for all S seeds.
        """
        self.begin()
        r, settings, data = self._round, self.method.settings, self.data
        n_seeds = len(y)
        with torch.no_grad():
            mu, variance = (v.squeeze(-1) for v in r.model.predict(x.unsqueeze(-2)))
            mean, std = data.statistics()
            residual = (y - mean) / std - mu  # y_t in D_{t-1}'s units
            predictive_variance = variance + settings.noise_var
            loss_sharpness = sharpness_loss(predictive_variance, settings.noise_var)
            loss_sharpness_true = self._true_sharpness(data, x)
            loss_calibration = calibration_loss(
                residual / sqrt(predictive_variance), settings.beta, settings.calibration_power
            )
            halfwidth = self.method.halfwidth(variance, r.width)
        self.violation = self.violation + clipped(loss_calibration, settings.calibration_clip)
        self.data = Observations(torch.cat([data.X, x.unsqueeze(-2)], -2), torch.cat([data.y, y.unsqueeze(-1)], -1))
        tic = time.perf_counter()
        self.method.observe(r.t, self.data, Feedback(loss_sharpness=loss_sharpness, loss_calibration=loss_calibration))
        fit_seconds = r.fit_seconds + time.perf_counter() - tic  # OSCBO's FTPL step runs here
        self.rows.add_round(
            Round(
                x=x,
                y=y,
                f=f,
                lengthscale=r.theta,
                mu=mu,
                sigma=sqrt(variance),
                halfwidth=halfwidth,
                covered=(residual.abs() <= halfwidth).to(DTYPE),
                loss_sharpness=loss_sharpness,
                loss_sharpness_true=loss_sharpness_true,
                loss_calibration=loss_calibration,
                violation=self.violation,
                state=r.state,
                seconds=(fit_seconds / n_seeds, r.acq_seconds / n_seeds, oracle_seconds / n_seeds),
                jitter=r.model.jitter_events,
            )
        )
        self.t, self._round = r.t, None

    def _true_sharpness(self, data: Observations, x: torch.Tensor) -> torch.Tensor:
        """L^s_t(theta_true), eq. 6, at x_t: the shared GP on D_{t-1} with theta replaced by the
        task's true lengthscale, whatever model the method plays (for GP-UCB at the true kernel it
        is the played model, so its two columns agree bit for bit). One Cholesky and one variance
        a round, on known-truth tasks only.

        Args:
            data: D_{t-1}, ``S x n x d`` and ``S x n``.
            x: ``S x d`` queries x_t.

        Returns:
            ``S`` values; NaN where the task declares no true lengthscale.
        """
        settings = self.method.settings
        if self.true_theta is None:
            return torch.full(x.shape[:1], float("nan"), dtype=DTYPE, device=x.device)
        _, variance = shared_gp(data, self.true_theta, settings).predict(x.unsqueeze(-2))
        return sharpness_loss(variance.squeeze(-1) + settings.noise_var, settings.noise_var)
