"""The task registry: each task declared in one entry (:class:`oscbo.registry.Entry`).

An entry names the factory (``"module:factory"``, imported only when the task is built), the
conda environment its jobs need (Lunar Lander's simulator) and whether its oracle runs in parallel
processes. Its rows of the report's protocol are data in ``oscbo/study/protocol.yaml``
(:mod:`oscbo.study.protocol`). Adding a task is one new factory returning a
:class:`~oscbo.tasks.base.Task`, in a module of this package, one entry here, and its protocol
rows there if it has any. This file holds entries only (:func:`oscbo.tasks.base.build_task`
builds one): a job depends on its own task's entry, not on this file (:mod:`oscbo.imports`).
"""

from __future__ import annotations

from oscbo.registry import Entry, Registry, UnknownNameError

REGISTRY = Registry(
    "task",
    {
        "levy5": Entry("oscbo.tasks.synthetic:levy5"),
        "hartmann3": Entry("oscbo.tasks.synthetic:hartmann3"),
        "hartmann6": Entry("oscbo.tasks.synthetic:hartmann6"),
        "lunar12": Entry("oscbo.tasks.lunar:lunar12", environment="lunar", parallel=True),
        "material5": Entry("oscbo.tasks.tabular:material5"),
        "material5-max": Entry("oscbo.tasks.tabular:material5_max"),
        "concrete7": Entry("oscbo.tasks.tabular:concrete7"),
        "crossbarrel4": Entry("oscbo.tasks.tabular:crossbarrel4"),
        "gp2": Entry("oscbo.tasks.gp_sample:gp2"),
        "gp5": Entry("oscbo.tasks.gp_sample:gp5"),
    },
)

#: The registered names, in registration order.
names = REGISTRY.names
UnknownTaskError = UnknownNameError

__all__ = ["REGISTRY", "names", "UnknownTaskError"]
