"""The task registry: ``oscbo.tasks.get(name)``.

Adding a task is one new factory (in a module of this package) plus one line here. The
registry maps names to ``"module:factory"`` strings so that listing names, and finding a
task's source file, imports nothing heavy.
"""

from __future__ import annotations

from importlib import import_module, util
from pathlib import Path

from oscbo.tasks.base import Task

REGISTRY: dict[str, str] = {
    "levy5": "oscbo.tasks.synthetic:levy5",
    "hartmann3": "oscbo.tasks.synthetic:hartmann3",
    "hartmann6": "oscbo.tasks.synthetic:hartmann6",
    "lunar12": "oscbo.tasks.lunar:lunar12",
    "material5": "oscbo.tasks.tabular:material5",
    "material5-max": "oscbo.tasks.tabular:material5_max",
    "concrete7": "oscbo.tasks.tabular:concrete7",
    "crossbarrel4": "oscbo.tasks.tabular:crossbarrel4",
    "gp2": "oscbo.tasks.gp_sample:gp2",
    "gp5": "oscbo.tasks.gp_sample:gp5",
}


class UnknownTaskError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def names() -> list[str]:
    return list(REGISTRY)


def _entry(name: str) -> tuple[str, str]:
    if name not in REGISTRY:
        raise UnknownTaskError(f"unknown task {name!r}; valid tasks: {', '.join(REGISTRY)}")
    module, factory = REGISTRY[name].split(":")
    return module, factory


def get(name: str, **options) -> Task:
    """A fresh instance of the task registered as ``name``, built with ``options``.

    Raises:
        ValueError: an option the task's factory does not take (naming the valid ones).
    """
    check_options(name, options)
    module, factory = _entry(name)
    return getattr(import_module(module), factory)(**options)


def check_options(name: str, options: dict) -> None:
    """Raise ValueError naming any option that task ``name``'s factory does not take, or whose
    value is not of its default's kind (an integer, a finite number or a boolean)."""
    import inspect
    import math

    module, factory = _entry(name)
    parameters = inspect.signature(getattr(import_module(module), factory)).parameters
    unknown = sorted(set(options) - set(parameters), key=str)
    if unknown:
        raise ValueError(f"task {name!r} takes no option(s) {unknown}; its options: {list(parameters) or 'none'}")
    for option, value in options.items():
        default = parameters[option].default
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if isinstance(default, bool):
            ok, kind = isinstance(value, bool), "true or false"
        elif isinstance(default, int):
            ok, kind = number and float(value).is_integer(), "an integer"
        elif isinstance(default, float):
            ok, kind = number, "a finite number"
        else:
            continue  # no default to compare with (e.g. a path or None): the factory checks it
        if not ok:
            raise ValueError(f"task {name!r}: option {option} must be {kind}, got {value!r}")


def source_file(name: str) -> Path:
    """The file defining task ``name`` (for workflow rules that re-run when it changes)."""
    module, _ = _entry(name)
    return Path(util.find_spec(module).origin)


__all__ = ["Task", "check_options", "get", "names", "source_file", "UnknownTaskError"]
