"""What each job of a study took when it ran, read from its manifests (``--job-times``): the
price of a job at its own time (:class:`JobTimes`), of a job not run yet at its peers' (a part
priced before it ran, :func:`like_times`), and a part's measured wall time (:func:`measured_wall`).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path

from oscbo.paper import REPLICATES
from oscbo.study.job import Job, Manifest, chunk_name
from oscbo.study.jobs import Key


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
            unpriced = [key for key in missing if peer(found[key]) not in peers]
            if unpriced:
                raise ValueError(
                    f"{len(unpriced)} jobs have no finished job of their method to be priced like: {unpriced[:3]}"
                )
            seconds |= {key: peers[peer(found[key])] for key in missing}
        elif missing:
            named = [str(results / "runs" / key[0] / key[1] / found[key].manifest_name) for key in missing[:3]]
            raise ValueError(f"{len(missing)} jobs have no manifest under {results / 'runs'}: {named}")
        return cls(seconds, startup)

    def price(self, job: Job, threads: int, tabicl: bool = True) -> float:
        """The job's seconds as it ran (``threads`` aside: see the class)."""
        return self.seconds[(job.experiment, job.task.name, job.method.label, chunk_name(job.seeds))][0]

    def core_seconds(self, job: Job) -> float:
        """The job's seconds times the cores it ran on."""
        seconds, cores = self.seconds[(job.experiment, job.task.name, job.method.label, chunk_name(job.seeds))]
        return seconds * cores


def peer(job: Job) -> tuple[str, str, str, int]:
    """What a job not run yet is priced like: its experiment's (a replicate's, its experiment's, as
    :data:`oscbo.paper.REPLICATES` names it) jobs of its method on its task with as many seeds."""
    return (REPLICATES.get(job.experiment, job.experiment), job.task.name, job.method.name, len(job.seeds))


def like_times(results: Path, before: str = "") -> dict[tuple[str, str, str, int], tuple[float, int]]:
    """:func:`_peer` -> the mean seconds and the cores of the finished jobs under ``results/runs``
    that are its peers (finished ``before`` that ISO time, if given)."""
    found: dict[tuple[str, str, str, int], list[tuple[float, int]]] = {}
    for path in (results / "runs").glob("*/*/*/seeds*.json"):
        manifest = Manifest.read(path)
        if manifest.status == "complete" and (not before or manifest.finished < before):
            found.setdefault(peer(manifest.job), []).append((manifest.seconds, max(1, manifest.threads)))
    return {peer: (sum(s for s, _ in times) / len(times), max(c for _, c in times)) for peer, times in found.items()}


def ran_before(results: Path, key: Key, job: Job, since: str) -> bool:
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
