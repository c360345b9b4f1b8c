"""A record's JSON sidecar: what ran, where and when, and with which code (docs/user-guide.md, "What it does").

One function for every writer of records, each describing its run by a
:class:`~oscbo.study.job.Job`: the workflow's jobs and direct runs
(:func:`oscbo.run.lockstep.run_lockstep`) and a user's own objective
(:meth:`oscbo.api.Optimizer.write`).
"""

from __future__ import annotations

from typing import Any

import torch

from oscbo import provenance, reproducibility
from oscbo.settings import Settings
from oscbo.study.job import Job


def sidecar(
    job: Job,
    *,
    task: dict[str, Any],
    settings: Settings,
    device: torch.device | str,
    started: str,
    status: str,
    **extra: Any,
) -> dict[str, Any]:
    """The sidecar fields shared by every seed of a run (each record adds its own ``seed``).

    Args:
        job: the run (its seeds: the batch's); the sidecar takes its identifiers (``experiment``,
            ``method``: the label, ``method_name``), ``budget`` (BO rounds T after the initial
            design of ``n_init`` points) and ``seeds`` (``batch_seeds``).
        task: the task's description (:meth:`oscbo.tasks.base.Task.describe`).
        settings: the method's resolved settings (the job's, with its registry entry's on top).
        device: where the tensors were.
        started: when the run started (:func:`oscbo.provenance.now`).
        status: ``complete``, ``failed`` or ``partial``.
        **extra: fields of one kind of run (noise, task options, a batch's jitter escalations).
    """
    return {
        "experiment": job.experiment,
        "task": task,
        "method": job.method.label,
        "method_name": job.method.name,
        "settings": settings.to_dict(),
        "budget": job.budget,
        "n_init": job.n_init,
        "batch_seeds": list(job.seeds),
        "device": str(device),
        "hardware": provenance.machine(),
        "threads": torch.get_num_threads(),
        "code_path": reproducibility.code_path(str(device)),
        "started": started,
        "finished": provenance.now(),
        "versions": provenance.package_versions(),
        "git_commit": provenance.git_commit(),
        "status": status,
        **({"method_options": dict(job.method.options)} if job.method.options else {}),
        **extra,
    }
