"""The seeds of one (task, method) in lockstep, as one batched tensor program.

:func:`run_lockstep` runs a :class:`~oscbo.study.job.Job`, the one description of a run that
the workflow's jobs (:func:`oscbo.run.job.run_job`) and the records' sidecars
(:func:`oscbo.run.sidecar.sidecar`) share, in batches of its seeds (:class:`Batch`: all of them,
then those left after a fault); :func:`run` builds the job from plain arguments, for a run by hand.

Every random stream is per seed and named (:mod:`oscbo.seeding`): the initial design by
(task, seed), the acquisition's raw samples by (seed, round), the observation noise by
(task, seed), a method's own streams by the method. A seed's trajectory therefore does not
depend on which other seeds share its batch, and the same seed gives the same numbers.

Objective faults (docs/user-guide.md, "Faults and bad input"): every query is clipped to [0, 1]^d
before the oracle call (the record holds the clipped point). A seed whose objective raises, or
returns NaN or inf, ends as a *failed run*: its record keeps the oracle calls before the fault and
its sidecar says ``status: failed`` and why; the batch's other seeds are run again without it,
which gives them the very trajectory they had (batch invariance), so they go on as if it never was
there.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import torch

from oscbo import provenance, records, reproducibility
from oscbo.methods.base import Observations, build_method
from oscbo.model import DTYPE
from oscbo.model.linalg import JITTER_ESCALATIONS
from oscbo.run.devices import limit_threads, resolve_device
from oscbo.run.loop import Loop
from oscbo.run.sidecar import sidecar
from oscbo.seeding import generator, sobol_points, stable_seed
from oscbo.settings import Settings
from oscbo.study.job import Job, JobMethod, JobTask
from oscbo.tasks.base import build_task


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
    """A user's objective (ask/tell, :mod:`oscbo.api.optimizer`) returned NaN or inf: never a silent NaN."""


class ObjectiveFault(RuntimeError):
    """The task raised, or returned NaN or inf, for some seeds of a batch (never a silent NaN)."""

    def __init__(self, failed: dict[int, FailedRun]) -> None:
        super().__init__("; ".join(f"seed {seed}: {run.reason}" for seed, run in failed.items()))
        self.failed = failed


def initial_design(task_name: str, dim: int, n_init: int, seed: int) -> torch.Tensor:
    """Scrambled Sobol design seeded by (task, seed): the same for every method (protocol row "Initial design")."""
    return sobol_points(n_init, dim, stable_seed("initial-design", task_name, seed))


@dataclass
class RunResult:
    """The records of one batched run, one table per seed, and what it ran on."""

    tables: dict[int, pd.DataFrame]
    meta: dict[str, Any] = field(default_factory=dict)
    failed: dict[int, FailedRun] = field(default_factory=dict)


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
    experiment: str = "adhoc",
    label: str | None = None,
    device: str = "auto",
    log_every: int = 0,
    threads: int | None = 1,
    method_options: dict[str, Any] | None = None,
) -> RunResult:
    """Run ``method_name`` on ``task_name`` for every seed in ``seeds``, in lockstep: the
    :class:`~oscbo.study.job.Job` of these arguments, run by :func:`run_lockstep`.

    Args:
        task_name, method_name: registry names (:mod:`oscbo.tasks`, :mod:`oscbo.methods`).
        seeds: the replications; each gets its own record.
        budget: T, BO rounds after the initial design (T + n_init oracle calls).
        n_init: size of the initial design.
        settings: run settings (defaults: :class:`Settings`).
        noise_std: standard deviation of Gaussian observation noise (0: noise-free).
        task_options: keyword arguments of the task's factory (e.g. Lunar's ``episodes``).
        experiment, label: identifiers written into the records (label defaults to the
            method name; ablations give variants their own label).
        device, log_every, threads: where and how it runs, as for :func:`run_lockstep`.
        method_options: the method's own settings, keyword arguments of its class (refused,
            named, where it takes none of that name).

    Returns:
        As :func:`run_lockstep`.
    """
    job = Job(
        experiment=experiment,
        task=JobTask(name=task_name, noise_std=noise_std, options=dict(task_options or {})),
        method=JobMethod(
            label=label or method_name,
            name=method_name,
            settings=(settings or Settings()).to_dict(),
            options=dict(method_options or {}),
        ),
        seeds=tuple(int(seed) for seed in seeds),
        budget=budget,
        n_init=n_init,
    )
    return run_lockstep(job, device=device, log_every=log_every, threads=threads)


