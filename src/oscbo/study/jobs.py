"""The study's BO jobs: what the workflow builds from the configuration and the engine runs.

A :class:`Job` is one seed chunk of one (experiment, task, method label): everything that
determines its records, and nothing about where it runs (device and threads are the runner's),
so that changing where it runs re-runs nothing. :func:`jobs` expands a validated configuration
into every job of the study, keyed by ``(experiment, task, label, chunk name)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oscbo import methods, tasks
from oscbo.provenance import SOURCE_ROOT
from oscbo.study.config import experiment_seeds, method_settings, method_specs, seed_chunks

#: What every BO run executes, besides its method's and its task's own file (folders: every module).
RUN_SOURCES = (
    "run",
    "model",
    "methods/base.py",
    "tasks/base.py",
    "settings.py",
    "seeding.py",
    "records.py",
    "reproducibility.py",
    "provenance.py",
)


@dataclass(frozen=True)
class Job:
    """One BO job.

    Attributes:
        experiment, task: where it belongs.
        method: the method label (a variant's own name, e.g. ``oscbo-lambda0=0.433``).
        method_name: the registry name the label runs.
        seeds: the seeds it runs in lockstep.
        budget: BO rounds T after the initial design; n_init: the initial design's size.
        noise_std: observation-noise std of the task (0: noise-free).
        task_options: keyword arguments of the task's factory (a tabular task: its prepared table).
        settings: the resolved run settings (:meth:`oscbo.settings.Settings.to_dict`).
    """

    experiment: str
    task: str
    method: str
    method_name: str
    seeds: tuple[int, ...]
    budget: int
    n_init: int
    noise_std: float = 0.0
    task_options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the workflow's params (compared by Snakemake to decide re-runs) and the
        job's manifest."""
        return {**dataclasses.asdict(self), "seeds": list(self.seeds)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Job:
        """The job of a :meth:`to_dict` mapping (a manifest's extra keys are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{**{k: v for k, v in values.items() if k in names}, "seeds": tuple(values["seeds"])})


def chunk_name(seeds: list[int] | tuple[int, ...]) -> str:
    """seeds 0..9 -> '0-9'; a non-contiguous chunk lists its seeds: '3+7+9'."""
    seeds = list(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return "+".join(str(seed) for seed in seeds)


def jobs(config: dict[str, Any], prepared_table: Callable[[str], str | None]) -> dict[tuple[str, str, str, str], Job]:
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
            settings = method_settings(experiment, spec).to_dict()
            for task in experiment["tasks"]:
                table = prepared_table(task)
                options = {**config["task_options"].get(task, {}), **({"table": table} if table else {})}
                for seeds in chunks:
                    found[(name, task, spec.label, chunk_name(seeds))] = Job(
                        experiment=name,
                        task=task,
                        method=spec.label,
                        method_name=spec.name,
                        seeds=tuple(seeds),
                        budget=experiment["budget"],
                        n_init=experiment["n_init"],
                        noise_std=experiment["noise_std"].get(task, 0.0),
                        task_options=options,
                        settings=settings,
                    )
    return found


def sources(task: str, method: str) -> list[Path]:
    """The source files a run of ``method`` on ``task`` executes: editing one re-runs exactly the
    jobs that use it. The registries (``methods/__init__.py``, ``tasks/__init__.py``) are left out
    on purpose: adding a method must not re-run every other method."""
    files = set()
    for name in RUN_SOURCES:
        path = SOURCE_ROOT / name
        files.update(path.glob("*.py") if path.is_dir() else [path])
    return sorted({*files, methods.source_file(method), tasks.source_file(task)})


def packs(config: dict[str, Any], found: dict[tuple[str, str, str, str], Job]) -> dict[tuple[str, str, str], list[Job]]:
    """The workflow jobs of the experiments with ``pack_methods``: (experiment, task, chunk name)
    -> its jobs, one per method label in config order, run one after the other by one process."""
    grouped: dict[tuple[str, str, str], list[Job]] = {}
    for (experiment, task, _, chunk), job in found.items():
        if config["experiments"][experiment]["pack_methods"]:
            grouped.setdefault((experiment, task, chunk), []).append(job)
    return grouped


def digest(job: Job) -> str:
    """SHA-256 of the sources ``job`` executes (:func:`sources`), in order: a pack re-runs a
    method whose sources changed and keeps the others."""
    sha = hashlib.sha256()
    for path in sources(job.task, job.method_name):
        sha.update(path.read_bytes())
    return sha.hexdigest()


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
    """

    threads: int
    gpu: int
    device: str


def gpu_methods(config: dict[str, Any]) -> set[str]:
    """The methods whose jobs run on a GPU: the config's ``gpu_methods``, else the registry's (TabICLv2)."""
    listed = config.get("gpu_methods")
    return set(listed) if listed is not None else {name for name in methods.names() if methods.REGISTRY[name].gpu}


def placement(job: Job, config: dict[str, Any]) -> Placement:
    """The device policy: a job uses a GPU only if its method is faster there (:func:`gpu_methods`);
    it declares ``gpu=1`` when the study uses GPUs (``use_gpu``), so ``--resources gpu=N`` bounds
    only those jobs, and every other job runs on CPU cores, as many at once as ``--cores`` allows."""
    on_gpu = job.method_name in gpu_methods(config)
    threads = config["oracle_threads"] if tasks.REGISTRY[job.task].parallel else config["threads_per_job"]
    return Placement(
        threads=threads, gpu=int(on_gpu and config["use_gpu"]), device=config["device"] if on_gpu else "cpu"
    )


def pack_placement(pack: list[Job], config: dict[str, Any]) -> Placement:
    """A pack's placement: the widest of its jobs' (a GPU if one of them uses it; each job still
    runs on its own placement's device)."""
    placed = [placement(job, config) for job in pack]
    return Placement(
        threads=max(p.threads for p in placed),
        gpu=max(p.gpu for p in placed),
        device=next((p.device for p in placed if p.device != "cpu"), "cpu"),
    )


def environment(task: str, method: str) -> str:
    """The conda env (``envs/NAME.yaml``) of a run of ``method`` on ``task``: the method's own if it
    needs one (TabICLv2's holds Lunar Lander's packages too), else the task's (Lunar Lander's
    simulator), as their registry entries declare."""
    needed = methods.REGISTRY[method].environment
    return needed if needed != "bo" else tasks.REGISTRY[task].environment
