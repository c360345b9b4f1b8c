"""The BO loop: S seeds of one (task, method) in lockstep, as one batched tensor program.

Round t = 1..T, for all seeds at once (tensors ``S x n x d``):

1. the method plays theta_{t-1} (:meth:`Method.lengthscale`);
2. the GP posterior on D_{t-1} (y standardised with D_{t-1}'s statistics) under theta_{t-1};
3. x_t = argmax of the method's acquisition, all seeds at once (:meth:`Method.propose`);
4. y_t from the task; the diagnostics (L^s, L^c, interval, coverage: eqs. 6-7) at x_t under that posterior;
5. the method observes the round's feedback (OSCBO's RECALIBRATE).

Every random stream is per seed and named (:mod:`oscbo.seeding`): the initial design by
(task, seed), the acquisition's raw samples by (seed, round), the observation noise by
(task, seed), a method's own streams by the method. A seed's trajectory therefore does not
depend on which other seeds share its batch, and the same seed gives the same numbers.

Objective faults (README, "Faults"): every query is clipped to [0, 1]^d before the oracle
call (the record holds the clipped point). A seed whose objective raises, or returns NaN or
inf, ends as a *failed run*: its record keeps the oracle calls before the fault and its sidecar
says ``status: failed`` and why; the batch's other seeds are run again without it, which gives
them the very trajectory they had (batch invariance), so they go on as if it never was there.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from oscbo import devices, methods, provenance, records, reproducibility, tasks
from oscbo.config import Settings
from oscbo.losses import calibration_loss, clipped, sharpness_loss
from oscbo.methods.base import Feedback, Method, MethodUnavailableError, Observations
from oscbo.seeding import generator, sobol_points, stable_seed
from oscbo.surrogate import JITTER_ESCALATIONS, GaussianProcess

DTYPE = torch.float64
#: A workflow job logs a progress line every this many rounds.
PROGRESS_EVERY = 10


@dataclass
class FailedRun:
    """A seed that ended at an objective fault: the reason, the oracle call, its partial record.

    Attributes:
        step: the first oracle call of the evaluation that failed (0 for the initial design).
        reason: what the task did (raised, or returned NaN / inf), and where.
        table: the seed's record up to the fault (the rows of the oracle calls before ``step``).
        meta: the run's description, as for a complete record.
    """

    step: int
    reason: str
    table: pd.DataFrame
    meta: dict[str, Any]


class NonFiniteObjectiveError(RuntimeError):
    """A user's objective (ask/tell, :mod:`oscbo.optimizer`) returned NaN or inf: never a silent NaN."""


class ObjectiveFault(RuntimeError):
    """The task raised, or returned NaN or inf, for some seeds of a batch (never a silent NaN)."""

    def __init__(self, failed: dict[int, FailedRun]) -> None:
        super().__init__("; ".join(f"seed {seed}: {run.reason}" for seed, run in failed.items()))
        self.failed = failed


def resolve_device(name: str = "auto") -> torch.device:
    """``auto`` is CUDA when present, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def limit_threads(threads: int) -> None:
    """Cap torch's and the BLAS/OpenMP pools: two jobs on two cores must not oversubscribe."""
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads)


def initial_design(task_name: str, dim: int, n_init: int, seed: int) -> torch.Tensor:
    """Scrambled Sobol design seeded by (task, seed): the same for every method (protocol row "Initial design")."""
    return sobol_points(n_init, dim, stable_seed("initial-design", task_name, seed))


@dataclass
class RunResult:
    """The records of one batched run, one table per seed, and what it ran on."""

    tables: dict[int, pd.DataFrame]
    meta: dict[str, Any] = field(default_factory=dict)
    failed: dict[int, FailedRun] = field(default_factory=dict)


@dataclass
class _Round:
    """What round t fixed before y_t is known (see :meth:`Loop.begin`)."""

    t: int
    theta: torch.Tensor
    model: GaussianProcess
    width: torch.Tensor
    state: dict[str, Any]
    fit_seconds: float
    x: torch.Tensor | None = None
    acq_seconds: float = float("nan")


