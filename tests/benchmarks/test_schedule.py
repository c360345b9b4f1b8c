"""benchmarks/schedule.py: the scheduling simulator against schedules worked out by hand."""

from __future__ import annotations

import pytest
from helpers import benchmark_module

schedule = benchmark_module("schedule")


def test_two_cores_run_jobs_in_dag_order_as_cores_free_up(schedule) -> None:
    # cores: [0,4) A, [0,1) B, [1,3) C, [3,6) D on the core B and C freed; A's core idles over [4,6)
    tasks = [schedule.Task(4), schedule.Task(1), schedule.Task(2), schedule.Task(3)]
    found = schedule.simulate(tasks, schedule.Machine(cores=2))
    assert found.starts == (0.0, 0.0, 1.0, 3.0)
    assert found.seconds == 6.0
    assert found.core_idle == pytest.approx(2 / 12)
    assert found.core_idle_waiting == 0.0  # nothing waited while a core was free


def test_a_job_wider_than_the_free_cores_waits_and_the_cores_idle_meanwhile(schedule) -> None:
    # a 3-thread job on 4 cores behind a 2-thread one: [0,2) the 2-thread job, 2 cores idle while it waits
    tasks = [schedule.Task(2, threads=2), schedule.Task(1, threads=3)]
    found = schedule.simulate(tasks, schedule.Machine(cores=4))
    assert found.starts == (0.0, 2.0)
    assert found.seconds == 3.0
    assert found.core_idle_waiting == pytest.approx(2 * 2 / 12)
    assert found.core_idle == pytest.approx((12 - 4 - 3) / 12)


def test_threads_scale_down_to_a_node_and_gpus_bound_gpu_jobs(schedule) -> None:
    # 8-thread jobs on 2 cores run on 2; two GPU jobs share one GPU one after the other
    assert schedule.simulate([schedule.Task(5, threads=8)], schedule.Machine(cores=2)).core_idle == 0.0
    found = schedule.simulate(
        [schedule.Task(3, gpu=1), schedule.Task(3, gpu=1), schedule.Task(1)], schedule.Machine(cores=4, gpus=1)
    )
    assert found.starts == (0.0, 3.0, 0.0)
    assert found.seconds == 6.0
    assert found.gpu_idle == 0.0
    assert found.core_idle == pytest.approx((24 - 3 - 3 - 1) / 24)
    assert found.core_idle_waiting == 0.0  # the GPU job waited for the GPU, not for cores
    # a GPU job held back by cores: the GPU idles while it waits, [0, 2) of 3 GPU-seconds
    held = schedule.simulate([schedule.Task(2, threads=2), schedule.Task(1, gpu=1)], schedule.Machine(cores=2, gpus=1))
    assert held.starts == (0.0, 2.0)
    assert held.gpu_idle_waiting == pytest.approx(2 / 3) and held.core_idle_waiting == 0.0


def test_nodes_are_separate_and_a_gpu_job_needs_a_node_with_a_gpu(schedule) -> None:
    found = schedule.simulate(
        [schedule.Task(2, threads=2), schedule.Task(2, threads=2)], schedule.Machine(cores=3, nodes=2)
    )
    assert found.starts == (0.0, 0.0) and found.seconds == 2.0
    with pytest.raises(ValueError, match="more GPUs"):
        schedule.simulate([schedule.Task(1, gpu=1)], schedule.Machine(cores=4))


def test_the_highest_priority_starts_first_then_dag_order(schedule) -> None:
    # one core; DAG order A(1) B(1) C(4), C first by priority: C [0,4), A [4,5), B [5,6)
    tasks = [schedule.Task(1), schedule.Task(1), schedule.Task(4, priority=9)]
    assert schedule.simulate(tasks, schedule.Machine(cores=1)).starts == (4.0, 5.0, 0.0)
    # two cores, the long job last in DAG order: 1 + 1 then 4 ends at 5; started first, at 4
    by_dag = schedule.simulate(
        [schedule.Task(1), schedule.Task(1), schedule.Task(1), schedule.Task(4)], schedule.Machine(2)
    )
    first = schedule.simulate(
        [schedule.Task(1), schedule.Task(1), schedule.Task(1), schedule.Task(4, priority=1)], schedule.Machine(2)
    )
    assert (by_dag.seconds, first.seconds) == (5.0, 4.0)
