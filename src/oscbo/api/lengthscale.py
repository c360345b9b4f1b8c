"""OSCBO's lengthscale rule for a BoTorch loop the user already has.

Two added lines turn a BoTorch loop into one that plays OSCBO's lengthscale instead of the
MLL fit::

    rule = oscbo.OSCBOLengthscale(budget=T)                # before the loop
    ...
    model.covar_module.lengthscale = rule(model)           # each round, instead of fit_gpytorch_mll

Each call is one round of :class:`oscbo.run.loop.Loop` with the user's choice of x: the first
call fits theta_0 to the data (OSCBO's start); every later call first learns from the one
observation added since (L^s and L^c under the previous round's posterior, the dual step, the
FTPL step, the play/recovery switch) and then returns theta_{t-1} for the round at hand. Given
the same data, it returns the lengthscales the engine records for it (``tests/api/test_lengthscale.py``).

The rule scores lengthscales with OSCBO's own surrogate (paper 7 and Table S1: Matérn ``nu``, unit output
scale, fixed noise ``noise_var`` on y standardised with the data's statistics, inputs in
[0, 1]^d); the user's model should be the same for its lengthscale to mean the same.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import torch
from botorch.models.model import Model
from torch import Tensor

from oscbo import reproducibility
from oscbo.api.inputs import thread_limit
from oscbo.methods.base import Observations, build_method
from oscbo.model import DTYPE
from oscbo.run import Loop
from oscbo.run.lockstep import NonFiniteObjectiveError
from oscbo.settings import Settings


def training_data(model: Model) -> tuple[Tensor, Tensor]:
    """A single-output BoTorch model's training inputs as its kernel sees them (``n x d``, input
    transform applied) and targets in their original units (``n``, outcome transform undone)."""
    if getattr(model, "num_outputs", None) != 1 or not hasattr(model, "train_inputs"):
        raise ValueError("the lengthscale rule needs a single-output GP with training data (e.g. a SingleTaskGP)")
    X, y = model.train_inputs[0], model.train_targets
    with torch.no_grad():
        transform = getattr(model, "input_transform", None)
        if transform is not None and not model._has_transformed_inputs:  # as Model.eval() would
            X = transform.preprocess_transform(X)
        outcome = getattr(model, "outcome_transform", None)
        if outcome is not None:
            y = outcome.untransform(y.unsqueeze(-1))[0].squeeze(-1)
    return X, y


class OSCBOLengthscale:
    """OSCBO's primal-dual lengthscale rule, one round per call, for a loop that picks x itself.

    Args:
        budget: T, the rounds the loop will run (OSCBO's play/recovery schedule depends on it).
        method: ``oscbo`` (default), ``oscbo-l1`` (p = 1), or any registered method, whose
            lengthscale rule is then played (only the lengthscale: the loop's acquisition is
            its own; use UCB with ``beta = rule.settings.beta`` to match OSCBO's L^c).
        seed: seeds the method's own random streams (OSCBO's FTPL perturbation).
        threads: caps torch's and the BLAS pools' threads at this many while the rule works (its
            construction and each call), and puts them back after (the engine's default: one;
            small GPs run fastest so); None leaves them as they are.
        **settings: overrides of :class:`oscbo.settings.Settings` (``nu``, ``noise_var``,
            ``ard``, ``lambda0``, ...).
    """

    def __init__(
        self, budget: int, method: str = "oscbo", seed: int = 0, threads: int | None = 1, **settings: Any
    ) -> None:
        if budget < 1:
            raise ValueError(f"budget (the rounds of the loop) must be at least 1, got {budget}")
        reproducibility.warn_unless_pinned()  # torch or NumPy started first: this machine's own rounding
        self.threads = threads
        self.budget = int(budget)
        with thread_limit(threads):
            self.method = build_method(method, Settings.from_dict(settings), self.budget, [int(seed)])
        self._loop: Loop | None = None

    @property
    def settings(self) -> Settings:
        return self.method.settings

    def __call__(self, model_or_X: Model | Tensor, Y: Tensor | None = None) -> Tensor:
        """The lengthscale for this round's model, given its data D_{t-1}.

        Args:
            model_or_X: the model about to be used (a single-output BoTorch GP such as
                ``SingleTaskGP``), or its training inputs ``n x d`` in [0, 1]^d.
            Y: with inputs: the ``n`` (or ``n x 1``) observed values.

        Returns:
            theta_{t-1}: ``k`` lengthscale(s) (1, or d with ``ard=True``), in the inputs' dtype;
            assign it to the kernel's ``lengthscale``.

        Raises:
            ValueError: inputs outside [0, 1]^d, fewer than 2 points at the start, data that
                is not the previous call's plus at most one new observation, or a round past
                ``budget``.
        """
        X, y = training_data(model_or_X) if Y is None else (model_or_X, Y)
        dtype = X.dtype if isinstance(X, Tensor) else DTYPE
        X, y = self._check(X, y)
        with thread_limit(self.threads):
            return self._round(X, y).to(dtype)

    def _round(self, X: Tensor, y: Tensor) -> Tensor:
        """theta_{t-1} for checked data: the loop started on the first call, one observation told after."""
        if self._loop is None:
            if len(y) < 2:
                raise ValueError(f"the first call needs at least 2 observations (theta_0 is an MLL fit), got {len(y)}")
            y0 = y.unsqueeze(0)
            self._loop = Loop(self.method, Observations(X.unsqueeze(0), y0), y0, math.nan)
        else:
            seen = self._loop.data
            n = seen.n
            scale = seen.y.abs().max()
            unchanged = (
                len(y) in (n, n + 1)
                and torch.allclose(X[:n], seen.X[0], rtol=1e-9, atol=1e-12)
                and (torch.allclose(y[:n], seen.y[0], rtol=1e-9, atol=1e-12 * float(scale)))
            )
            if not unchanged:
                raise ValueError(
                    f"the rule learns from one new observation per call: expected the previous call's {n} points "
                    f"(unchanged) plus at most one, got {len(y)} points"
                    + (
                        ""
                        if len(y) not in (n, n + 1)
                        else " whose first ones changed (an input transform that "
                        "learns its bounds? give Normalize fixed bounds)"
                    )
                )
            if len(y) == n + 1:
                if self._loop.t + 1 >= self.budget:
                    raise ValueError(f"the rule's budget of {self.budget} rounds is used up")
                self._loop.tell(X[n:], y[n:], y[n:], math.nan)
        return self._loop.begin()[0]

    @property
    def history(self) -> pd.DataFrame:
        """The record of the rounds learned from so far (the pipeline's columns; no acquisition
        or oracle times, no regret): lengthscales, lambda, L^s, L^c, coverage per round."""
        if self._loop is None:
            raise RuntimeError("no round yet: call the rule with the initial data first")
        return self._loop.rows.table(
            0,
            experiment="adhoc",
            task="botorch",
            method=self.method.name,
            seed=self.method.seeds[0],
            optimal_value=None,
            dim=self._loop.data.X.shape[-1],
        )

    def _check(self, X: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        # contiguous as the engine's data: a column-major X rounds the MLL fit differently
        X = torch.as_tensor(X).detach().to(DTYPE).contiguous()
        y = torch.as_tensor(y).detach().to(X).reshape(-1).contiguous()
        if X.dim() != 2 or len(y) != len(X):
            raise ValueError(f"need inputs n x d and n values, got shapes {tuple(X.shape)} and {tuple(y.shape)}")
        if X.min() < 0 or X.max() > 1:
            raise ValueError(
                "the rule needs inputs in [0, 1]^d (its lengthscale domain is in those units); "
                f"got values in [{float(X.min()):.4g}, {float(X.max()):.4g}]: normalise them, e.g. with "
                "BoTorch's Normalize(d, bounds=...) input transform"
            )
        if not torch.isfinite(y).all():
            raise NonFiniteObjectiveError("the rule got a NaN or infinite observation")
        return X, y