class Loop:
    """The rounds of the BO loop for S seeds in lockstep, one ask/tell at a time.

    The one place for steps 1-5 of the module docstring: :func:`run` drives it with a task,
    :class:`oscbo.optimizer.Optimizer` with a user's function, and
    :class:`oscbo.lengthscale.OSCBOLengthscale` with the user's own choice of x_t (it calls
    :meth:`begin` and :meth:`tell`, never :meth:`ask`). All three therefore record the same
    numbers for the same data.

    Args:
        method: the method, built for the seeds of ``data``.
        data: the observed initial design D_0 (``S x n x d`` inputs in [0, 1]^d, ``S x n`` y).
        f: ``S x n`` noise-free values of the initial design (y itself where unknown).
        oracle_seconds: the initial design's oracle wall-clock, all seeds and points together.
    """

    def __init__(self, method: Method, data: Observations, f: torch.Tensor, oracle_seconds: float) -> None:
        S, n = data.y.shape
        self.method = method
        self.data = data
        self.t = 0  # rounds completed
        self.rows = _Rows(S, n)
        self.rows.add_initial(data.X, data.y, f, oracle_seconds / (S * n))
        tic = time.perf_counter()
        method.start(data)
        self._start_seconds = time.perf_counter() - tic  # theta_0's fit, counted in round 1
        self.violation = torch.zeros(S, dtype=DTYPE, device=data.X.device)
        self._round: _Round | None = None

    def begin(self) -> torch.Tensor:
        """Steps 1-2 of round t = self.t + 1: theta_{t-1} (``S x k``) and the posterior that chooses x_t."""
        if self._round is None:
            t = self.t + 1
            tic = time.perf_counter()
            theta = self.method.lengthscale(t, self.data)
            model = self.method.posterior(self.data, theta)
            width = self.method.width(model)
            state = self.method.state()
            fit_seconds = time.perf_counter() - tic + (self._start_seconds if t == 1 else 0.0)
            self._round = _Round(t, theta, model, width, state, fit_seconds)
        return self._round.theta

    def ask(self) -> torch.Tensor:
        """Step 3: x_t (``S x d``), each seed's maximiser of its acquisition (asked again: the same x_t)."""
        self.begin()
        r, s = self._round, self.method.settings
        if r.x is None:
            d, dev = self.data.X.shape[-1], self.data.X.device
            tic = time.perf_counter()
            raw_points = torch.stack([
                sobol_points(s.acq_raw_samples, d, stable_seed("acquisition", seed, r.t), dev)
                for seed in self.method.seeds
            ])
            r.x = self.method.propose(r.model, r.width, raw_points)
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
        r, s, data = self._round, self.method.settings, self.data
        S = len(y)
        with torch.no_grad():
            mu, variance = (v.squeeze(-1) for v in r.model.predict(x.unsqueeze(-2)))
            mean, std = data.statistics()
            residual = (y - mean) / std - mu  # y_t in D_{t-1}'s units
            predictive_variance = variance + s.noise_var
            loss_s = sharpness_loss(predictive_variance, s.noise_var)
            loss_c = calibration_loss(residual / predictive_variance.sqrt(), s.beta, s.calibration_power)
            halfwidth = self.method.halfwidth(variance, r.width)
        self.violation = self.violation + clipped(loss_c, s.calibration_clip)
        self.data = Observations(torch.cat([data.X, x.unsqueeze(-2)], -2), torch.cat([data.y, y.unsqueeze(-1)], -1))
        tic = time.perf_counter()
        self.method.observe(r.t, self.data, Feedback(loss_sharpness=loss_s, loss_calibration=loss_c))
        fit_seconds = r.fit_seconds + time.perf_counter() - tic  # OSCBO's FTPL step runs here
        self.rows.add_round(
            x=x,
            y=y,
            f=f,
            lengthscale=r.theta,
            mu=mu,
            sigma=variance.sqrt(),
            halfwidth=halfwidth,
            covered=(residual.abs() <= halfwidth).to(DTYPE),
            loss_sharpness=loss_s,
            loss_calibration=loss_c,
            violation=self.violation,
            state=r.state,
            seconds=(fit_seconds / S, r.acq_seconds / S, oracle_seconds / S),
            jitter=r.model.jitter_events,
        )
        self.t, self._round = r.t, None


