"""The scheduling simulator against schedules worked out by hand."""

from __future__ import annotations

import pytest

from oscbo.study.schedule import Machine, Task, simulate


def test_two_cores_run_jobs_in_dag_order_as_cores_free_up() -> None:
    # cores: [0,4) A, [0,1) B, [1,3) C, [3,6) D on the core B and C freed; A's core idles over [4,6)
    tasks = [Task(4), Task(1), Task(2), Task(3)]
    schedule = simulate(tasks, Machine(cores=2))
    assert schedule.starts == (0.0, 0.0, 1.0, 3.0)
    assert schedule.seconds == 6.0
    assert schedule.core_idle == pytest.approx(2 / 12)
    assert schedule.core_idle_waiting == 0.0  # nothing waited while a core was free


def test_a_job_wider_than_the_free_cores_waits_and_the_cores_idle_meanwhile() -> None:
    # a 3-thread job on 4 cores behind a 2-thread one: [0,2) the 2-thread job, 2 cores idle while it waits
    tasks = [Task(2, threads=2), Task(1, threads=3)]
    schedule = simulate(tasks, Machine(cores=4))
    assert schedule.starts == (0.0, 2.0)
    assert schedule.seconds == 3.0
    assert schedule.core_idle_waiting == pytest.approx(2 * 2 / 12)
    assert schedule.core_idle == pytest.approx((12 - 4 - 3) / 12)


def test_threads_scale_down_to_a_node_and_gpus_bound_gpu_jobs() -> None:
    # 8-thread jobs on 2 cores run on 2; two GPU jobs share one GPU one after the other
    assert simulate([Task(5, threads=8)], Machine(cores=2)).core_idle == 0.0
    schedule = simulate([Task(3, gpu=1), Task(3, gpu=1), Task(1)], Machine(cores=4, gpus=1))
    assert schedule.starts == (0.0, 3.0, 0.0)
    assert schedule.seconds == 6.0
    assert schedule.gpu_idle == 0.0
    assert schedule.core_idle == pytest.approx((24 - 3 - 3 - 1) / 24)
    assert schedule.core_idle_waiting == 0.0  # the GPU job waited for the GPU, not for cores
    # a GPU job held back by cores: the GPU idles while it waits, [0, 2) of 3 GPU-seconds
    held = simulate([Task(2, threads=2), Task(1, gpu=1)], Machine(cores=2, gpus=1))
    assert held.starts == (0.0, 2.0)
    assert held.gpu_idle_waiting == pytest.approx(2 / 3) and held.core_idle_waiting == 0.0


def test_nodes_are_separate_and_a_gpu_job_needs_a_node_with_a_gpu() -> None:
    schedule = simulate([Task(2, threads=2), Task(2, threads=2)], Machine(cores=3, nodes=2))
    assert schedule.starts == (0.0, 0.0) and schedule.seconds == 2.0
    with pytest.raises(ValueError, match="more GPUs"):
        simulate([Task(1, gpu=1)], Machine(cores=4))
