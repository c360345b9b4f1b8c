"""Projected wall time of a study on machines of several shapes, from costs measured here.

    python benchmarks/project_full_study.py [--config config/config.yaml] [--batch 5]
        [--costs FILE] [--shapes 2 32x4 128x4 4*32x4] [--tabicl-seed-round 5]
        [--oracle-threads N] [--seeds-per-job N] [--lunar-every 10] [--check EXPERIMENT/TASK/METHOD/CHUNK]

1. Measures what one seed-run of each (task, method, budget, n_init, cost-relevant settings)
   of the config costs on this machine: single-threaded, in one lockstep job of ``--batch``
   seeds; and, per method, how that per-seed cost falls with a job's seeds (one batched
   program: c(S) = a + b / S, fitted on hartmann6 at ``--batch`` seeds and at the study's
   largest job). Lunar Lander is flown with 10 episodes, and its oracle calls re-flown at the
   configured episodes, each episode timed serially: the initial design and one BO round of
   each ``--lunar-every`` (BO's later points fly several times longer than its first: they
   land or hover instead of crashing). Lunar's pool overheads are fitted once from rounds
   measured through the task on 2 workers (``benchmarks/lunar_rounds.py``).
   ``--costs FILE`` keeps the measurements between calls (delete it to measure again).
2. Builds the study's real job list (:func:`oscbo.study.jobs.jobs`, packs included) and each
   job's placement (:func:`oscbo.study.jobs.placement`: cores, GPU), prices each workflow job
   from the costs alone (:class:`Pricing`: one process start-up, measured as a cold job, + its
   runs' cost; a Lunar job's oracle call by call on its simulator processes: its seeds' episodes
   list-scheduled on them, plus the pool's overheads, :class:`lunar_rounds.PoolModel`), and
   simulates Snakemake's scheduling (:func:`schedule.simulate`) on each machine shape: ``C``
   cores, ``CxG`` cores and GPUs, ``N*CxG`` a cluster of N such nodes (the SLURM profile).
3. Prints each shape's wall time (BO jobs, then the summary stages), its limit (the core-seconds
   its jobs hold, spread over every core, or the longest job; no schedule beats it) and idle shares.

``--job-times RESULTS`` skips step 1: each job is priced at the seconds its manifest under
``RESULTS/runs`` says it took (:class:`JobTimes`); ``--tasks`` projects a part of the study;
``--record`` appends each shape's schedule over its limit to the measurements table.

``--check EXPERIMENT/TASK/METHOD/CHUNK`` measures only that job's costs, then runs it here as the
workflow would (a fresh process, on the cores it declares, at most this machine's) and prints
its projected and real seconds. ``--oracle-threads`` and ``--seeds-per-job`` project the study
with other values of those settings (neither changes a record).

TabICLv2 needs a GPU and its checkpoint. With CUDA and the checkpoint present, its seed-round
is measured; otherwise it is an assumption (``--tabicl-seed-round`` seconds on one GPU), said
in the output. The summary stages (aggregate, findings, figures, report) are ``--tail``
seconds, one core, after the last BO job.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from lunar_rounds import PoolModel, episode_seconds, measure_pool  # benchmarks/ is on the path of the scripts in it
from performance import NEEDS_TRUE_LENGTHSCALE
from schedule import Machine, Task, simulate

from oscbo import methods
from oscbo import run as engine
from oscbo.paper import REPLICATES
from oscbo.settings import Settings
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import Job, Manifest, chunk_name
from oscbo.study.jobs import Key, placement
from oscbo.tasks.lunar import EPISODES

#: Settings that change what a run costs much (the kernel's smoothness or LogEI change it little).
COST_SETTINGS = ("ard", "acq_restarts", "acq_raw_samples", "refit_steps")


COLD_JOB = """
import sys, tempfile, time
from pathlib import Path
from oscbo.run import run_job
from oscbo.study.job import Job
run_job(Job("startup", "levy5", "gp-ucb-mll", "gp-ucb-mll", (0,), 2, 5), Path(tempfile.mkdtemp(), "seeds0-0.json"),
        device="cpu")
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
    episodes = job.task_options.get("episodes", EPISODES)
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
        raise SystemExit(f"--check runs CPU jobs only; {job.method} runs on a GPU")
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
        f"\n{job.experiment}/{job.task}/{job.method}/{chunk_name(job.seeds)}, {len(job.seeds)} seeds x {job.budget} "
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
    task = job.task if job.method_name in NEEDS_TRUE_LENGTHSCALE else "hartmann6"
    options = job.task_options if task == job.task else {}
    return dataclasses.replace(job, task=task, task_options=options, budget=100, n_init=10)