def run(
    task_name: str,
    method_name: str,
    seeds: Sequence[int],
    budget: int,
    n_init: int,
    settings: Settings | None = None,
    *,
    noise_std: float = 0.0,
    task_options: dict[str, Any] | None = None,
    device: str = "auto",
    experiment: str = "adhoc",
    label: str | None = None,
    log_every: int = 0,
) -> RunResult:
    """Run ``method_name`` on ``task_name`` for every seed in ``seeds``, in lockstep.

    Args:
        task_name, method_name: registry names (:mod:`oscbo.tasks`, :mod:`oscbo.methods`).
        seeds: the replications; each gets its own record.
        budget: T, BO rounds after the initial design (T + n_init oracle calls).
        n_init: size of the initial design.
        settings: run settings (defaults: :class:`Settings`).
        noise_std: standard deviation of Gaussian observation noise (0: noise-free).
        task_options: keyword arguments of the task's factory (e.g. Lunar's ``episodes``).
        device: ``auto``, ``cpu`` or ``cuda[:i]``.
        experiment, label: identifiers written into the records (label defaults to the
            method name; ablations give variants their own label).
        log_every: print a progress line (round, best value per seed, seconds) to stderr
            every this many rounds; 0 for none.

    Returns:
        A :class:`RunResult` with one record table per seed that finished, and the seeds that
        ended at an objective fault (the task raised, or returned NaN or inf) in ``failed``.
    """
    settings = settings or Settings()
    if budget < 1 or n_init < 2:
        raise ValueError(f"need budget >= 1 and n_init >= 2, got budget={budget}, n_init={n_init}")
    remaining = [int(s) for s in seeds]
    if len(set(remaining)) != len(remaining):
        raise ValueError(f"seeds must be distinct, got {remaining}")
    failed: dict[int, FailedRun] = {}
    while remaining:
        try:
            result = _run_lockstep(task_name, method_name, remaining, budget, n_init, settings, noise_std=noise_std,
                                   task_options=task_options, device=device, experiment=experiment, label=label,
                                   log_every=log_every)
        except ObjectiveFault as fault:
            print(f"{task_name} {method_name}: failed run(s), {fault}; the other seeds run again without them",
                  file=sys.stderr, flush=True)
            failed.update(fault.failed)
            remaining = [seed for seed in remaining if seed not in fault.failed]
            continue
        result.failed = dict(sorted(failed.items()))
        return result
    return RunResult(tables={}, meta=next(iter(failed.values())).meta, failed=dict(sorted(failed.items())))


