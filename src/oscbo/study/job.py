"""A BO job and its manifest: what the workflow asks for, and what it finds when the job is done.

A :class:`Job` is one seed chunk of one (experiment, task, method label): everything that
determines its records, and nothing about where it runs (device and threads are the runner's),
so that changing where it runs re-runs nothing; it carries its task and method as typed
specs (:class:`JobTask`, :class:`JobMethod`). Its :class:`Manifest`, written last beside its
records, says how it ended. A pack (an experiment's ``pack_methods``) runs several jobs in one
process and writes a :class:`PackManifest` listing theirs. Plain data: the workflow, the engine
and the aggregate stage all read them.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oscbo.records import write_json

#: A manifest's ``status``: the job ran (its records are listed), or it could not run here (the reason).
COMPLETE, NOT_RUN = "complete", "not run"


@dataclass(frozen=True)
class JobMethod:
    """The method a job runs: a config's :class:`~oscbo.study.config.MethodSpec` once the
    experiment's settings are resolved under the entry's overrides.

    Attributes:
        label: the label its records carry (a variant's own name, e.g. ``oscbo-lambda0=0.433``).
        name: the registry name the label runs.
        settings: the resolved run settings (:meth:`oscbo.settings.Settings.to_dict`; partial or
            empty for the defaults).
        options: keyword arguments of the method's class, its own settings (a config's
            ``options`` of a method entry).
        entry: its registry entry (:meth:`oscbo.registry.Entry.definition`), so that editing the
            entry re-runs its jobs alone; empty for a run made outside a study.
    """

    label: str
    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    entry: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JobTask:
    """The task a job runs.

    Attributes:
        name: the registry name.
        noise_std: the observation noise's standard deviation (0: noise-free).
        options: keyword arguments of the task's factory (a tabular task: its prepared table).
        entry: its registry entry, as :attr:`JobMethod.entry`.
    """

    name: str
    noise_std: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)
    entry: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """One BO job.

    Attributes:
        experiment: where it belongs.
        task, method: what it runs (:class:`JobTask`, :class:`JobMethod`).
        seeds: the seeds it runs in lockstep.
        budget: BO rounds T after the initial design; n_init: the initial design's size.
    """

    experiment: str
    task: JobTask
    method: JobMethod
    seeds: tuple[int, ...]
    budget: int
    n_init: int

    @property
    def manifest_name(self) -> str:
        """Its manifest's path within its experiment's task folder: ``LABEL/seedsCHUNK.json``."""
        return f"{self.method.label}/seeds{chunk_name(self.seeds)}.json"

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as JSON holds it: the workflow's params (compared by Snakemake to decide
        re-runs) and the job part of its manifest. One flat mapping, in the order and with the
        keys jobs have always had, so that no job's identity moves: ``task`` and ``method`` are
        the task's name and the method's label; ``entries`` is empty for a job made outside a
        study; ``method_options`` is there only where the job has some, so that a job without
        them is the job it was before methods took options."""
        method, task = self.method, self.task
        values = {
            "experiment": self.experiment,
            "task": task.name,
            "method": method.label,
            "method_name": method.name,
            "seeds": list(self.seeds),
            "budget": self.budget,
            "n_init": self.n_init,
            "noise_std": task.noise_std,
            "task_options": task.options,
            "settings": method.settings,
            "entries": {"method": method.entry, "task": task.entry} if method.entry or task.entry else {},
        }
        if method.options:
            values["method_options"] = method.options
        return json.loads(json.dumps(values))

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Job:
        """The job of a :meth:`to_dict` mapping (a manifest's other keys are ignored)."""
        entries = values.get("entries", {})
        return cls(
            experiment=values["experiment"],
            task=JobTask(
                name=values["task"],
                noise_std=values.get("noise_std", 0.0),
                options=dict(values.get("task_options", {})),
                entry=dict(entries.get("task", {})),
            ),
            method=JobMethod(
                label=values["method"],
                name=values["method_name"],
                settings=dict(values.get("settings", {})),
                options=dict(values.get("method_options", {})),
                entry=dict(entries.get("method", {})),
            ),
            seeds=tuple(values["seeds"]),
            budget=values["budget"],
            n_init=values["n_init"],
        )


def chunk_name(seeds: list[int] | tuple[int, ...]) -> str:
    """seeds 0..9 -> '0-9'; a non-contiguous chunk lists its seeds: '3+7+9'."""
    seeds = list(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return "+".join(str(seed) for seed in seeds)


@dataclass(frozen=True)
class Manifest:
    """What a finished job writes last, beside its records: the job, how it ended, what it wrote.

    Attributes:
        job: the job.
        status: :data:`COMPLETE` or :data:`NOT_RUN` (the method cannot run here: ``reason``).
        records: the records' file names (seeds that finished).
        failed: the seeds that ended at an objective fault: ``seed, step, reason, record``.
        reason: why the job did not run.
        sources: the digest of the sources it ran (:func:`oscbo.study.sources.digest`).
        device, device_note, threads: where it ran; seconds, finished: how long, and when it ended.
    """

    job: Job
    status: str
    records: tuple[str, ...] = ()
    failed: tuple[dict[str, Any], ...] = ()
    reason: str = ""
    sources: str = ""
    device: str = ""
    device_note: str = ""
    threads: int = 0
    seconds: float = 0.0
    finished: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The job's fields and the manifest's own, side by side (one flat JSON object)."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "job"}
        return {**self.job.to_dict(), **own, "records": list(self.records), "failed": list(self.failed)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Manifest:
        names = {f.name for f in dataclasses.fields(cls)} - {"job"}
        own = {k: v for k, v in values.items() if k in names}
        return cls(
            job=Job.from_dict(values),
            **{**own, "records": tuple(own.get("records", ())), "failed": tuple(own.get("failed", ()))},
        )

    def write(self, path: str | Path) -> None:
        """Atomically: a killed writer leaves no manifest, so the workflow runs the job again."""
        write_json(path, self.to_dict())

    @classmethod
    def read(cls, path: str | Path) -> Manifest:
        """Raises OSError (absent), ValueError (not JSON) or KeyError/TypeError (not a manifest)."""
        return cls.from_dict(json.loads(Path(path).read_text()))


@dataclass(frozen=True)
class PackManifest:
    """What a pack writes last: its jobs' manifests, relative to its own folder."""

    jobs: tuple[str, ...]
    status: str = COMPLETE
    finished: str = ""

    def write(self, path: str | Path) -> None:
        write_json(path, {"status": self.status, "jobs": list(self.jobs), "finished": self.finished})