def on_gpu(job: Job) -> bool:
    """Whether ``job``'s method runs on a GPU (TabICLv2): its runs are priced by seed-round, not measured."""
    return methods.REGISTRY[job.method_name].gpu


def cost_key(job: Job, batch: int) -> str:
    settings = {key: job.settings.get(key) for key in COST_SETTINGS}
    return json.dumps([job.task, job.method_name, job.budget, job.n_init, batch, settings])


def measure(job: Job, batch: int, lunar_every: int) -> dict:
    """Seconds per seed-run of ``job``'s kind and the oracle's part of it (serial); for lunar12,
    its oracle calls re-flown at the configured episodes (:func:`lunar_calls`)."""
    seeds = list(range(batch))
    options = {**job.task_options, **({"episodes": MEASURED_EPISODES} if job.task == "lunar12" else {})}
    tic = time.perf_counter()
    result = engine.run(
        job.task,
        job.method_name,
        seeds,
        job.budget,
        job.n_init,
        Settings.from_dict(job.settings),
        task_options=options,
        threads=1,
    )
    seconds = (time.perf_counter() - tic) / len(seeds)
    oracle = sum(table["oracle_seconds"].sum() for table in result.tables.values()) / len(seeds)
    if job.task != "lunar12":
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
    if gpu_jobs and Path(gpu_jobs[0].settings["tabicl_checkpoint"]).is_file():
        job = gpu_jobs[0]
        tic = time.perf_counter()
        engine.run(
            job.task,
            "tabicl",
            [0],
            3,
            job.n_init,
            Settings.from_dict(job.settings),
            task_options={**job.task_options, **({"episodes": MEASURED_EPISODES} if job.task == "lunar12" else {})},
            device="cuda",
        )
        measured = (time.perf_counter() - tic) / 3
        return measured, f"TabICLv2: {len(gpu_jobs)} runs on GPUs, {measured:.2f} s per seed-round measured on this GPU"
    return assumed, note


def parse_shape(text: str) -> Machine:
    nodes, _, shape = text.rpartition("*")
    cores, _, gpus = shape.partition("x")
    return Machine(cores=int(cores), gpus=int(gpus or 0), nodes=int(nodes or 1))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--batch", type=int, default=5, help="seeds per measured job")
    parser.add_argument("--costs", type=Path, help="JSON file keeping the measured costs between calls")
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=["2", "32x4", "128x4", "4*32x4"],
        help="machine shapes: C, CxG or N*CxG (N nodes)",
    )
    parser.add_argument(
        "--tabicl-seed-round",
        type=float,
        default=1.0,
        help="assumed seconds of one TabICLv2 seed-round on one GPU where none is measured "
        "(0: its runs end at once, as without the checkpoint)",
    )
    parser.add_argument(
        "--tail",
        type=float,
        default=60.0,
        help="seconds of the summary stages after the last BO job (the quick study: about 20)",
    )
    parser.add_argument("--oracle-threads", type=int, help="override the config's oracle_threads (Lunar's cores)")
    parser.add_argument("--experiments", nargs="+", help="project only these experiments of the config")
    parser.add_argument("--tasks", nargs="+", help="project only these tasks' jobs (a part of a study)")
    parser.add_argument(
        "--job-times",
        type=Path,
        metavar="RESULTS",
        help="price each job by the time it took when it ran: its manifest under RESULTS/runs (a study's results "
        "folder, e.g. the reference's after `oscbo store restore`), in place of measured costs",
    )
    parser.add_argument(
        "--seeds-per-job", type=int, help="override seeds_per_job of the experiments with more seeds (not timing's 1)"
    )
    parser.add_argument(
        "--lunar-every", type=int, default=10, help="re-fly one BO round of each this many of a measured lunar12 run"
    )
    parser.add_argument(
        "--check",
        metavar="EXPERIMENT/TASK/METHOD/CHUNK",
        help="measure only this job's costs, then run it here in a fresh process on the cores it declares (at most "
        "this machine's) and print its projected and real seconds",
    )
    parser.add_argument(
        "--priced-like",
        action="store_true",
        help="with --job-times: price a job not run yet at the mean time of its method's jobs on its task "
        "(a part to run)",
    )
    parser.add_argument(
        "--part-since",
        metavar="ISO_TIME",
        help="with --job-times and --priced-like: the part that started at this time (the jobs that had not run "
        "then), projected as before it ran and measured from its jobs' manifests",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="with --job-times: append each shape's BO-job schedule over its limit to the measurements table",
    )
    return parser.parse_args(argv)


