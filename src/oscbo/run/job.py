"""One workflow job: run a :class:`~oscbo.study.job.Job` (:func:`~oscbo.run.lockstep.run_lockstep`),
write its records, then its manifest."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from oscbo import provenance, records, tasks
from oscbo.methods.base import MethodUnavailableError
from oscbo.run import devices
from oscbo.run.lockstep import RunResult, run_lockstep
from oscbo.study.job import COMPLETE, NOT_RUN, Job, Manifest, PackManifest
from oscbo.study.sources import digest, finished

#: A workflow job logs a progress line every this many rounds.
PROGRESS_EVERY = 10


def write(result: RunResult, out_dir: str | Path) -> list[Path]:
    """Write one record per seed as ``out_dir/seed{S}.parquet`` (+ ``.json``), atomically.

    A failed run's record holds its oracle calls before the fault; its sidecar has ``status:
    failed``, the ``reason`` and the ``failed_step``. Returns the paths of the finished records.
    """
    paths = []
    for seed, table in result.tables.items():
        path = records.record_path(out_dir, seed)
        records.write_record(path, table, {**result.meta, "seed": seed, "record": path.name})
        paths.append(path)
    for seed, failed in result.failed.items():
        path = records.record_path(out_dir, seed)
        records.write_record(
            path,
            failed.table,
            {**failed.meta, "seed": seed, "record": path.name, "reason": failed.reason, "failed_step": failed.step},
        )
    return paths


def run_job(
    job: Job,
    manifest: str | Path,
    *,
    device: str = "auto",
    threads: int = 1,
    device_locks: str | Path | None = None,
) -> list[Path]:
    """Run one workflow job -- a seed chunk of (experiment, task, method) -- and record it.

    Writes each seed's record beside ``manifest``, then the manifest itself (a JSON list of
    the records and the job), last and atomically: a job killed before the end leaves no
    manifest, so the workflow re-runs it. A method that cannot run here
    (:class:`MethodUnavailableError`) gets a manifest with status ``not run`` and its
    reason, so the rest of the study goes on and the report says why. Seeds that ended at an
    objective fault are listed under ``failed`` (seed, step, reason, record), not ``records``.

    Args:
        job: the job, as the workflow built it (:func:`oscbo.study.jobs.jobs`).
        manifest: path of the job's manifest.
        device, threads: where and on how many cores to run (:func:`oscbo.study.jobs.placement`);
            ``auto`` and ``cuda`` claim a CUDA device for the job's life
            (:func:`oscbo.run.devices.claim`), or run on the CPU and say so in the log and the
            records' ``device_note``. A task whose oracle runs in parallel (Lunar Lander) gets
            ``threads`` oracle processes and torch one thread, so its records do not depend on them.
        device_locks: folder of the device lock files (default: node-local).
    """
    parallel = tasks.REGISTRY[job.task.name].parallel
    devices.limit_threads(1 if parallel else threads)
    tic = time.perf_counter()
    with devices.claim(device, device_locks) as claimed:
        print(f"device: {claimed.note}", file=sys.stderr, flush=True)
        try:
            result = run_lockstep(
                job,
                device=claimed.device,
                log_every=PROGRESS_EVERY,
                threads=None,
                workers=threads if parallel else None,
            )
        except MethodUnavailableError as error:
            print(f"not run: {error}", file=sys.stderr)
            Manifest(job, NOT_RUN, reason=str(error), sources=digest(job)).write(manifest)
            return []
        result.meta["device_note"] = claimed.note
        paths = write(result, Path(manifest).parent)
        failed = [
            {"seed": seed, "step": fault.step, "reason": fault.reason, "record": records.record_path(".", seed).name}
            for seed, fault in result.failed.items()
        ]
        Manifest(
            job,
            COMPLETE,
            records=tuple(p.name for p in paths),
            failed=tuple(failed),
            sources=digest(job),
            device=result.meta["device"],
            device_note=claimed.note,
            threads=threads,
            seconds=time.perf_counter() - tic,
            finished=provenance.now(),
        ).write(manifest)
    return paths


def run_pack(
    pack: list[Job],
    manifest: str | Path,
    *,
    devices_of: Callable[[Job], str],
    threads: int = 1,
    device_locks: str | Path | None = None,
) -> list[Path]:
    """Run the jobs of a pack (one (experiment, task, seed chunk), several methods) one after the
    other in this process, each as :func:`run_job` would, then write the pack's manifest (the
    list of its jobs' manifests), last and atomically.

    A job whose manifest already holds it, from the same sources (:func:`finished`), is kept:
    a killed pack resumes where it stopped, and an edit of one method re-runs that method alone.

    Args:
        pack: the jobs, in the order to run them (:func:`oscbo.study.jobs.packs`).
        manifest: path of the pack's manifest; the jobs' own go beside it (``Job.manifest_name``).
        devices_of: each job's device (:func:`oscbo.study.jobs.placement`).
        threads, device_locks: as :func:`run_job`.
    """
    directory = Path(manifest).parent
    done = []
    for job in pack:
        path = directory / job.manifest_name
        if finished(job, path):
            print(f"kept: {job.method.label} (finished, same job and sources)", file=sys.stderr, flush=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            run_job(job, path, device=devices_of(job), threads=threads, device_locks=device_locks)
        done.append(path)
    PackManifest(tuple(str(path.relative_to(directory)) for path in done), finished=provenance.now()).write(manifest)
    return done
