"""Any registered method on the user's own objective: the ask/tell optimiser (the one-call driver,
:func:`oscbo.api.optimize.optimize`, runs it).

:class:`Optimizer` is the engine's loop (:class:`oscbo.run.loop.Loop`) for one seed with the
user as the oracle: a scrambled Sobol initial design seeded by the seed alone (one per dimension:
renaming the objective changes nothing), the same rounds and the same record columns as a
pipeline run. Given a registered task's bounds and values and ``design=`` its name, it reproduces
that task's pipeline record (``tests/api/test_optimizer.py``).

The user works in the objective's own units: :meth:`Optimizer.ask` returns a point of the box,
:meth:`Optimizer.tell` takes its value, :attr:`Optimizer.history` is in the objective's sign
(a minimised objective is maximised as its negation inside; ``y``, ``f``, ``best_f`` and
``mu`` are turned back, the regret columns are the same either way).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from oscbo import provenance, reproducibility
from oscbo.api.inputs import as_point, check_bounds, objective_value, surprises, thread_limit
from oscbo.api.noise import Best, best, highest_mean
from oscbo.methods.base import Observations, build_method
from oscbo.model import DTYPE
from oscbo.run import Loop, RunResult, initial_design, resolve_device, write
from oscbo.run.rows import Rows
from oscbo.run.sidecar import sidecar
from oscbo.settings import Settings
from oscbo.study.job import Job, JobMethod, JobTask
from oscbo.tasks.base import to_natural

#: Record columns that change sign with the objective (the rest are sign-free).
SIGNED_COLUMNS = ["y", "f", "best_f", "mu"]


#: The initial design's stream when no task's is asked for: one per (dimension, seed).
DESIGN = "objective"


class Optimizer:
    """Ask/tell Bayesian optimisation of a black box on a box, with any registered method.

    ``ask`` gives the next point (the initial design first, then one BO round per point),
    ``tell`` its value; each asked point must be told before the next is asked.

    Args:
        bounds: the box in the objective's units: ``d`` pairs ``(lower, upper)``, e.g.
            ``[(-1, 2), (0, 15), (0, 1)]``, or BoTorch's ``2 x d`` (``problem.bounds``). A ``2 x 2`` that
            is a box read either way needs ``bounds_layout``.
        bounds_layout: ``"pairs"`` or ``"botorch"``; None reads the layout from the shape
            (:func:`check_bounds`).
        method: a registered method (``oscbo.methods.names()``); OSCBO by default.
        seed: the replication: it seeds the initial design, the acquisition's raw samples and
            the method's own random streams.
        budget: BO rounds T after the initial design, as everywhere in oscbo (``budget + n_init``
            evaluations in all; OSCBO's play/recovery schedule depends on T).
        n_init: size of the initial design.
        minimize: minimise the objective (the default is to maximise it).
        optimal_value: the objective's known optimum, for the regret columns (NaN without).
        name: the objective's name, the record's ``task`` column; it does not change the run.
        design: what seeds the initial design with ``seed``: None (the default) gives the same
            design to every objective of a dimension, whatever its name; a registered task's name
            gives that task's design in the pipeline (so its run is the pipeline's, bitwise).
        device: ``auto``, ``cpu`` or ``cuda[:i]``.
        threads: caps torch's and the BLAS pools' threads at this many while the optimiser works
            (its construction, :meth:`ask` and :meth:`tell`), and puts them back after (as the
            command line and the workflow run: a GP on a hundred points runs fastest on one, and
            concurrent jobs do not oversubscribe the cores); None leaves them as they are.
        method_options: the method's own settings, keyword arguments of its class (a user's method
            declares them so; a name it does not take is refused, named).
        **settings: overrides of :class:`oscbo.settings.Settings`, e.g. ``lambda0=0.433``.
    """

    def __init__(
        self,
        bounds: Any,
        method: str = "oscbo",
        seed: int = 0,
        *,
        budget: int,
        bounds_layout: str | None = None,
        n_init: int = 10,
        minimize: bool = False,
        optimal_value: float | None = None,
        name: str = "objective",
        design: str | None = None,
        device: str = "auto",
        threads: int | None = 1,
        method_options: dict[str, Any] | None = None,
        noisy: bool = False,
        **settings: Any,
    ) -> None:
        self.bounds = check_bounds(bounds, bounds_layout)
        if n_init < 2:
            raise ValueError(f"n_init must be at least 2 (theta_0 is fitted to the initial design), got {n_init}")
        if budget < 1:
            raise ValueError(
                f"budget (the BO rounds after the initial design of n_init={n_init} points) must be at "
                f"least 1, got {budget}"
            )
        reproducibility.warn_unless_pinned()  # torch or NumPy started first: this machine's own rounding
        self.threads = threads
        #: The run, as a pipeline run describes its own (its sidecar is written from it).
        self.job = Job(
            experiment="adhoc",
            task=JobTask(name=name),
            method=JobMethod(
                label=method,
                name=method,
                settings=Settings.from_dict(settings).to_dict(),
                options=dict(method_options or {}),
            ),
            seeds=(int(seed),),
            budget=int(budget),
            n_init=int(n_init),
        )
        self.budget, self.n_init, self.seed, self.name = self.job.budget, self.job.n_init, self.job.seeds[0], name
        self.sign = -1.0 if minimize else 1.0
        self.optimal_value = optimal_value
        self.device = resolve_device(device)
        self.started = provenance.now()
        self.design = DESIGN if design is None else design
        with thread_limit(threads):  # the method's and the design's construction, in one scope
            self.method = build_method(
                method, Settings.from_dict(self.job.method.settings), self.budget, [self.seed], self.job.method.options
            )
            self._design = initial_design(self.design, self.dim, self.n_init, self.seed).to(self.device)
        self._initial_x: list[Tensor] = []  # the initial points told so far, in [0, 1]^d
        self._initial_y: list[float] = []  # and their maximised values
        self._initial_f: list[float] = []  # and noiseless values (y where unknown)
        #: Whether the observations are noisy (said, or a noiseless value told that differs): .best
        #: is then chosen by the posterior mean.
        self.noisy = noisy
        self._initial_seconds: list[float] = []
        self._next_design = 0  # the design's next point to ask
        self._loop: Loop | None = None  # starts once the initial design is told
        self._pending: Tensor | None = None  # the last asked point, in [0, 1]^d
        self._asked_at = 0.0
        self._warned: set[str] = set()  # the kinds of suspicious value warned about (_value)
        #: The evaluation at which an interrupt stopped the run (:meth:`interrupt`); None while none did.
        self.interrupted: int | None = None
        #: The evaluation that stopped the run (:meth:`fail`): ``{"step", "reason"}``; None while none did.
        self.fault: dict[str, Any] | None = None
        self._told_outside: list[int] = []  # the record's steps of the points told outside
        #: Evaluations that failed and were told at an imputed value (:meth:`fail_and_go_on`).
        self.failed_evaluations: list[dict[str, Any]] = []

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    def evaluations(self) -> int:
        """Points told so far."""
        return len(self._initial_y) + (self._loop.t if self._loop is not None else 0)

    @property
    def total(self) -> int:
        """Evaluations in all: the initial design and the budget's BO rounds."""
        return self.n_init + self.budget

    def ask(self) -> np.ndarray:
        """The next point to evaluate (``d``, in the objective's units); asked again before a tell, the same point."""
        if self.fault is not None:
            raise RuntimeError(
                f"the run stopped at a failed evaluation (step {self.fault['step']}): {self.fault['reason']}"
            )
        if self._pending is None:
            self._require_budget()
            if self._loop is None:
                self._pending = self._design[self._next_design]
            else:
                with thread_limit(self.threads):
                    self._pending = self._loop.ask()[0]
            self._asked_at = time.perf_counter()
        return self._natural(self._pending)

    def tell(self, x: Sequence[float] | np.ndarray | Tensor, y: Any, *, f: Any = None, outside: bool = False) -> None:
        """Record ``y``, the objective's value at ``x``, the point the last :meth:`ask` returned.

        ``f``: the noiseless value at ``x`` where known (a BoTorch problem's ``evaluate_true``): the
        regret columns use it, ``y`` stays the observation, and where they differ the run is noisy.
        ``outside=True``: a point the optimiser did not ask for (the user's own, e.g. from before the
        run): it takes a design point's place (the design's last) or the next BO round's, drops an
        asked point not yet told, and is listed under the sidecar's ``told_outside``; it counts in
        ``n_init + budget``, the horizon the methods' schedules are set for (docs/api.md).

        Raises:
            RuntimeError: nothing was asked (or, outside, the budget is used up).
            ValueError: ``x`` is not the asked point; outside, not a point of the box.
            ObjectiveValueError, NonFiniteObjectiveError: ``y`` is not one real, finite number.
        """
        if outside:
            self._tell_outside(x, y, f)
            return
        seconds = time.perf_counter() - self._asked_at
        if self._pending is None:
            raise RuntimeError("tell() needs a point from ask() first")
        asked = self._natural(self._pending)
        x = as_point(x)
        width = (self.bounds[1] - self.bounds[0]).numpy()
        if x.shape != asked.shape or not (np.abs(x - asked) <= 1e-9 * width).all():
            raise ValueError(
                f"tell() got x = {x.tolist()}, but the last ask() returned {asked.tolist()}; "
                "the methods learn from the points they choose, so tell each asked point's value"
            )
        value, noiseless = self._values(y, f, asked)
        with thread_limit(self.threads):
            self._record(value, noiseless, seconds)
        self._pending = None

    def _tell_outside(self, x: Sequence[float] | np.ndarray | Tensor, y: Any, f: Any) -> None:
        """:meth:`tell` of a point the optimiser did not ask for (its docstring)."""
        self._require_budget()
        x = as_point(x)
        low, high = self.bounds.numpy()
        if x.shape != low.shape or not ((low <= x) & (x <= high)).all():
            raise ValueError(
                f"tell(outside=True) got x = {x.tolist()}, not a point of the box {self.bounds.T.tolist()}"
            )
        value, noiseless = self._values(y, f, x)
        unit = torch.as_tensor((x - low) / (high - low), dtype=DTYPE, device=self.device)  # to_natural's inverse
        with thread_limit(self.threads):
            self._told_outside.append(self.evaluations)  # its row's step, as .fault's
            if self._loop is None:
                self._add_initial(unit, value, noiseless, 0.0)
            else:  # the user's own evaluation: no oracle time
                self._loop.tell(unit.unsqueeze(0), *self._tensors(value, noiseless), 0.0)
        self._pending = None

    def _values(self, y: Any, f: Any, x: np.ndarray) -> tuple[float, float]:
        """``y`` and ``f`` (y where None) as real numbers (:func:`objective_value`), maximised, with a
        warning, once per run and kind, where the noiseless one looks wrong (:func:`surprises`: huge,
        or better than the optimal value given: a noisy observation may be)."""
        value = objective_value(y, x)
        noiseless = value if f is None else objective_value(f, x)
        self.noisy = self.noisy or noiseless != value
        for kind, message in surprises(noiseless, x, self.optimal_value, self.sign < 0).items():
            if kind not in self._warned:
                self._warned.add(kind)
                warnings.warn(message, RuntimeWarning, stacklevel=4)
        return self.sign * value, self.sign * noiseless

    def _tensors(self, value: float, noiseless: float) -> tuple[Tensor, Tensor]:
        return (torch.tensor([v], dtype=DTYPE, device=self.device) for v in (value, noiseless))

    def _require_budget(self) -> None:
        """Raise RuntimeError when every evaluation of the budget is told."""
        if self.evaluations >= self.total:
            outside = (
                f"; {len(self._told_outside)} of them told with outside=True, each in an evaluation's place (to "
                f"keep {self.total} new evaluations, make the budget larger by as many)"
                if self._told_outside
                else ""
            )
            raise RuntimeError(
                f"the budget of {self.budget} BO rounds (after {self.n_init} initial points) is used up: "
                f"{self.evaluations} evaluations told{outside}"
            )

    def _record(self, value: float, noiseless: float, seconds: float) -> None:
        """The asked point's maximised values added: to the initial design (the loop starts, θ₀
        fitted, once it is complete) or to the loop's round."""
        if self._loop is None:
            self._next_design += 1
            self._add_initial(self._pending, value, noiseless, seconds)
        else:
            self._loop.tell(self._pending.unsqueeze(0), *self._tensors(value, noiseless), seconds)

    def fail_and_go_on(self, reason: str) -> None:
        """Mark the asked point's evaluation as failed (``reason``) and go on: the point is told at the
        worst value told so far, so the method learns to move away from it rather than ask it again,
        and the record's sidecar lists it under ``failed_evaluations`` (its step, the reason and the
        value imputed), the row's ``y`` being that value. Before any value exists (a simulator that
        fails in part of the box, at the first point) there is none to impute: the point is listed
        with no step and ``x``, and the initial design moves on to its next point."""
        if self._pending is None:
            raise RuntimeError("fail_and_go_on() needs a point from ask() first")
        _, told = self._observed()
        if len(told) == 0:
            self._skip(reason)
            return
        worst = self.sign * float(told.min())  # in the objective's sign
        self.failed_evaluations.append({"step": self.evaluations, "reason": reason, "imputed": worst})
        self.tell(self._natural(self._pending), worst)

    def _skip(self, reason: str) -> None:
        """A failed evaluation before any value exists (nothing to impute): listed with its point and
        no step (the record has no row for it), and the design moves on to its next point, the
        Sobol sequence drawn one point further (its earlier points unchanged). A whole design's worth
        of such failures ends the run: the objective most likely fails everywhere."""
        skipped = sum(1 for failed in self.failed_evaluations if failed["step"] is None) + 1
        if skipped >= self.n_init:
            raise ValueError(
                f"the first {skipped} evaluations all failed, the last: {reason}; the objective fails at every "
                "point tried, so there is nothing to learn from"
            )
        self.failed_evaluations.append(
            {"step": None, "reason": reason, "imputed": None, "x": self._natural(self._pending).tolist()}
        )
        self._next_design += 1
        self._design = initial_design(self.design, self.dim, self.n_init + skipped, self.seed).to(self.device)
        self._pending = None

    def _add_initial(self, x: Tensor, value: float, noiseless: float, seconds: float) -> None:
        """An initial point told: the loop starts, θ₀ fitted, once ``n_init`` are."""
        self._initial_x.append(x)
        self._initial_y.append(value)
        self._initial_f.append(noiseless)
        self._initial_seconds.append(seconds)
        if len(self._initial_y) == self.n_init:
            X0 = torch.stack(self._initial_x).unsqueeze(0)
            y0, f0 = (torch.tensor([v], dtype=DTYPE, device=self.device) for v in (self._initial_y, self._initial_f))
            self._loop = Loop(self.method, Observations(X0, y0), f0, sum(self._initial_seconds))

    def interrupt(self) -> None:
        """Mark the run as stopped by an interrupt (Ctrl-C) at this evaluation: the points told stay
        in :attr:`history`, and the record's sidecar says ``interrupted`` with the step
        (``interrupted_step``); an asked point not yet told is dropped."""
        self.interrupted = self.evaluations
        self._pending = None

    def fail(self, reason: str) -> None:
        """Mark the asked point's evaluation as failed (``reason``: what the objective did) and stop:
        the points told before it stay in :attr:`history`, and the record's sidecar says ``failed``,
        with the reason and the oracle call (``failed_step``), as a pipeline run's does."""
        if self._pending is None:
            raise RuntimeError("fail() needs a point from ask() first")
        self.fault = {"step": self.evaluations, "reason": reason}
        self._pending = None

    @property
    def best(self) -> Best | None:
        """The best point told so far (None before the first tell): the best value told, or for a
        noisy run (:attr:`noisy`), once a BO round has run, the evaluated point with the highest
        posterior mean under the last round's model (:mod:`oscbo.api.noise`)."""
        table = self.history
        if table.empty:
            return None
        highest = None
        if self.noisy and self._loop is not None and self._loop.t > 0:
            theta = torch.as_tensor(
                table.filter(like="lengthscale_").dropna().to_numpy(copy=True)[-1:], device=self.device
            )
            highest = highest_mean(self.method, self._loop.data, theta)
        return best(table, table.filter(like="natural_x").to_numpy(), self.sign, highest)

    @property
    def history(self) -> pd.DataFrame:
        """The points told so far: the record's columns (:meth:`record`: ``x_*`` in [0, 1]^d, as the
        pipeline's), and beside them ``natural_x0``, ``natural_x1``, ... each point in the objective's
        own units (its bounds)."""
        table = self.record()
        unit = torch.as_tensor(table[[f"x_{i}" for i in range(self.dim)]].to_numpy(dtype=float, copy=True))
        natural = self._natural(unit)  # as ask() and .best give them
        return table.assign(**{f"natural_x{i}": natural[:, i] for i in range(self.dim)})

    def record(self) -> pd.DataFrame:
        """The record of the points told so far: the pipeline's columns (:mod:`oscbo.records`),
        ``x_*`` in [0, 1]^d as there, values in the objective's sign (what :meth:`write` writes),
        and ``origin``: each row ``asked`` (the optimiser's point), ``outside`` (told with
        ``outside=True``) or ``imputed`` (a failed evaluation told at the worst value so far)."""
        if self._loop is not None:
            rows = self._loop.rows
        else:  # inside the initial design: its rows so far
            X, y = self._observed()
            f = torch.tensor(self._initial_f, dtype=DTYPE)
            rows = Rows(1, len(y))
            rows.add_initial(X.unsqueeze(0), y.unsqueeze(0), f.unsqueeze(0), sum(self._initial_seconds))
        optimum = None if self.optimal_value is None else self.sign * self.optimal_value
        table = rows.table(
            0,
            experiment="adhoc",
            task=self.name,
            method=self.method.name,
            seed=self.seed,
            optimal_value=optimum,
            dim=self.dim,
        )
        table[SIGNED_COLUMNS] = self.sign * table[SIGNED_COLUMNS]
        origin = np.full(len(table), "asked", dtype=object)  # what each row is: the sidecar's lists, per row
        origin[self._told_outside] = "outside"
        origin[[failed["step"] for failed in self.failed_evaluations if failed["step"] is not None]] = "imputed"
        return table.assign(origin=origin)

    def meta(self) -> dict[str, Any]:
        """The record's sidecar (:func:`oscbo.run.sidecar.sidecar`, as a pipeline run's: from
        :attr:`job`): the objective, the method's resolved settings, provenance."""
        task = {
            "name": self.name,
            "design": self.design,
            "dim": self.dim,
            "optimal_value": self.optimal_value,
            "bounds": self.bounds.tolist(),
            "bounds_layout": "botorch",  # 2 x d: Optimizer(meta["task"]["bounds"], bounds_layout=...) reads it back
            "minimize": self.sign < 0,
        }
        return sidecar(
            self.job,
            task=task,
            settings=self.method.settings,
            device=self.device,
            started=self.started,
            status=self._status(),
            evaluations=self.evaluations,  # done; planned: n_init + budget
            planned_evaluations=self.total,
            **({"threads": self.threads} if self.threads is not None else {}),  # what its work ran on
            **({"reason": self.fault["reason"], "failed_step": self.fault["step"]} if self.fault else {}),
            **({"told_outside": list(self._told_outside)} if self._told_outside else {}),
            **({"interrupted_step": self.interrupted} if self.interrupted is not None else {}),
            **({"failed_evaluations": list(self.failed_evaluations)} if self.failed_evaluations else {}),
        )

    def _status(self) -> str:
        """The record's status: ``failed``, ``interrupted``, ``complete`` or (stopped early) ``partial``."""
        if self.fault:
            return "failed"
        if self.interrupted is not None:
            return "interrupted"
        return "complete" if self.evaluations == self.total else "partial"

    def plot(self):
        """The run's picture (:func:`oscbo.api.picture.plot`): best so far and regret against the
        evaluation, the lengthscale played, the band's coverage so far; a matplotlib ``Figure``."""
        from oscbo.api.picture import plot

        return plot(self.history, f"{self.method.name} on {self.name}, seed {self.seed}")

    def write(self, out_dir: str | Path) -> Path:
        """Write the record as ``out_dir/seed{S}.parquet`` and its JSON sidecar, atomically."""
        return write(RunResult(tables={self.seed: self.record()}, meta=self.meta()), out_dir)[0]

    def _natural(self, x: Tensor) -> np.ndarray:
        return to_natural(x.cpu(), self.bounds).numpy()

    def _observed(self) -> tuple[Tensor, Tensor]:
        """Points told so far in [0, 1]^d (``n x d``) and their maximised values (``n``)."""
        if self._loop is not None:
            return self._loop.data.X[0], self._loop.data.y[0]
        X = torch.stack(self._initial_x) if self._initial_x else self._design[:0]
        return X, torch.tensor(self._initial_y, dtype=DTYPE)
