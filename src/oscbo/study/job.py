"""A BO job and its manifest: what the workflow asks for, and what it finds when the job is done.

A :class:`Job` is one seed chunk of one (experiment, task, method label): everything that
determines its records, and nothing about where it runs (device and threads are the runner's),
so that changing where it runs re-runs nothing. Its :class:`Manifest`, written last beside its
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
        entries: the ``method`` and ``task`` registry entries it runs
            (:meth:`oscbo.registry.Entry.definition`): editing an entry re-runs its jobs alone.
        method_options: keyword arguments of the method's class, its own settings (a config's
            ``options`` of a method entry); left out of :meth:`to_dict` when empty.
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
    entries: dict[str, Any] = field(default_factory=dict)
    method_options: dict[str, Any] = field(default_factory=dict)

    @property
    def manifest_name(self) -> str:
        """Its manifest's path within its experiment's task folder: ``LABEL/seedsCHUNK.json``."""
        return f"{self.method}/seeds{chunk_name(self.seeds)}.json"

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as JSON holds it: the workflow's params (compared by Snakemake to decide
        re-runs) and the job part of its manifest; ``method_options`` only where the job has some,
        so that a job without them is the job it was before methods took options."""
        values = {**dataclasses.asdict(self), "seeds": list(self.seeds)}
        if not self.method_options:
            del values["method_options"]
        return json.loads(json.dumps(values))

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Job:
        """The job of a :meth:`to_dict` mapping (a manifest's other keys are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{**{k: v for k, v in values.items() if k in names}, "seeds": tuple(values["seeds"])})


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
