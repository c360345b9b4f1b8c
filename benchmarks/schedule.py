"""How long a study takes on a machine: Snakemake's scheduling of its BO jobs, simulated.

Given each job's duration and what it declares (:func:`oscbo.study.jobs.placement`: cores and
GPUs), :func:`simulate` replays what ``snakemake --cores C --resources gpu=G`` does with ready
jobs: whenever a job ends, it starts every waiting job that fits in what is free, highest
``priority`` first (the workflow's: a job's expected cost), then in the order the DAG lists them,
scaling a job's threads down to the
cores of a node as Snakemake does. ``nodes > 1`` is a cluster of identical nodes (the SLURM
profile): a job runs on one node. It returns the makespan and each resource's idle share, in
all and while jobs were waiting: the share of the capacity left unused although a job was
queued that could use it (cores: a waiting job whose GPUs a node has free, held back by its
cores; GPUs: such a job that declares one), which a good placement keeps near zero.

Its one user is ``project_full_study.py``, beside it; nothing of the workflow imports it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    """One job to schedule: its duration in seconds on the cores it declares, and what it declares."""

    seconds: float
    threads: int = 1
    gpu: int = 0
    priority: int = 0


@dataclass(frozen=True)
class Machine:
    """``nodes`` identical nodes of ``cores`` cores and ``gpus`` GPUs."""

    cores: int
    gpus: int = 0
    nodes: int = 1

    def __str__(self) -> str:
        shape = f"{self.cores} cores" + (f" + {self.gpus} GPUs" if self.gpus else "")
        return shape if self.nodes == 1 else f"{self.nodes} nodes x ({shape})"


@dataclass(frozen=True)
class Schedule:
    """What :func:`simulate` found.

    Attributes:
        seconds: the makespan (first start to last end).
        core_idle, gpu_idle: the share of core- and GPU-seconds unused over the makespan.
        core_idle_waiting, gpu_idle_waiting: the same, counted only while a job that could use
            them was waiting (module docstring).
        starts: each task's start time, in the order given.
    """

    seconds: float
    core_idle: float
    gpu_idle: float
    core_idle_waiting: float
    gpu_idle_waiting: float
    starts: tuple[float, ...]


def simulate(tasks: Sequence[Task], machine: Machine) -> Schedule:
    """Greedy list scheduling of ``tasks`` (all ready at time 0, in DAG order; started highest
    ``priority`` first) on ``machine``.

    Raises:
        ValueError: a task asks for GPUs a node does not have (Snakemake would never run it).
    """
    if any(task.gpu > machine.gpus for task in tasks):
        raise ValueError(f"a job declares more GPUs than a node of {machine} has")
    free = [[machine.cores, machine.gpus] for _ in range(machine.nodes)]
    waiting = sorted(range(len(tasks)), key=lambda index: -tasks[index].priority)  # stable: DAG order within
    running: list[tuple[float, int, int, int, int]] = []  # (end, task, node, cores, gpus)
    starts = [0.0] * len(tasks)
    now = 0.0
    idle_waiting = [0.0, 0.0]  # core-, GPU-seconds unused while a job waited

    def start_what_fits() -> None:
        for index in list(waiting):
            task = tasks[index]
            cores = min(task.threads, machine.cores)
            node = next((n for n, (c, g) in enumerate(free) if c >= cores and g >= task.gpu), None)
            if node is None:
                continue
            free[node][0] -= cores
            free[node][1] -= task.gpu
            starts[index] = now
            heapq.heappush(running, (now + task.seconds, index, node, cores, task.gpu))
            waiting.remove(index)

    start_what_fits()
    while running:
        end, _, node, cores, gpus = heapq.heappop(running)
        for cores_free, gpus_free in free:  # a node's idle capacity that a waiting job wants
            wanting = [tasks[index] for index in waiting if tasks[index].gpu <= gpus_free]  # held back by cores
            if wanting:
                idle_waiting[0] += (end - now) * cores_free
            if any(task.gpu for task in wanting):
                idle_waiting[1] += (end - now) * gpus_free
        now = end
        free[node][0] += cores
        free[node][1] += gpus
        start_what_fits()
    makespan = now
    core_capacity = makespan * machine.cores * machine.nodes
    gpu_capacity = makespan * machine.gpus * machine.nodes
    core_busy = sum(task.seconds * min(task.threads, machine.cores) for task in tasks)
    gpu_busy = sum(task.seconds * task.gpu for task in tasks)

    def share(unused: float, capacity: float) -> float:
        return unused / capacity if capacity > 0 else 0.0

    return Schedule(
        makespan,
        share(core_capacity - core_busy, core_capacity),
        share(gpu_capacity - gpu_busy, gpu_capacity),
        share(idle_waiting[0], core_capacity),
        share(idle_waiting[1], gpu_capacity),
        tuple(starts),
    )
