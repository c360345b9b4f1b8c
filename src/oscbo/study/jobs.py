"""The study's BO jobs: what the workflow builds from the configuration, and where each runs.

:func:`jobs` expands a validated configuration into every :class:`~oscbo.study.job.Job` of the
study, keyed by ``(experiment, task, label, chunk name)``; :func:`owners` finds the jobs that
compute the same run as an earlier one (another experiment's), which then runs once for both;
:func:`packs` groups those of the experiments with ``pack_methods``; :func:`placement` says where
a job runs (not part of it, so that moving it re-runs nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oscbo import methods, tasks
from oscbo.paper import N_INIT, ROUNDS, TIMING
from oscbo.study.config import experiment_seeds, method_settings, method_specs, seed_chunks
from oscbo.study.job import Job, JobMethod, JobTask, chunk_name

#: A job's key: (experiment, task, method label, chunk name).
Key = tuple[str, str, str, str]
#: The fields of a :class:`Job` that name who asks for its run, not what it computes.
ASKER = ("experiment", "method")


def jobs(config: dict[str, Any], prepared_table: Callable[[str], str | None]) -> dict[Key, Job]:
    """Every BO job of a validated study: (experiment, task, method label, chunk name) -> :class:`Job`.

    Args:
        config: the validated study configuration.
        prepared_table: the path of a tabular task's prepared table (None for other tasks); it
            joins the task's options.
    """
    found = {}
    for name, experiment in config["experiments"].items():
        chunks = seed_chunks(experiment_seeds(experiment), experiment["seeds_per_job"])
        for spec in method_specs(experiment):
            method = JobMethod(
                label=spec.label,
                name=spec.name,
                settings=method_settings(experiment, spec).to_dict(),
                options=dict(spec.options),
                entry=methods.REGISTRY[spec.name].definition(),
            )
            for task_name in experiment["tasks"]:
                table = prepared_table(task_name)
                task = JobTask(
                    name=task_name,
                    noise_std=experiment["noise_std"].get(task_name, 0.0),
                    options={**config["task_options"].get(task_name, {}), **({"table": table} if table else {})},
                    entry=tasks.REGISTRY[task_name].definition(),
                )
                for seeds in chunks:
                    found[(name, task_name, spec.label, chunk_name(seeds))] = Job(
                        experiment=name,
                        task=task,
                        method=method,
                        seeds=tuple(seeds),
                        budget=experiment["budget"],
                        n_init=experiment["n_init"],
                    )
    return found


def computes(job: Job) -> str:
    """What ``job`` computes, as canonical JSON: every field of the job but who asks for it
    (:data:`ASKER`): the method and its resolved settings, the task and its options, the seeds,
    budget, initial design and noise, and the registry entries. Two jobs with the same value give
    the same records but for their experiment and label."""
    values = {name: value for name, value in job.to_dict().items() if name not in ASKER}
    return json.dumps(values, sort_keys=True)


def owners(found: dict[Key, Job]) -> dict[Key, Key]:
    """Each job -> the job that runs it: the first job, in the configuration's order, that
    :func:`computes` the same run (itself, unless an earlier experiment asks for the same run).

    A run shared this way runs once, in its owner's folder, and each experiment that asks for it
    reads its records under its own experiment and label (:func:`oscbo.analysis.aggregate`). The
    timing experiment's runs (Fig. S4) share with none: what they measure is their wall-clock
    time, one seed per job on a quiet machine, which a run made under another experiment's
    conditions would not be."""
    first: dict[str, Key] = {}
    return {
        key: key if job.experiment == TIMING else first.setdefault(computes(job), key) for key, job in found.items()
    }


def packs(config: dict[str, Any], found: dict[Key, Job]) -> dict[tuple[str, str, str], list[Job]]:
    """The workflow jobs of the experiments with ``pack_methods``: (experiment, task, chunk name)
    -> its jobs, one per method label in config order, run one after the other by one process.
    ``found``: the jobs to run (those another job runs for them, :func:`owners`, left out)."""
    grouped: dict[tuple[str, str, str], list[Job]] = {}
    for (experiment, task, _, chunk), job in found.items():
        if config["experiments"][experiment]["pack_methods"]:
            grouped.setdefault((experiment, task, chunk), []).append(job)
    return grouped


@dataclass(frozen=True)
class Placement:
    """Where a job runs and what it declares to the scheduler; not part of its :class:`Job`, so
    that changing it re-runs nothing.

    Attributes:
        threads: the cores the job declares (Snakemake ``threads``): ``threads_per_job`` for torch
            and BLAS, or ``oracle_threads`` processes for a task whose oracle runs in parallel
            (its torch then runs on one thread, so its records do not depend on this number).
        gpu: 1 if the job declares ``resources: gpu=1`` (counted by ``--resources gpu=N``).
        device: what the job is told (:func:`oscbo.run.devices.claim`): the config's ``device``
            for a GPU method's job, ``cpu`` for every other job.
        priority: the order in which Snakemake starts ready jobs when cores are short (Snakemake
            ``priority``): its expected cost (:func:`expected_cost`), so that the longest jobs start
            first and none started last holds up the study's end.
    """

    threads: int
    gpu: int
    device: str
    priority: int = 0


#: The oracle calls of the protocol's job (10 initial points and 100 rounds), the unit of :func:`expected_cost`.
PROTOCOL_CALLS = N_INIT + ROUNDS
#: How much more a job of a task whose oracle runs in parallel processes (Lunar Lander's simulator,
#: 50 episodes a call) costs than the GP's own work: part 2 of the reference rerun against part 1
#: (a Lunar job's 10 seeds about 340 core-seconds, another 10-seed job of main about 32).
PARALLEL_ORACLE_FACTOR = 10
#: How much more a job that fits one lengthscale per dimension (ARD) costs: about twice, in the
#: projection's measured costs of the ARD ablation's Lunar Lander jobs (12 dimensions).
ARD_FACTOR = 2
#: The methods that fit no hyperparameter (GP-UCB at the true kernel, random search), and their
#: share of a fitting method's cost: in the reference rerun a known-truth job of GP-UCB at the true
#: kernel ran 46 s against OSCBO's 466 s and GP-UCB-MLL's 447 s. Without it they started first
#: among the known-truth jobs, and 32 cores ran the reference's jobs in 1.10 times the core-hours'
#: limit instead of 1.00 (benchmarks/project_full_study.py --job-times).
NO_FIT, NO_FIT_FACTOR = frozenset({"gp-ucb-true", "random-search"}), 0.1


def expected_cost(job: Job) -> int:
    """A job's expected cost in tenths of a 10-seed, 110-call job of a cheap oracle: its seeds
    times (oracle calls / 110) cubed (the GP's Cholesky on up to n points each round), times
    :data:`PARALLEL_ORACLE_FACTOR` for a parallel oracle, :data:`ARD_FACTOR` for ARD and
    :data:`NO_FIT_FACTOR` for a method that fits nothing: main's jobs 10, Lunar Lander's 100 (200
    with ARD), the known-truth tasks' 310-call jobs 224 (22 at the true kernel), the timing study's
    one-seed jobs 1. Only its order matters: the workflow starts the costliest first."""
    calls = job.budget + job.n_init
    factor = PARALLEL_ORACLE_FACTOR if tasks.REGISTRY[job.task.name].parallel else 1
    ard = job.method.settings.get("ard") or job.method.entry["settings"].get("ard")  # VanillaBO is ARD by its entry
    factor *= ARD_FACTOR if ard else 1
    factor *= NO_FIT_FACTOR if job.method.name in NO_FIT else 1
    return max(1, round(len(job.seeds) * (calls / PROTOCOL_CALLS) ** 3 * factor))


def gpu_methods(config: dict[str, Any]) -> set[str]:
    """The methods whose jobs run on a GPU: the config's ``gpu_methods``, else the registry's (TabICLv2)."""
    listed = config.get("gpu_methods")
    return set(listed) if listed is not None else {name for name in methods.names() if methods.REGISTRY[name].gpu}


def placement(job: Job, config: dict[str, Any]) -> Placement:
    """The device policy: a job uses a GPU only if its method is faster there (:func:`gpu_methods`);
    it declares ``gpu=1`` when the study uses GPUs (``use_gpu``), so ``--resources gpu=N`` bounds
    only those jobs, and every other job runs on CPU cores, as many at once as ``--cores`` allows."""
    on_gpu = job.method.name in gpu_methods(config)
    threads = config["oracle_threads"] if tasks.REGISTRY[job.task.name].parallel else config["threads_per_job"]
    return Placement(
        threads=threads,
        gpu=int(on_gpu and config["use_gpu"]),
        device=config["device"] if on_gpu else "cpu",
        priority=expected_cost(job),
    )


def pack_placement(pack: list[Job], config: dict[str, Any]) -> Placement:
    """A pack's placement: the widest of its jobs' (a GPU if one of them uses it; each job still
    runs on its own placement's device)."""
    placed = [placement(job, config) for job in pack]
    return Placement(
        threads=max(p.threads for p in placed),
        gpu=max(p.gpu for p in placed),
        device=next((p.device for p in placed if p.device != "cpu"), "cpu"),
        priority=sum(p.priority for p in placed),  # its jobs run one after the other
    )


def environment(task: str, method: str) -> str:
    """The conda env (``envs/NAME.yaml``) of a run of ``method`` on ``task``: the method's own if it
    needs one (TabICLv2's holds Lunar Lander's packages too), else the task's (Lunar Lander's
    simulator), as their registry entries declare."""
    needed = methods.REGISTRY[method].environment
    return needed if needed != "bo" else tasks.REGISTRY[task].environment


#: The conda envs, each holding the packages of those after it (TabICLv2's Lunar Lander's, Lunar's the BO stage's).
ENVIRONMENTS_WIDEST_FIRST = ("tabicl", "lunar", "bo")


def pack_environment(pack: list[Job]) -> str:
    """The env of a pack: the widest of its jobs' (:func:`environment`)."""
    names = {environment(job.task.name, job.method.name) for job in pack}
    return next(name for name in ENVIRONMENTS_WIDEST_FIRST if name in names)
