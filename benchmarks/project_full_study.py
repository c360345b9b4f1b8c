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
   (one process start-up, measured as a cold job, + its runs' cost; a Lunar job's oracle call by
   call on its simulator processes: its seeds' episodes list-scheduled on them, plus the pool's
   overheads, :class:`lunar_rounds.PoolModel`), and simulates Snakemake's
   scheduling (:func:`schedule.simulate`) on each machine shape: ``C`` cores,
   ``CxG`` cores and GPUs, ``N*CxG`` a cluster of N such nodes (the SLURM profile).
3. Prints each shape's wall time (BO jobs, then the summary stages) and idle shares.

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
from itertools import cycle, islice
from pathlib import Path

import pandas as pd
import torch
from lunar_rounds import PoolModel, episode_seconds, measure_pool  # benchmarks/ is on the path of the scripts in it
from performance import NEEDS_TRUE_LENGTHSCALE
from schedule import Machine, Task, simulate

from oscbo import methods
from oscbo import run as engine
from oscbo.settings import Settings
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import Job, chunk_name
from oscbo.study.jobs import placement
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


def check(job: Job, threads: int, projected: tuple[float, float], oracle: tuple[float, float]) -> None:
    """Run ``job`` as the workflow runs it (a fresh process, :func:`oscbo.run.run_job` on ``threads``
    cores) and print its seconds, and its oracle's (from its records), beside the projection's
    (``projected``, ``oracle``: seconds and core-seconds). The core-seconds (its processes' CPU
    time) tell a model's error from a busy machine's: other work on the cores lengthens a job's
    seconds, not its CPU time."""
    if methods.REGISTRY[job.method_name].gpu:
        raise SystemExit(f"--check runs CPU jobs only; {job.method} runs on a GPU")
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