def _run_lockstep(task_name: str, method_name: str, seeds: list[int], budget: int, n_init: int, settings: Settings, *,
                  noise_std: float, task_options: dict[str, Any] | None, device: str, experiment: str,
                  label: str | None, log_every: int) -> RunResult:
    """:func:`run` (arguments checked there) for seeds that all finish; raises
    :class:`ObjectiveFault` at the first fault."""
    dev = resolve_device(device)
    mkl = reproducibility.warn_unless_strict()
    task = tasks.get(task_name, **(task_options or {}))
    method = methods.build(method_name, settings, budget, seeds)
    s = method.settings
    d = task.dim
    label = label or method_name
    started = provenance.now()
    escalations_before = JITTER_ESCALATIONS["cholesky"]
    noise_streams = [generator("observation-noise", task_name, seed) for seed in seeds]
    loop: Loop | None = None  # from the initial design on

    def describe(status: str) -> dict[str, Any]:
        """The run's sidecar fields (each seed's record adds its own seed)."""
        return {
            "experiment": experiment,
            "task": task.describe(),
            "method": label,
            "method_name": method_name,
            "settings": s.to_dict(),
            "budget": budget,
            "n_init": n_init,
            "noise_std": noise_std,
            "task_options": task_options or {},
            "batch_seeds": seeds,
            "device": str(dev),
            "hardware": provenance.machine(),
            "threads": torch.get_num_threads(),
            "mkl_reproducibility": mkl,
            "started": started,
            "finished": provenance.now(),
            "versions": provenance.package_versions(),
            "git_commit": provenance.git_commit(),
            # every escalation of the batch, refits included (the record's column: posteriors only)
            "jitter_escalations_batch": JITTER_ESCALATIONS["cholesky"] - escalations_before,
            "status": status,
        }

    def seed_table(i: int) -> pd.DataFrame:
        """Seed ``i``'s record so far (no rows, and no lengthscale columns, before the first call)."""
        if loop is None or not loop.rows.columns:
            return pd.DataFrame(columns=records.record_columns(d, 0))
        return loop.rows.table(i, experiment=experiment, task=task_name, method=label, seed=seeds[i],
                          optimal_value=task.optimal_value, dim=d)

    def evaluate_each(x: torch.Tensor) -> tuple[torch.Tensor, dict[int, str]]:
        """f seed by seed, to find the seeds whose points make the task raise (their f: NaN)."""
        values, reasons = [], {}
        for i, seed in enumerate(seeds):
            try:
                values.append(task(x[i : i + 1].cpu()).to(x))
            except Exception as error:  # a simulator's failure, whatever its type
                reasons[seed] = f"task {task_name} raised {type(error).__name__}: {error} (query {x[i].tolist()})"
                values.append(torch.full((1, x.shape[-2]), math.nan, dtype=x.dtype, device=x.device))
        return torch.cat(values), reasons

    def evaluate(x: torch.Tensor, step: int) -> tuple[torch.Tensor, torch.Tensor, float]:
        """Noise-free f and observed y at ``S x m x d`` points, and the seconds it took.

        Raises:
            ObjectiveFault: naming the seeds whose points made the task raise or return NaN or
                inf (``step``: the evaluation's first oracle call). A failure that no seed's
                points reproduce alone is not a seed's: it propagates as it is.
        """
        tic = time.perf_counter()
        reasons: dict[int, str] = {}
        try:
            f = task(x.cpu()).to(x)
        except Exception:
            f, reasons = evaluate_each(x)
            if not reasons:
                raise
        noise = torch.stack([noise_std * torch.randn(x.shape[-2], generator=g, dtype=DTYPE) for g in noise_streams])
        y = f + noise.to(x)
        finite = torch.isfinite(f) & torch.isfinite(y)
        for i in torch.nonzero(~finite.all(-1)).flatten().tolist():
            j = int(torch.nonzero(~finite[i])[0])
            reasons.setdefault(seeds[i], f"task {task_name} returned {f[i, j].item()} at query {x[i, j].tolist()}")
        if reasons:
            meta = describe("failed")
            raise ObjectiveFault({
                seed: FailedRun(step, reasons[seed], seed_table(i), meta)
                for i, seed in enumerate(seeds) if seed in reasons
            })
        return f, y, time.perf_counter() - tic

    X = torch.stack([initial_design(task_name, d, n_init, seed) for seed in seeds]).to(dev)
    f, y, oracle_time = evaluate(X, 0)
    loop = Loop(method, Observations(X, y), f, oracle_time)
    loop_start = time.perf_counter()

    for t in range(1, budget + 1):
        x_next = loop.ask().clamp(0.0, 1.0)  # an optimiser's overshoot is clipped: the record holds the point evaluated
        f_next, y_next, oracle_time = evaluate(x_next.unsqueeze(-2), n_init + t - 1)
        loop.tell(x_next, y_next.squeeze(-1), f_next.squeeze(-1), oracle_time)
        if log_every and (t % log_every == 0 or t == budget):
            best = ", ".join(f"{value:.4g}" for value in loop.data.y.max(-1).values.tolist())
            print(f"{task_name} {method_name}: round {t}/{budget}, best y per seed [{best}], "
                  f"{time.perf_counter() - loop_start:.1f} s", file=sys.stderr, flush=True)

    tables = {seed: seed_table(i) for i, seed in enumerate(seeds)}
    meta = describe("complete")
    return RunResult(tables=tables, meta=meta)


