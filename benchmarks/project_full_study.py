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
import json
from pathlib import Path
from typing import Any

from job_costs import Pricing, check, job_startup_seconds, measure_costs, on_gpu, tabicl_seed_round
from job_times import JobTimes, measured_wall, ran_before
from schedule import Machine, Task, simulate

from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import Job
from oscbo.study.jobs import Key, placement
from oscbo.tasks.lunar import EPISODES


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
    lunar_hours = sum(pricing.startup + pricing.core_seconds(job) for job in cpu if job.task.name == "lunar12")
    print(
        f"\nGP and Lunar runs: {core_hours:.2f} core-hours, {lunar_hours / 3600 / core_hours:.0%} of them Lunar "
        f"Lander's. {tabicl_note}".rstrip()
    )
    return ratios


def main() -> None:
    """Measure what pricing the study needs, then check one job against it or print the projection."""
    args = parse_args()
    config, found, study = build_study(args)
    if args.job_times:
        costs = json.loads(args.costs.read_text()) if args.costs and args.costs.is_file() else {}
        startup = costs.get("startup") or job_startup_seconds()
        if args.part_since:  # the part: the jobs that had not run when it started, priced as before it ran
            since = args.part_since
            found = {key: job for key, job in found.items() if not ran_before(args.job_times, key, job, since)}
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