def run_lockstep(
    job: Job,
    *,
    device: str = "auto",
    log_every: int = 0,
    threads: int | None = 1,
    workers: int | None = None,
) -> RunResult:
    """Run ``job``: its method on its task for every seed of the job, in lockstep.

    The job says what to compute (and so what the records hold); the other arguments say where
    and how, and change no number of the records.

    Args:
        job: the run: task and method (registry names), the label and experiment written into
            the records, seeds, budget T (BO rounds after the initial design: T + n_init oracle
            calls), n_init, noise_std, task_options and settings (:meth:`Settings.to_dict`,
            partial or empty for the defaults).
        device: ``auto``, ``cpu`` or ``cuda[:i]``.
        log_every: print a progress line (round, best value per seed, seconds) to stderr
            every this many rounds; 0 for none.
        threads: caps torch's and the BLAS pools' threads of this process at this many first (a
            GP on a hundred points runs fastest on one thread, and concurrent runs do not
            oversubscribe the cores; the numbers are the same either way); None leaves them.
        workers: a parallel task's oracle processes (the ``workers`` of its factory, e.g. Lunar
            Lander's: the same values on any number); None leaves the factory's default. The
            sidecar's ``task_options`` say how many it had.

    Returns:
        A :class:`RunResult` with one record table per seed that finished, and the seeds that
        ended at an objective fault (the task raised, or returned NaN or inf) in ``failed``.
    """
    if threads is not None:
        limit_threads(threads)
    if job.budget < 1 or job.n_init < 2:
        raise ValueError(f"need budget >= 1 and n_init >= 2, got budget={job.budget}, n_init={job.n_init}")
    remaining = [int(seed) for seed in job.seeds]
    if len(set(remaining)) != len(remaining):
        raise ValueError(f"seeds must be distinct, got {remaining}")
    task_options = {**job.task.options, **({} if workers is None else {"workers": workers})}
    failed: dict[int, FailedRun] = {}
    while remaining:
        try:
            batch = Batch(dataclasses.replace(job, seeds=tuple(remaining)), task_options=task_options, device=device)
            result = batch.run(log_every)
        except ObjectiveFault as fault:
            print(
                f"{job.task.name} {job.method.name}: failed run(s), {fault}; the other seeds run again without them",
                file=sys.stderr,
                flush=True,
            )
            failed.update(fault.failed)
            remaining = [seed for seed in remaining if seed not in fault.failed]
            continue
        result.failed = dict(sorted(failed.items()))
        return result
    return RunResult(tables={}, meta=next(iter(failed.values())).meta, failed=dict(sorted(failed.items())))