def build_study(args: argparse.Namespace) -> tuple[dict[str, Any], dict[Key, Job], list[Job]]:
    """The study as the workflow would run it, from ``--config`` and the command line's overrides
    (``--experiments``, ``--tasks``, ``--oracle-threads``, ``--seeds-per-job``).

    Returns the configuration, its distinct runs (:func:`oscbo.study.jobs.owners`: a run two
    experiments ask for runs once) and the jobs to project: those runs, or the ``--check`` job alone.
    """
    config = study_config.load(args.config)
    if args.experiments:
        config["experiments"] = {name: config["experiments"][name] for name in args.experiments}
    if args.oracle_threads:
        config["oracle_threads"] = args.oracle_threads
    for experiment in config["experiments"].values():
        if args.seeds_per_job and experiment["seeds_per_job"] > 1:
            experiment["seeds_per_job"] = args.seeds_per_job
    asked = study_jobs.jobs(config, lambda task: None)  # tabular tasks read data/raw directly here
    owners = study_jobs.owners(asked)
    found = {key: job for key, job in asked.items() if owners[key] == key and (not args.tasks or key[1] in args.tasks)}
    study = [asked[owners[tuple(args.check.split("/"))]]] if args.check else list(found.values())
    return config, found, study


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
    if any(job.task == "lunar12" for job in study) and "lunar_pool" not in costs:
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
            f"  {job.task:13s} {job.method_name:11s} T={job.budget:3d} {costs[key]['seconds']:7.2f} s per seed-run"
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
            f"  batching: {job.method_name:11s} on {reference.task}: {small['seconds']:.2f} s per seed-run with "
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
        if job.task == "lunar12":
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


@dataclasses.dataclass(frozen=True)
class JobTimes:
    """What each job took when the study ran: its manifest's seconds (:class:`oscbo.study.job.Manifest`:
    its runs, after its process started) on the cores it ran on, read from a results folder of the
    study (the reference's: ``oscbo store restore`` puts its parts' manifests back). A job is priced
    at its own time on any machine: one that ran on fewer cores than a larger machine would give it
    (Lunar Lander's simulator processes) is priced as it ran, so the projection errs long there.

    Attributes:
        seconds: (experiment, task, label, chunk) -> (seconds, cores it ran on).
        startup: seconds a workflow job's process takes before its first round.
    """

    seconds: dict[Key, tuple[float, int]]
    startup: float

    @classmethod
    def read(
        cls, results: Path, found: dict[Key, Job], startup: float, like: bool = False, before: str = ""
    ) -> JobTimes:
        """The times of ``found``'s jobs under ``results/runs``; a job without a finished manifest
        there is refused, with how many and the first few named, or with ``like`` (a part not run
        yet) priced at the mean time of the finished jobs of its method (the registry name) on its
        task with as many seeds in its experiment, any label (:func:`like_times`)."""
        seconds, missing = {}, []
        for key, job in found.items():
            path = results / "runs" / key[0] / key[1] / job.manifest_name
            manifest = Manifest.read(path) if path.is_file() else None
            if manifest is None or (before and manifest.finished >= before):
                missing.append(key)
                continue
            seconds[key] = (manifest.seconds, max(1, manifest.threads))
        if missing and like:
            peers = like_times(results, before)
            unpriced = [key for key in missing if _peer(found[key]) not in peers]
            if unpriced:
                raise ValueError(
                    f"{len(unpriced)} jobs have no finished job of their method to be priced like: {unpriced[:3]}"
                )
            seconds |= {key: peers[_peer(found[key])] for key in missing}
        elif missing:
            named = [str(results / "runs" / key[0] / key[1] / found[key].manifest_name) for key in missing[:3]]
            raise ValueError(f"{len(missing)} jobs have no manifest under {results / 'runs'}: {named}")
        return cls(seconds, startup)

    def price(self, job: Job, threads: int, tabicl: bool = True) -> float:
        """The job's seconds as it ran (``threads`` aside: see the class)."""
        return self.seconds[(job.experiment, job.task, job.method, chunk_name(job.seeds))][0]

    def core_seconds(self, job: Job) -> float:
        """The job's seconds times the cores it ran on."""
        seconds, cores = self.seconds[(job.experiment, job.task, job.method, chunk_name(job.seeds))]
        return seconds * cores


