"""What a study's jobs cost on this machine, measured (``project_full_study.py``'s step 1) and
priced from those costs alone (:class:`Pricing`): one seed-run of each (task, method, budget,
n_init, cost-relevant settings) in a lockstep job, how a method's per-seed cost falls with a job's
seeds, Lunar Lander's oracle call by call on its simulator processes, a process start-up, and
TabICLv2's seed-round on a GPU where there is one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from lunar_rounds import PoolModel, episode_seconds, measure_pool  # benchmarks/ is on the path of the scripts in it
from performance import NEEDS_TRUE_LENGTHSCALE

from oscbo import methods, tasks
from oscbo import run as engine
from oscbo.settings import Settings
from oscbo.study.job import Job, JobTask, chunk_name
from oscbo.study.jobs import placement
from oscbo.tasks.lunar import EPISODES

#: Settings that change what a run costs much (the kernel's smoothness or LogEI change it little).
COST_SETTINGS = ("ard", "acq_restarts", "acq_raw_samples", "refit_steps")


COLD_JOB = """
import sys, tempfile, time
from pathlib import Path
from oscbo.run import run_job
from oscbo.study.job import Job, JobMethod, JobTask
job = Job("startup", JobTask("levy5"), JobMethod("gp-ucb-mll", "gp-ucb-mll"), (0,), 2, 5)
run_job(job, Path(tempfile.mkdtemp(), "seeds0-0.json"), device="cpu")
"""


def job_startup_seconds() -> float:
    """What a workflow job pays before its first round runs warm: a fresh Python process importing
    what a BO job imports, and its first calls (lazy imports, first-call set-up), writing its
    records. Measured as a cold process running a 2-round job (best of 3) less the same job
    run warm in this process."""
    times = []
    for _ in range(3):
        tic = time.perf_counter()
        subprocess.run([sys.executable, "-c", COLD_JOB], check=True, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - tic)
    engine.run("levy5", "gp-ucb-mll", [0], 2, 5, threads=1)  # warm up this process
    tic = time.perf_counter()
    engine.run("levy5", "gp-ucb-mll", [0], 2, 5, threads=1)
    return min(times) - (time.perf_counter() - tic)


#: Episodes of the measured lunar12 runs, whose points are re-flown at the configured episodes. BO
#: on 2 episodes learns controllers that crash early: re-flown at 50, its rounds' points flew 102
#: steps an episode, against 237 for a 50-episode job's (main's gp-ucb-mll); on 10, 229.
MEASURED_EPISODES = 10


def lunar_calls(tables: list, job: Job, every: int) -> list[dict]:
    """The oracle calls of a measured lunar12 run (``tables``: its seeds' records), re-flown at the
    job's episodes: the initial design, and the middle BO round of each ``every`` for them all.

    Returns one entry per call re-flown: ``calls`` (the calls it stands for), ``points`` (per seed
    per call) and ``episodes`` (each episode's serial seconds, the seeds' points in the pool's order).
    """
    episodes = job.task.options.get("episodes", EPISODES)
    columns = [f"x_{i}" for i in range(12)]

    def flown(rows: slice) -> list[float]:
        weights = [2 * point for table in tables for point in table[columns].to_numpy()[rows]]  # [0, 1] -> [0, 2]
        return episode_seconds(weights, episodes)

    found = [{"calls": 1, "points": job.n_init, "episodes": flown(slice(0, job.n_init))}]
    for first in range(1, job.budget + 1, every):
        last = min(first + every - 1, job.budget)
        middle = job.n_init + (first + last) // 2 - 1  # BO round t is the record's row n_init + t - 1
        found.append({"calls": last - first + 1, "points": 1, "episodes": flown(slice(middle, middle + 1))})
    return found


CHECK_JOB = """
import json, sys
from pathlib import Path
from oscbo.run import run_job
from oscbo.study.job import Job
run_job(Job.from_dict(json.loads(sys.argv[1])), Path(sys.argv[2], "seeds.json"), device="cpu", threads=int(sys.argv[3]))
"""


def check(job: Job, config: dict[str, Any], pricing: Pricing) -> None:
    """Run ``job`` as the workflow runs it (a fresh process, :func:`oscbo.run.run_job` on the cores
    its placement declares, at most this machine's) and print its seconds, and its oracle's (from
    its records), beside the projection's (``pricing``: seconds and core-seconds). The core-seconds
    (its processes' CPU time) tell a model's error from a busy machine's: other work on the cores
    lengthens a job's seconds, not its CPU time."""
    if on_gpu(job):
        raise SystemExit(f"--check runs CPU jobs only; {job.method.label} runs on a GPU")
    threads = min(placement(job, config).threads, os.cpu_count() or 1)
    seconds = pricing.startup + pricing.price(job, threads)
    oracle = pricing.oracle(job, threads)
    projected = seconds, seconds - oracle[0] + oracle[1]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        tic = time.perf_counter()
        subprocess.run([sys.executable, "-c", CHECK_JOB, json.dumps(job.to_dict()), folder, str(threads)], check=True)
        real = time.perf_counter() - tic
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the job's process and its pool's, all waited for
        cores = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        real_oracle = sum(pd.read_parquet(path)["oracle_seconds"].sum() for path in Path(folder).glob("seed*.parquet"))
    print(
        f"\n{job.experiment}/{job.task.name}/{job.method.label}/{chunk_name(job.seeds)}, "
        f"{len(job.seeds)} seeds x {job.budget} "
        f"rounds on {threads} cores (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after):\n"
        f"{'':10s} {'seconds':>8s} {'oracle':>8s} {'core-s':>8s} {'oracle core-s':>14s}\n"
        f"{'projected':10s} {projected[0]:8.1f} {oracle[0]:8.1f} {projected[1]:8.1f} {oracle[1]:14.1f}\n"
        f"{'real':10s} {real:8.1f} {real_oracle:8.1f} {cores:8.1f} {'':>14s}\n"
        f"real / projected: {real / projected[0]:.2f} s, {cores / projected[1]:.2f} core-s"
    )


def batching_reference(job: Job) -> Job:
    """The job whose per-seed cost at two batch sizes stands for ``job``'s method: on hartmann6, 100
    rounds; on the job's own task for a method that runs only where the truth is known (GP-UCB at
    the true kernel)."""
    task = job.task.name if job.method.name in NEEDS_TRUE_LENGTHSCALE else "hartmann6"
    if task != job.task.name:
        job = dataclasses.replace(job, task=JobTask(task, job.task.noise_std, entry=tasks.REGISTRY[task].definition()))
    return dataclasses.replace(job, budget=100, n_init=10)


def on_gpu(job: Job) -> bool:
    """Whether ``job``'s method runs on a GPU (TabICLv2): its runs are priced by seed-round, not measured."""
    return methods.REGISTRY[job.method.name].gpu


def cost_key(job: Job, batch: int) -> str:
    settings = {key: job.method.settings.get(key) for key in COST_SETTINGS}
    return json.dumps([job.task.name, job.method.name, job.budget, job.n_init, batch, settings])


def measure(job: Job, batch: int, lunar_every: int) -> dict:
    """Seconds per seed-run of ``job``'s kind and the oracle's part of it (serial); for lunar12,
    its oracle calls re-flown at the configured episodes (:func:`lunar_calls`)."""
    seeds = list(range(batch))
    options = {**job.task.options, **({"episodes": MEASURED_EPISODES} if job.task.name == "lunar12" else {})}
    tic = time.perf_counter()
    result = engine.run(
        job.task.name,
        job.method.name,
        seeds,
        job.budget,
        job.n_init,
        Settings.from_dict(job.method.settings),
        task_options=options,
        threads=1,
    )
    seconds = (time.perf_counter() - tic) / len(seeds)
    oracle = sum(table["oracle_seconds"].sum() for table in result.tables.values()) / len(seeds)
    if job.task.name != "lunar12":
        return {"seconds": seconds, "oracle": oracle}
    calls = lunar_calls(list(result.tables.values()), job, lunar_every)
    flown = sum(call["calls"] * sum(call["episodes"]) for call in calls) / len(seeds)
    return {"seconds": seconds - oracle + flown, "oracle": flown, "calls": calls}


def measure_on_gpu(gpu_jobs: list[Job], assumed: float, note: str) -> tuple[float, str]:
    """With CUDA: a GP method's seed-run on the GPU beside the CPU (should it move there?), and a
    TabICLv2 seed-round when its checkpoint is on disk (the projection then uses it)."""
    for device in ("cpu", "cuda"):
        tic = time.perf_counter()
        engine.run("hartmann6", "gp-ucb-mll", list(range(10)), 100, 10, device=device, threads=1)
        print(
            f"gp-ucb-mll, hartmann6, 10 seeds x 100 rounds on {device}: {(time.perf_counter() - tic) / 10:.2f} s "
            "per seed-run",
            flush=True,
        )
    if gpu_jobs and Path(gpu_jobs[0].method.settings["tabicl_checkpoint"]).is_file():
        job = gpu_jobs[0]
        tic = time.perf_counter()
        engine.run(
            job.task.name,
            "tabicl",
            [0],
            3,
            job.n_init,
            Settings.from_dict(job.method.settings),
            task_options={
                **job.task.options,
                **({"episodes": MEASURED_EPISODES} if job.task.name == "lunar12" else {}),
            },
            device="cuda",
        )
        measured = (time.perf_counter() - tic) / 3
        return measured, f"TabICLv2: {len(gpu_jobs)} runs on GPUs, {measured:.2f} s per seed-round measured on this GPU"
    return assumed, note


def pool_model(costs: dict[str, Any]) -> PoolModel:
    """Lunar's pool overheads as ``costs`` keep them (fitted by :func:`lunar_rounds.measure_pool`)."""
    return PoolModel(**{key: value for key, value in costs["lunar_pool"].items() if key != "rounds"})


def measure_costs(
    study: list[Job], episodes: int, batch: int, lunar_every: int, path: Path | None
) -> tuple[dict[str, Any], float]:
    """The costs that pricing ``study`` needs (:class:`Pricing`), measured here, single-threaded,
    where ``path`` (``--costs``) does not keep them yet, and kept there as each is measured.

    They are: a workflow job's start-up (:func:`job_startup_seconds`); with lunar12 jobs, the pool's
    overheads on 2 workers, fitted from rounds at the configured ``episodes``
    (:func:`lunar_rounds.measure_pool`); a seed-run of each CPU job's kind, in a lockstep job of
    ``batch`` seeds (:func:`measure`, its lunar12 calls re-flown per ``lunar_every`` rounds); and
    how each method's per-seed cost falls with a job's seeds: its :func:`batching_reference` at
    ``batch`` seeds and at the study's largest job. Each is printed as it is found.

    Returns the costs and the seconds of seed-runs this call measured (0: ``path`` kept them all).
    """
    engine.limit_threads(1)
    costs = json.loads(path.read_text()) if path and path.is_file() else {}

    def keep() -> None:
        if path:
            path.write_text(json.dumps(costs, indent=1))

    if "startup" not in costs:
        costs["startup"] = job_startup_seconds()
    print(f"job start-up {costs['startup']:.2f} s", flush=True)
    if any(job.task.name == "lunar12" for job in study) and "lunar_pool" not in costs:
        fitted, rounds = measure_pool(episodes)
        costs["lunar_pool"] = {**dataclasses.asdict(fitted), "rounds": [[sum(c), len(c), t] for c, t in rounds]}
        keep()
    if "lunar_pool" in costs:
        pool = pool_model(costs)
        measured_rounds = ", ".join(
            f"{count} episodes {serial:.2f} s serially, {seconds:.2f} s pooled"
            for serial, count, seconds in costs["lunar_pool"]["rounds"]
        )
        print(
            f"lunar12 pool on 2 workers: {1e3 * pool.per_episode:.2f} ms per episode, {1e3 * pool.per_round:.0f} ms "
            f"per round, {pool.start:.2f} s to start (fitted from rounds of {measured_rounds})",
            flush=True,
        )
    measured = 0.0
    for job in study:
        key = cost_key(job, batch)
        if on_gpu(job) or key in costs:
            continue
        costs[key] = measure(job, batch, lunar_every)
        measured += costs[key]["seconds"] * batch
        print(
            f"  {job.task.name:13s} {job.method.name:11s} T={job.budget:3d} {costs[key]['seconds']:7.2f} s per seed-run"
            f" (oracle {costs[key]['oracle'] / costs[key]['seconds']:4.0%})",
            flush=True,
        )
        keep()
    largest = max(len(job.seeds) for job in study)
    for job in study:
        reference = batching_reference(job)
        key = "batching " + cost_key(reference, largest)
        if on_gpu(job) or key in costs or largest == batch:
            continue
        small = costs.get(cost_key(reference, batch)) or measure(reference, batch, lunar_every)
        large = measure(reference, largest, lunar_every)
        costs[cost_key(reference, batch)] = small
        costs[key] = [small["seconds"], large["seconds"]]
        print(
            f"  batching: {job.method.name:11s} on {reference.task.name}: {small['seconds']:.2f} s per seed-run with "
            f"{batch} seeds a job, {large['seconds']:.2f} with {largest}",
            flush=True,
        )
        keep()
    return costs, measured


def tabicl_seed_round(gpu_jobs: list[Job], assumed: float) -> tuple[float, str]:
    """Seconds of one TabICLv2 seed-round on one GPU, and the line that says whence: measured with
    CUDA and its checkpoint (:func:`measure_on_gpu`), else ``assumed`` (``--tabicl-seed-round``)."""
    note = (
        (
            f"TabICLv2: {len(gpu_jobs)} runs on GPUs, ASSUMED {assumed:g} s per seed-round "
            "(no GPU measured here; pass --tabicl-seed-round)"
        )
        if gpu_jobs
        else ""
    )
    if torch.cuda.is_available():
        return measure_on_gpu(gpu_jobs, assumed, note)
    return assumed, note


@dataclasses.dataclass(frozen=True)
class Pricing:
    """What a workflow job costs once its process has started, from per-seed-run costs alone: its
    runs outside the oracle, scaled by how its method's per-seed cost falls with a job's seeds
    (:meth:`batching`), plus its oracle (a lunar12 job's call by call on its simulator processes,
    :meth:`lunar_oracle`); a TabICLv2 job, its seed-rounds. Its numbers are ``costs``' alone, so
    that they may be measured here (:func:`measure_costs`) or taken elsewhere, in the same keys.

    Attributes:
        costs: the costs, keyed as :func:`measure_costs` keeps them (:func:`cost_key`, ``startup``,
            ``lunar_pool``, ``batching ...``), wherever they came from.
        batch: the seeds of the lockstep job each seed-run was measured in (``--batch``).
        largest: the seeds of the study's largest job, the batching measurement's other size.
        tabicl_seed_round: seconds of one TabICLv2 seed-round on one GPU (:func:`tabicl_seed_round`).
    """

    costs: dict[str, Any]
    batch: int
    largest: int
    tabicl_seed_round: float
    #: (cost key, seeds, workers) -> a lunar12 job's oracle seconds and core-seconds, as priced.
    _lunar_oracles: dict[tuple[str, int, int], tuple[float, float]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def startup(self) -> float:
        """Seconds a workflow job's process takes before its first round runs warm."""
        return self.costs["startup"]

    def batching(self, job: Job) -> float:
        """Per-seed cost of a job of ``len(job.seeds)`` seeds over that of a ``batch`` one: c(B) = a + b / B
        fitted through the two measured batch sizes."""
        measured_at = self.costs.get("batching " + cost_key(batching_reference(job), self.largest))
        if measured_at is None:
            return 1.0
        small, large = measured_at
        b = (small - large) / (1 / self.batch - 1 / self.largest)
        a = small - b / self.batch
        return (a + b / len(job.seeds)) / small

    def lunar_oracle(self, job: Job, workers: int) -> tuple[float, float]:
        """A lunar12 job's oracle seconds and core-seconds on ``workers`` simulator processes: each
        re-flown call with as many points as the job's seeds query (the measured seeds' points in
        turn), priced by the pool model, times the calls it stands for."""
        key = (cost_key(job, self.batch), len(job.seeds), workers)
        if key not in self._lunar_oracles:
            pool = pool_model(self.costs)
            seconds, core_seconds = (pool.start, pool.start) if workers > 1 else (0.0, 0.0)
            for call in self.costs[key[0]]["calls"]:
                flights = list(islice(cycle(call["episodes"]), len(call["episodes"]) * len(job.seeds) // self.batch))
                seconds += call["calls"] * pool.seconds(flights, workers)
                core_seconds += call["calls"] * pool.core_seconds(flights, workers)
            self._lunar_oracles[key] = seconds, core_seconds
        return self._lunar_oracles[key]

    def oracle(self, job: Job, threads: int) -> tuple[float, float]:
        """A CPU job's oracle seconds and core-seconds on ``threads`` cores (serial but for lunar12's pool)."""
        if job.task.name == "lunar12":
            return self.lunar_oracle(job, threads)
        oracle = self.costs[cost_key(job, self.batch)]["oracle"] * len(job.seeds)
        return oracle, oracle

    def core_seconds(self, job: Job) -> float:
        """A CPU job's core-seconds after its process started: its price on one core."""
        return self.price(job, 1)

    def price(self, job: Job, threads: int, tabicl: bool = True) -> float:
        """A job's seconds after its process started (a TabICLv2 job left out: none, as not run)."""
        if on_gpu(job):
            return tabicl * len(job.seeds) * job.budget * self.tabicl_seed_round
        cost = self.costs[cost_key(job, self.batch)]
        rest = (cost["seconds"] - cost["oracle"]) * len(job.seeds) * self.batching(job)
        return rest + self.oracle(job, threads)[0]