class Batch:
    """A batch of a job's seeds in lockstep, run to the end or to its first objective fault: the
    job, its task and method built for these seeds, their observation-noise streams, and the
    :class:`~oscbo.run.loop.Loop` from the initial design on.

    Args:
        job: the job, its ``seeds`` those of the batch (:func:`run_lockstep` checks its arguments).
        task_options: the job's and the task's ``workers``, if given.
        device: ``auto``, ``cpu`` or ``cuda[:i]``.
    """

    def __init__(self, job: Job, *, task_options: dict[str, Any], device: str) -> None:
        self.job = job
        self.device = resolve_device(device)
        reproducibility.warn_unless_pinned()
        self.seeds = list(job.seeds)
        self.task_options = dict(task_options)
        self.task = build_task(job.task.name, **task_options)
        settings = Settings.from_dict(job.method.settings)
        self.method = build_method(job.method.name, settings, job.budget, self.seeds, job.method.options)
        self.method.task = self.task.describe()
        self.started = provenance.now()
        self._escalations = JITTER_ESCALATIONS["cholesky"]
        self.noise_streams = [generator("observation-noise", job.task.name, seed) for seed in self.seeds]
        self.loop: Loop | None = None

    def sidecar(self, status: str) -> dict[str, Any]:
        """The run's sidecar fields (each seed's record adds its own seed)."""
        # every escalation of the batch, refits included (the record's column: posteriors only)
        return sidecar(
            self.job,
            task=self.task.describe(),
            settings=self.method.settings,
            device=self.device,
            started=self.started,
            status=status,
            noise_std=self.job.task.noise_std,
            task_options=dict(self.task_options),
            jitter_escalations_batch=JITTER_ESCALATIONS["cholesky"] - self._escalations,
        )

    def table(self, i: int) -> pd.DataFrame:
        """Seed ``i``'s record so far (no rows, and no lengthscale columns, before the first call)."""
        if self.loop is None or not self.loop.rows.columns:
            return pd.DataFrame(columns=records.record_columns(self.task.dim, 0))
        return self.loop.rows.table(
            i,
            experiment=self.job.experiment,
            task=self.job.task.name,
            method=self.job.method.label,
            seed=self.seeds[i],
            optimal_value=self.task.optimal_value,
            dim=self.task.dim,
        )

    def _evaluate_each(self, x: torch.Tensor) -> tuple[torch.Tensor, dict[int, str]]:
        """f seed by seed, to find the seeds whose points make the task raise (their f: NaN)."""
        values, reasons = [], {}
        for i, seed in enumerate(self.seeds):
            try:
                values.append(self.task(x[i : i + 1].cpu()).to(x))
            except Exception as error:  # a simulator's failure, whatever its type
                reasons[seed] = (
                    f"task {self.job.task.name} raised {type(error).__name__}: {error} (query {x[i].tolist()})"
                )
                values.append(torch.full((1, x.shape[-2]), math.nan, dtype=x.dtype, device=x.device))
        return torch.cat(values), reasons

    def evaluate(self, x: torch.Tensor, step: int) -> tuple[torch.Tensor, torch.Tensor, float]:
        """Noise-free f and observed y at ``S x m x d`` points, and the seconds it took.

        Raises:
            ObjectiveFault: naming the seeds whose points made the task raise or return NaN or
                inf (``step``: the evaluation's first oracle call). A failure that no seed's
                points reproduce alone is not a seed's: it propagates as it is.
        """
        tic = time.perf_counter()
        reasons: dict[int, str] = {}
        try:
            f = self.task(x.cpu()).to(x)
        except Exception:
            f, reasons = self._evaluate_each(x)
            if not reasons:
                raise
        noise = torch.stack(
            [self.job.task.noise_std * torch.randn(x.shape[-2], generator=g, dtype=DTYPE) for g in self.noise_streams]
        )
        y = f + noise.to(x)
        finite = torch.isfinite(f) & torch.isfinite(y)
        for i in torch.nonzero(~finite.all(-1)).flatten().tolist():
            j = int(torch.nonzero(~finite[i])[0])
            reasons.setdefault(
                self.seeds[i], f"task {self.job.task.name} returned {f[i, j].item()} at query {x[i, j].tolist()}"
            )
        if reasons:
            meta = self.sidecar("failed")
            raise ObjectiveFault(
                {
                    seed: FailedRun(step, reasons[seed], self.table(i), meta)
                    for i, seed in enumerate(self.seeds)
                    if seed in reasons
                }
            )
        return f, y, time.perf_counter() - tic

    def run(self, log_every: int = 0) -> RunResult:
        """The initial design, then the job's ``budget`` rounds; raises :class:`ObjectiveFault` at
        the first fault. ``log_every``: as for :func:`run_lockstep`."""
        job, d = self.job, self.task.dim
        X = torch.stack([initial_design(job.task.name, d, job.n_init, seed) for seed in self.seeds]).to(self.device)
        f, y, oracle_time = self.evaluate(X, 0)
        self.loop = loop = Loop(self.method, Observations(X, y), f, oracle_time)
        loop_start = time.perf_counter()
        for t in range(1, job.budget + 1):
            # an optimiser's overshoot is clipped: the record holds the point evaluated
            x_next = loop.ask().clamp(0.0, 1.0)
            f_next, y_next, oracle_time = self.evaluate(x_next.unsqueeze(-2), job.n_init + t - 1)
            loop.tell(x_next, y_next.squeeze(-1), f_next.squeeze(-1), oracle_time)
            if log_every and (t % log_every == 0 or t == job.budget):
                best = ", ".join(f"{value:.4g}" for value in loop.data.y.max(-1).values.tolist())
                print(
                    f"{job.task.name} {job.method.name}: round {t}/{job.budget}, best y per seed [{best}], "
                    f"{time.perf_counter() - loop_start:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
        tables = {seed: self.table(i) for i, seed in enumerate(self.seeds)}
        return RunResult(tables=tables, meta=self.sidecar("complete"))