def print_projection(
    config: dict[str, Any],
    name: str,
    found: dict[Key, Job],
    pricing: Pricing | JobTimes,
    shapes: list[str],
    tail: float,
    source: str,
    tabicl_note: str,
) -> list[tuple[str, float, str]]:
    """Print the projection of the study ``name`` from its distinct runs (``found``).

    Its workflow jobs (a pack, ``pack_methods``, runs its jobs in one process; every other job runs
    alone), each a start-up plus its runs' prices; per machine shape of ``shapes``
    (:func:`parse_shape`), Snakemake's schedule of them simulated (:func:`schedule.simulate`): the
    wall time, ``tail`` seconds of summary stages included, and the idle shares, with and without
    TabICLv2 where the study has GPU jobs; then the core-hours of its GP and Lunar runs. ``source``
    says where the costs came from, ``tabicl_note`` whence TabICLv2's seed-round. Returns each
    shape's BO-job schedule over its limit, as rows of the measurements table.
    """
    study = list(found.values())
    gpu_jobs = [job for job in study if on_gpu(job)]
    packs = study_jobs.packs(config, found)
    packed = [job for pack in packs.values() for job in pack]
    units = [(pack, study_jobs.pack_placement(pack, config)) for pack in packs.values()] + [
        ([job], placement(job, config)) for job in study if job not in packed
    ]
    print(
        f"\n{name}: {len(study)} BO jobs ({sum(len(job.seeds) for job in study):,} seed-runs) in {len(units)} "
        "workflow jobs" + (f" ({len(gpu_jobs)} TabICLv2 runs on GPUs)" if gpu_jobs else "") + f"; {source}"
    )
    cpu = [job for job in study if not on_gpu(job)]
    core_seconds = sum(pricing.startup + pricing.core_seconds(job) for job in cpu)
    print(
        f"{'machine':40s} {'wall':>9s} {'BO jobs':>9s} {'limit':>9s} {'/ limit':>8s} {'cores idle':>11s} "
        f"{'while waiting':>14s} {'GPUs idle':>10s} {'while waiting':>14s}"
    )
    ratios = []
    for text in shapes:
        machine = parse_shape(text)
        runnable = [(unit, p) for unit, p in units if machine.gpus or not p.gpu]  # no GPU: its GPU jobs never run
        options = [False, True] if any(on_gpu(job) for unit, _ in runnable for job in unit) else [False]
        for tabicl in options:
            tasks = [
                Task(
                    pricing.startup + sum(pricing.price(job, min(p.threads, machine.cores), tabicl) for job in unit),
                    p.threads,
                    p.gpu,
                    p.priority,
                )
                for unit, p in runnable
            ]
            shape = str(machine) + (" +TabICLv2" if tabicl else " no TabICLv2" if gpu_jobs else "")
            schedule = simulate(tasks, machine)
            wall = schedule.seconds + tail
            gpus = (
                f"{schedule.gpu_idle:10.0%} {schedule.gpu_idle_waiting:14.0%}"
                if tabicl and machine.gpus
                else f"{'-':>10s} {'-':>14s}"
            )
            # no schedule beats the core-seconds its jobs hold spread over every core, nor its longest job
            held = sum(task.seconds * min(task.threads, machine.cores) for task in tasks)
            limit = max(held / (machine.cores * machine.nodes), max(task.seconds for task in tasks))
            print(
                f"{shape:40s} {wall / 60:8.1f}m {schedule.seconds / 60:8.1f}m {limit / 60:8.1f}m "
                f"{schedule.seconds / limit:8.2f} {schedule.core_idle:11.0%} {schedule.core_idle_waiting:14.0%} {gpus}"
            )
            ratios.append((f"{name} projected BO jobs on {shape} / limit", schedule.seconds / limit, "ratio"))
            ratios.append((f"{name} projected wall on {shape}", wall / 60, "min"))
    core_hours = core_seconds / 3600
    lunar_hours = sum(pricing.startup + pricing.core_seconds(job) for job in cpu if job.task == "lunar12")
    print(
        f"\nGP and Lunar runs: {core_hours:.2f} core-hours, {lunar_hours / 3600 / core_hours:.0%} of them Lunar "
        f"Lander's. {tabicl_note}".rstrip()
    )
    return ratios


