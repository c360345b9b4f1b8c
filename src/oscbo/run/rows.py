"""The record of a batch of seeds, built round by round: :class:`Rows` of :class:`Round` records
(columns: :mod:`oscbo.records`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from oscbo import records

#: The state columns every record has, padded where a method has no such state.
STATE_COLUMNS = ("lambda", "rm_phase")


@dataclass(frozen=True)
class Round:
    """One BO round of S seeds as its record holds it (:class:`oscbo.run.loop.Loop` builds it).

    Attributes:
        x: ``S x d`` queries x_t in [0, 1]^d; y, f: ``S`` observed and noise-free values.
        lengthscale: ``S x k`` theta_{t-1}, the lengthscale that chose x_t.
        mu, sigma: ``S`` posterior mean and standard deviation at x_t (standardised units).
        halfwidth: ``S`` the UCB band's half-width at x_t; covered: ``S`` 1 where y_t lies in it.
        loss_sharpness, loss_sharpness_true, loss_calibration: ``S`` L^s_t, L^s_t(theta_true)
            and L^c_t (eqs. 6-7); violation: ``S`` the running sum of clipped L^c.
        state: the method's own state to record (``lambda``, ``rm_phase``, its own columns).
        seconds: (fit, acquisition, oracle) seconds per seed.
        jitter: ``S`` the posterior's jitter escalations.
    """

    #: The fields written as columns of the same name, in the record's order: the values and the
    #: diagnostics (a method's state columns come from ``state``).
    COLUMNS: ClassVar[tuple[str, ...]] = tuple(
        name for name in ["y", "f", *records.DIAGNOSTIC_COLUMNS] if name not in STATE_COLUMNS
    )

    x: torch.Tensor
    y: torch.Tensor
    f: torch.Tensor
    lengthscale: torch.Tensor
    mu: torch.Tensor
    sigma: torch.Tensor
    halfwidth: torch.Tensor
    covered: torch.Tensor
    loss_sharpness: torch.Tensor
    loss_sharpness_true: torch.Tensor
    loss_calibration: torch.Tensor
    violation: torch.Tensor
    state: dict[str, Any]
    seconds: tuple[float, float, float]
    jitter: torch.Tensor | np.ndarray


class Rows:
    """Accumulates the per-step columns of S records (rows in oracle-call order).

    Columns that only BO rounds have (lengthscales, a method's own state such as
    LB-GP-UCB's candidate count) are padded with NaN on the initial design.
    """

    def __init__(self, n_seeds: int, n_init: int) -> None:
        self.n_seeds, self.n_init = n_seeds, n_init
        self.columns: dict[str, list[np.ndarray]] = {}
        self.extra: list[str] = []

    def _append(self, name: str, values: torch.Tensor | np.ndarray | list) -> None:
        array = values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else np.asarray(values)
        self.columns.setdefault(name, []).append(array.reshape(self.n_seeds, -1))

    def add_initial(self, X: torch.Tensor, y: torch.Tensor, f: torch.Tensor, oracle_seconds: float) -> None:
        n = X.shape[-2]
        nan = np.full((self.n_seeds, n), np.nan)
        for i in range(X.shape[-1]):
            self._append(f"x_{i}", X[..., i])
        self._append("y", y)
        self._append("f", f)
        # the initial design was chosen by no posterior: no diagnostics, no fit or acquisition
        for name in records.DIAGNOSTIC_COLUMNS + ["fit_seconds", "acq_seconds"]:
            if name != "rm_phase":
                self._append(name, nan)
        self._append("rm_phase", np.full((self.n_seeds, n), "", dtype=object))
        self._append("oracle_seconds", np.full((self.n_seeds, n), oracle_seconds))
        self._append("jitter_events", np.zeros((self.n_seeds, n), dtype=np.int64))

    def add_round(self, bo_round: Round) -> None:
        """Append one BO round of every seed (:class:`Round`)."""
        for i in range(bo_round.x.shape[-1]):
            self._append(f"x_{i}", bo_round.x[..., i])
        for name in Round.COLUMNS:
            self._append(name, getattr(bo_round, name))
        self._append("jitter_events", bo_round.jitter)
        for i in range(bo_round.lengthscale.shape[-1]):
            self._append(f"lengthscale_{i}", bo_round.lengthscale[..., i])
        state = bo_round.state
        self._append("lambda", state.get("lambda", np.full(self.n_seeds, np.nan)))
        self._append("rm_phase", np.asarray(state.get("rm_phase", [""] * self.n_seeds), dtype=object))
        for name, values in state.items():
            if name not in STATE_COLUMNS:
                if name not in self.extra:
                    self.extra.append(name)
                self._append(name, values)
        for name, value in zip(("fit_seconds", "acq_seconds", "oracle_seconds"), bo_round.seconds):
            self._append(name, np.full(self.n_seeds, value))

    def table(
        self, i: int, *, experiment: str, task: str, method: str, seed: int, optimal_value: float | None, dim: int
    ) -> pd.DataFrame:
        columns = {name: np.concatenate([chunk[i] for chunk in chunks]) for name, chunks in self.columns.items()}
        n = len(columns["y"])
        for name, values in columns.items():
            if len(values) < n:
                columns[name] = np.concatenate([np.full(n - len(values), np.nan), values.astype(float)])
        f = columns["f"]
        best_f = np.maximum.accumulate(f)
        f_star = np.nan if optimal_value is None else optimal_value
        instant = np.where(np.arange(n) >= self.n_init, f_star - f, 0.0)
        table = pd.DataFrame(
            {
                "experiment": experiment,
                "task": task,
                "method": method,
                "seed": seed,
                "step": np.arange(n),
                "phase": np.where(np.arange(n) < self.n_init, "init", "bo"),
                **columns,
                "best_f": best_f,
                "simple_regret": f_star - best_f,
                "cumulative_regret": np.cumsum(instant),
            }
        )
        count = len([c for c in columns if c.startswith("lengthscale_")])
        return table[records.record_columns(dim, count) + self.extra]