def write(result: RunResult, out_dir: str | Path) -> list[Path]:
    """Write one record per seed as ``out_dir/seed{S}.parquet`` (+ ``.json``), atomically.

    A failed run's record holds its oracle calls before the fault; its sidecar has ``status:
    failed``, the ``reason`` and the ``failed_step``. Returns the paths of the finished records.
    """
    paths = []
    for seed, table in result.tables.items():
        path = records.record_path(out_dir, seed)
        records.write_record(path, table, {**result.meta, "seed": seed, "record": path.name})
        paths.append(path)
    for seed, failed in result.failed.items():
        path = records.record_path(out_dir, seed)
        records.write_record(path, failed.table, {**failed.meta, "seed": seed, "record": path.name,
                                                  "reason": failed.reason, "failed_step": failed.step})
    return paths


def run_job(
    job: dict[str, Any],
    manifest: str | Path,
    *,
    device: str = "auto",
    threads: int = 1,
    device_locks: str | Path | None = None,
) -> list[Path]:
    """Run one workflow job -- a seed chunk of (experiment, task, method) -- and record it.

    Writes each seed's record beside ``manifest``, then the manifest itself (a JSON list of
    the records and the job), last and atomically: a job killed before the end leaves no
    manifest, so the workflow re-runs it. A method that cannot run here
    (:class:`MethodUnavailableError`) gets a manifest with status ``not run`` and its
    reason, so the rest of the study goes on and the report says why. Seeds that ended at an
    objective fault are listed under ``failed`` (seed, step, reason, record), not ``records``.

    Args:
        job: ``experiment, task, method (label), method_name, seeds, budget, n_init,
            noise_std, task_options, settings`` as resolved by the workflow.
        manifest: path of the job's manifest.
        device, threads: where and on how many threads to run; ``auto`` and ``cuda`` claim a
            CUDA device for the job's life (:func:`oscbo.devices.claim`), or run on the CPU
            and say so in the log and the records' ``device_note``.
        device_locks: folder of the device lock files (default: node-local).
    """
    limit_threads(threads)
    tic = time.perf_counter()
    with devices.claim(device, device_locks) as claimed:
        print(f"device: {claimed.note}", file=sys.stderr, flush=True)
        try:
            result = run(
                job["task"],
                job["method_name"],
                job["seeds"],
                job["budget"],
                job["n_init"],
                Settings.from_dict(job["settings"]),
                noise_std=job["noise_std"],
                task_options=job["task_options"],
                device=claimed.device,
                experiment=job["experiment"],
                label=job["method"],
                log_every=PROGRESS_EVERY,
            )
        except MethodUnavailableError as error:
            print(f"not run: {error}", file=sys.stderr)
            records.write_json(manifest, {**job, "status": "not run", "reason": str(error), "records": []})
            return []
        result.meta["device_note"] = claimed.note
        paths = write(result, Path(manifest).parent)
        records.write_json(
            manifest,
            {**job, "status": "complete", "records": [p.name for p in paths],
             "failed": [{"seed": seed, "step": failed.step, "reason": failed.reason,
                         "record": records.record_path(".", seed).name} for seed, failed in result.failed.items()],
             "device": result.meta["device"], "device_note": claimed.note, "threads": threads,
             "seconds": time.perf_counter() - tic, "finished": provenance.now()},
        )
    return paths


