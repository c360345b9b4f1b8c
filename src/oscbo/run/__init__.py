"""Running BO: the loop, S seeds in lockstep, a workflow job, the device it runs on.

* :mod:`oscbo.run.loop`: the rounds, one ask/tell at a time (:class:`~oscbo.run.loop.Loop`);
* :mod:`oscbo.run.rows`: the record built round by round;
* :mod:`oscbo.run.lockstep`: :func:`run_lockstep`, a :class:`~oscbo.study.job.Job`'s seeds in
  lockstep, objective faults isolated, and :func:`run`, the same from plain arguments;
* :mod:`oscbo.run.job`: :func:`run_job`, one workflow job to records and a manifest;
* :mod:`oscbo.run.sidecar`: the records' sidecar;
* :mod:`oscbo.run.devices`: a job's device (a claimed GPU or the CPU) and its threads.
"""

from oscbo.run.devices import limit_threads, resolve_device
from oscbo.run.job import run_job, write
from oscbo.run.lockstep import (
    FailedRun,
    NonFiniteObjectiveError,
    ObjectiveFault,
    RunResult,
    initial_design,
    run,
    run_lockstep,
)
from oscbo.run.loop import Loop

__all__ = [
    "FailedRun",
    "Loop",
    "NonFiniteObjectiveError",
    "ObjectiveFault",
    "RunResult",
    "initial_design",
    "limit_threads",
    "resolve_device",
    "run",
    "run_job",
    "run_lockstep",
    "write",
]