def _peer(job: Job) -> tuple[str, str, str, int]:
    """What a job not run yet is priced like: its experiment's (a replicate's, its experiment's, as
    :data:`oscbo.paper.REPLICATES` names it) jobs of its method on its task with as many seeds."""
    return (REPLICATES.get(job.experiment, job.experiment), job.task, job.method_name, len(job.seeds))


def like_times(results: Path, before: str = "") -> dict[tuple[str, str, str, int], tuple[float, int]]:
    """:func:`_peer` -> the mean seconds and the cores of the finished jobs under ``results/runs``
    that are its peers (finished ``before`` that ISO time, if given)."""
    found: dict[tuple[str, str, str, int], list[tuple[float, int]]] = {}
    for path in (results / "runs").glob("*/*/*/seeds*.json"):
        manifest = Manifest.read(path)
        if manifest.status == "complete" and (not before or manifest.finished < before):
            found.setdefault(_peer(manifest.job), []).append((manifest.seconds, max(1, manifest.threads)))
    return {peer: (sum(s for s, _ in times) / len(times), max(c for _, c in times)) for peer, times in found.items()}


def _ran_before(results: Path, key: Key, job: Job, since: str) -> bool:
    path = results / "runs" / key[0] / key[1] / job.manifest_name
    return path.is_file() and Manifest.read(path).finished < since


def measured_wall(results: Path, found: dict[Key, Job], since: str, startup: float) -> float:
    """The wall time of a part that ran: from the first of ``found``'s jobs finished after ``since``
    (an ISO time: when the part started) less its seconds and a process start-up, to the last one's
    end, read from their manifests."""
    spans = []
    for key, job in found.items():
        path = results / "runs" / key[0] / key[1] / job.manifest_name
        if path.is_file():
            manifest = Manifest.read(path)
            end = datetime.fromisoformat(manifest.finished)
            if end >= datetime.fromisoformat(since):
                spans.append((end - timedelta(seconds=manifest.seconds + startup), end))
    if not spans:
        raise ValueError(f"no job of the part finished under {results / 'runs'} after {since}")
    return (max(end for _, end in spans) - min(start for start, _ in spans)).total_seconds()


def main() -> None:
    """Measure what pricing the study needs, then check one job against it or print the projection."""
    args = parse_args()
    config, found, study = build_study(args)
    if args.job_times:
        costs = json.loads(args.costs.read_text()) if args.costs and args.costs.is_file() else {}
        startup = costs.get("startup") or job_startup_seconds()
        if args.part_since:  # the part: the jobs that had not run when it started, priced as before it ran
            since = args.part_since
            found = {key: job for key, job in found.items() if not _ran_before(args.job_times, key, job, since)}
        times = JobTimes.read(args.job_times, found, startup, like=args.priced_like, before=args.part_since or "")
        source = f"each job priced at its time in {args.job_times} (start-up {startup:.1f} s)"
        if args.priced_like:
            source += ", a job not run yet at its method's on its task"
        ratios = print_projection(config, args.config, found, times, args.shapes, args.tail, source, "")
        if args.part_since:
            wall = measured_wall(args.job_times, found, args.part_since, startup) / 60
            projected = next(value for figure, value, unit in ratios if unit == "min")
            print(f"\nthe part as it ran (its manifests since {args.part_since}): {wall:.1f} min")
            part = ratios[0][0].split(" projected")[0]
            ratios += [
                (f"{part} measured wall / projected", wall / projected, "ratio"),
                (f"{part} measured wall", wall, "min"),
            ]
        if args.record:
            from measurements import record  # benchmarks/ is on the path of the scripts in it

            record(ratios)
        return
    episodes = config["task_options"].get("lunar12", {}).get("episodes", EPISODES)
    costs, measured = measure_costs(study, episodes, args.batch, args.lunar_every, args.costs)
    seed_round, tabicl_note = tabicl_seed_round([job for job in study if on_gpu(job)], args.tabicl_seed_round)
    pricing = Pricing(costs, args.batch, max(len(job.seeds) for job in study), seed_round)
    if args.check:
        check(study[0], config, pricing)
        return
    source = f"measured {measured:.0f} s of runs" if measured else f"costs from {args.costs}"
    print_projection(config, args.config, found, pricing, args.shapes, args.tail, source, tabicl_note)


if __name__ == "__main__":
    main()