class _Rows:
    """Accumulates the per-step columns of S records (rows in oracle-call order).

    Columns that only BO rounds have (lengthscales, a method's own state such as
    LB-GP-UCB's candidate count) are padded with NaN on the initial design.
    """

    STANDARD_STATE = ("lambda", "rm_phase")

    def __init__(self, seeds: int, n_init: int) -> None:
        self.S, self.n_init = seeds, n_init
        self.columns: dict[str, list[np.ndarray]] = {}
        self.extra: list[str] = []

    def _append(self, name: str, values: torch.Tensor | np.ndarray | list) -> None:
        array = values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else np.asarray(values)
        self.columns.setdefault(name, []).append(array.reshape(self.S, -1))

    def add_initial(self, X: torch.Tensor, y: torch.Tensor, f: torch.Tensor, oracle_seconds: float) -> None:
        n = X.shape[-2]
        nan = np.full((self.S, n), np.nan)
        for i in range(X.shape[-1]):
            self._append(f"x_{i}", X[..., i])
        self._append("y", y)
        self._append("f", f)
        # the initial design was chosen by no posterior: no diagnostics, no fit or acquisition
        for name in records.DIAGNOSTIC_COLUMNS + ["fit_seconds", "acq_seconds"]:
            if name != "rm_phase":
                self._append(name, nan)
        self._append("rm_phase", np.full((self.S, n), "", dtype=object))
        self._append("oracle_seconds", np.full((self.S, n), oracle_seconds))
        self._append("jitter_events", np.zeros((self.S, n), dtype=np.int64))

    def add_round(self, *, x, y, f, lengthscale, mu, sigma, halfwidth, covered, loss_sharpness, loss_calibration,
                  violation, state, seconds, jitter) -> None:
        for i in range(x.shape[-1]):
            self._append(f"x_{i}", x[..., i])
        for name, values in (("y", y), ("f", f), ("mu", mu), ("sigma", sigma), ("halfwidth", halfwidth),
                             ("covered", covered), ("loss_sharpness", loss_sharpness),
                             ("loss_calibration", loss_calibration), ("violation", violation),
                             ("jitter_events", jitter)):
            self._append(name, values)
        for i in range(lengthscale.shape[-1]):
            self._append(f"lengthscale_{i}", lengthscale[..., i])
        self._append("lambda", state.get("lambda", np.full(self.S, np.nan)))
        self._append("rm_phase", np.asarray(state.get("rm_phase", [""] * self.S), dtype=object))
        for name, values in state.items():
            if name not in self.STANDARD_STATE:
                if name not in self.extra:
                    self.extra.append(name)
                self._append(name, values)
        for name, value in zip(("fit_seconds", "acq_seconds", "oracle_seconds"), seconds):
            self._append(name, np.full(self.S, value))

    def table(self, i: int, *, experiment: str, task: str, method: str, seed: int,
              optimal_value: float | None, dim: int) -> pd.DataFrame:
        columns = {name: np.concatenate([chunk[i] for chunk in chunks]) for name, chunks in self.columns.items()}
        n = len(columns["y"])
        for name, values in columns.items():
            if len(values) < n:
                columns[name] = np.concatenate([np.full(n - len(values), np.nan), values.astype(float)])
        f = columns["f"]
        best_f = np.maximum.accumulate(f)
        f_star = np.nan if optimal_value is None else optimal_value
        instant = np.where(np.arange(n) >= self.n_init, f_star - f, 0.0)
        table = pd.DataFrame({
            "experiment": experiment, "task": task, "method": method, "seed": seed,
            "step": np.arange(n), "phase": np.where(np.arange(n) < self.n_init, "init", "bo"),
            **columns, "best_f": best_f, "simple_regret": f_star - best_f,
            "cumulative_regret": np.cumsum(instant),
        })
        count = len([c for c in columns if c.startswith("lengthscale_")])
        return table[records.record_columns(dim, count) + self.extra]
