"""A record's JSON sidecar: what ran, where and when, and with which code (docs/user-guide.md, "What it does").

One function for every writer of records: the workflow's jobs (:func:`oscbo.run.run`) and a
user's own objective (:meth:`oscbo.api.Optimizer.write`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from oscbo import provenance, reproducibility
from oscbo.settings import Settings


def sidecar(
    *,
    experiment: str,
    task: dict[str, Any],
    method: str,
    method_name: str,
    settings: Settings,
    budget: int,
    n_init: int,
    seeds: Sequence[int],
    device: torch.device | str,
    started: str,
    status: str,
    **extra: Any,
) -> dict[str, Any]:
    """The sidecar fields shared by every seed of a run (each record adds its own ``seed``).

    Args:
        experiment, method, method_name: the identifiers (``method`` is the label).
        task: the task's description (:meth:`oscbo.tasks.base.Task.describe`).
        settings: the resolved run settings.
        budget: BO rounds T after the initial design of ``n_init`` points.
        seeds: the seeds of the batch.
        device: where the tensors were.
        started: when the run started (:func:`oscbo.provenance.now`).
        status: ``complete``, ``failed`` or ``partial``.
        **extra: fields of one kind of run (noise, task options, a batch's jitter escalations).
    """
    return {
        "experiment": experiment,
        "task": task,
        "method": method,
        "method_name": method_name,
        "settings": settings.to_dict(),
        "budget": budget,
        "n_init": n_init,
        "batch_seeds": list(seeds),
        "device": str(device),
        "hardware": provenance.machine(),
        "threads": torch.get_num_threads(),
        "code_path": reproducibility.code_path(str(device)),
        "started": started,
        "finished": provenance.now(),
        "versions": provenance.package_versions(),
        "git_commit": provenance.git_commit(),
        "status": status,
        **extra,
    }