def main() -> None:
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
    args = parser.parse_args()
    config = study_config.load(args.config)
    if args.experiments:
        config["experiments"] = {name: config["experiments"][name] for name in args.experiments}
    if args.oracle_threads:
        config["oracle_threads"] = args.oracle_threads
    for experiment in config["experiments"].values():
        if args.seeds_per_job and experiment["seeds_per_job"] > 1:
            experiment["seeds_per_job"] = args.seeds_per_job
    engine.limit_threads(1)
    asked = study_jobs.jobs(config, lambda task: None)  # tabular tasks read data/raw directly here
    owners = study_jobs.owners(asked)  # a run two experiments ask for runs once
    found = {key: job for key, job in asked.items() if owners[key] == key}
    study = [asked[owners[tuple(args.check.split("/"))]]] if args.check else list(found.values())

    costs = json.loads(args.costs.read_text()) if args.costs and args.costs.is_file() else {}
    episodes = config["task_options"].get("lunar12", {}).get("episodes", EPISODES)
    if "startup" not in costs:
        costs["startup"] = job_startup_seconds()
    print(f"job start-up {costs['startup']:.2f} s", flush=True)
    if any(job.task == "lunar12" for job in study) and "lunar_pool" not in costs:
        fitted, rounds = measure_pool(episodes)
        costs["lunar_pool"] = {**dataclasses.asdict(fitted), "rounds": [[sum(c), len(c), t] for c, t in rounds]}
        if args.costs:
            args.costs.write_text(json.dumps(costs, indent=1))
    if "lunar_pool" in costs:
        pool = PoolModel(**{key: value for key, value in costs["lunar_pool"].items() if key != "rounds"})
        measured_rounds = ", ".join(
            f"{count} episodes {serial:.2f} s serially, {seconds:.2f} s pooled"
            for serial, count, seconds in costs["lunar_pool"]["rounds"]
        )
        print(
            f"lunar12 pool on 2 workers: {1e3 * pool.per_episode:.2f} ms per episode, {1e3 * pool.per_round:.0f} ms "
            f"per round, {pool.start:.2f} s to start (fitted from rounds of {measured_rounds})",
            flush=True,
        )
    gpu_jobs = [job for job in study if methods.REGISTRY[job.method_name].gpu]
    measured = 0.0
    for job in study:
        key = cost_key(job, args.batch)
        if job in gpu_jobs or key in costs:
            continue
        costs[key] = measure(job, args.batch, args.lunar_every)
        measured += costs[key]["seconds"] * args.batch
        print(
            f"  {job.task:13s} {job.method_name:11s} T={job.budget:3d} {costs[key]['seconds']:7.2f} s per seed-run"
            f" (oracle {costs[key]['oracle'] / costs[key]['seconds']:4.0%})",
            flush=True,
        )
        if args.costs:
            args.costs.write_text(json.dumps(costs, indent=1))
    # How a method's per-seed cost falls with the seeds of a job (one lockstep program): measured
    # on hartmann6 at --batch and at the study's largest job, per method and cost-relevant settings.
    largest = max(len(job.seeds) for job in study)
    for job in study:
        reference = batching_reference(job)
        key = "batching " + cost_key(reference, largest)
        if job in gpu_jobs or key in costs or largest == args.batch:
            continue
        small = costs.get(cost_key(reference, args.batch)) or measure(reference, args.batch, args.lunar_every)
        large = measure(reference, largest, args.lunar_every)
        costs[cost_key(reference, args.batch)] = small
        costs[key] = [small["seconds"], large["seconds"]]
        print(
            f"  batching: {job.method_name:11s} on {reference.task}: {small['seconds']:.2f} s per seed-run with "
            f"{args.batch} seeds a job, {large['seconds']:.2f} with {largest}",
            flush=True,
        )
        if args.costs:
            args.costs.write_text(json.dumps(costs, indent=1))

    def batching(job: Job) -> float:
        """Per-seed cost of a job of ``len(job.seeds)`` seeds over that of a --batch one: c(B) = a + b / B
        fitted through the two measured batch sizes."""
        measured_at = costs.get("batching " + cost_key(batching_reference(job), largest))
        if measured_at is None:
            return 1.0
        small, large = measured_at
        b = (small - large) / (1 / args.batch - 1 / largest)
        a = small - b / args.batch
        return (a + b / len(job.seeds)) / small

    tabicl_note = (
        (
            f"TabICLv2: {len(gpu_jobs)} runs on GPUs, ASSUMED {args.tabicl_seed_round:g} s per seed-round "
            "(no GPU measured here; pass --tabicl-seed-round)"
        )
        if gpu_jobs
        else ""
    )
    if torch.cuda.is_available():
        args.tabicl_seed_round, tabicl_note = measure_on_gpu(gpu_jobs, args.tabicl_seed_round, tabicl_note)

    lunar_oracles: dict[tuple[str, int, int], tuple[float, float]] = {}

    def lunar_oracle(job: Job, workers: int) -> tuple[float, float]:
        """A lunar12 job's oracle seconds and core-seconds on ``workers`` simulator processes: each
        re-flown call with as many points as the job's seeds query (the measured seeds' points in
        turn), priced by the pool model, times the calls it stands for."""
        key = (cost_key(job, args.batch), len(job.seeds), workers)
        if key not in lunar_oracles:
            seconds, core_seconds = (pool.start, pool.start) if workers > 1 else (0.0, 0.0)
            for call in costs[key[0]]["calls"]:
                flights = list(islice(cycle(call["episodes"]), len(call["episodes"]) * len(job.seeds) // args.batch))
                seconds += call["calls"] * pool.seconds(flights, workers)
                core_seconds += call["calls"] * pool.core_seconds(flights, workers)
            lunar_oracles[key] = seconds, core_seconds
        return lunar_oracles[key]

    def price(job: Job, threads: int, tabicl: bool = True) -> float:
        """A job's seconds after its process started (a TabICLv2 job left out: none, as not run)."""
        if job in gpu_jobs:
            return tabicl * len(job.seeds) * job.budget * args.tabicl_seed_round
        cost = costs[cost_key(job, args.batch)]
        rest = (cost["seconds"] - cost["oracle"]) * len(job.seeds) * batching(job)
        if job.task == "lunar12":
            return rest + lunar_oracle(job, threads)[0]
        return rest + cost["oracle"] * len(job.seeds)

    if args.check:
        job = study[0]
        threads = min(placement(job, config).threads, os.cpu_count() or 1)
        projected = costs["startup"] + price(job, threads)
        if job.task == "lunar12":
            oracle, oracle_cores = lunar_oracle(job, threads)
        else:
            oracle = oracle_cores = costs[cost_key(job, args.batch)]["oracle"] * len(job.seeds)
        check(job, threads, (projected, projected - oracle + oracle_cores), (oracle, oracle_cores))
        return

    # The workflow's jobs: a pack (pack_methods) runs its jobs in one process, every other job alone.
    packs = study_jobs.packs(config, found)
    packed = [job for pack in packs.values() for job in pack]
    units = [(pack, study_jobs.pack_placement(pack, config)) for pack in packs.values()] + [
        ([job], placement(job, config)) for job in study if job not in packed
    ]
    print(
        f"\n{args.config}: {len(study)} BO runs in {len(units)} workflow jobs"
        + (f" ({len(gpu_jobs)} TabICLv2 runs on GPUs)" if gpu_jobs else "")
        + (f"; measured {measured:.0f} s of runs" if measured else "; costs from " + str(args.costs))
    )
    print(
        f"{'machine':40s} {'wall':>9s} {'BO jobs':>9s} {'cores idle':>11s} {'while waiting':>14s} "
        f"{'GPUs idle':>10s} {'while waiting':>14s}"
    )
    for text in args.shapes:
        machine = parse_shape(text)
        runnable = [(unit, p) for unit, p in units if machine.gpus or not p.gpu]  # no GPU: its GPU jobs never run
        options = [False, True] if any(job in gpu_jobs for unit, _ in runnable for job in unit) else [False]
        for tabicl in options:
            tasks = [
                Task(
                    costs["startup"] + sum(price(job, min(p.threads, machine.cores), tabicl) for job in unit),
                    p.threads,
                    p.gpu,
                )
                for unit, p in runnable
            ]
            shape = str(machine) + (" +TabICLv2" if tabicl else " no TabICLv2" if gpu_jobs else "")
            schedule = simulate(tasks, machine)
            wall = schedule.seconds + args.tail
            gpus = (
                f"{schedule.gpu_idle:10.0%} {schedule.gpu_idle_waiting:14.0%}"
                if tabicl and machine.gpus
                else f"{'-':>10s} {'-':>14s}"
            )
            print(
                f"{shape:40s} {wall / 60:8.1f}m {schedule.seconds / 60:8.1f}m {schedule.core_idle:11.0%} "
                f"{schedule.core_idle_waiting:14.0%} {gpus}"
            )
    core_hours = sum(costs["startup"] + price(job, 1) for job in study if job not in gpu_jobs) / 3600
    lunar_hours = sum(
        costs["startup"] + price(job, 1) for job in study if job.task == "lunar12" and job not in gpu_jobs
    )
    print(
        f"\nGP and Lunar runs: {core_hours:.2f} core-hours, {lunar_hours / 3600 / core_hours:.0%} of them Lunar "
        f"Lander's. {tabicl_note}".rstrip()
    )


if __name__ == "__main__":
    main()
