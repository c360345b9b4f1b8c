"""A registry of named things (the methods, the tasks), each declared in one entry.

An :class:`Entry` says where the thing is defined (``"module:attribute"``, imported only when
it is used, so that listing names, checking a config or choosing a job's environment imports
no torch), the settings that define it (OSCBO-L1 is OSCBO with ``calibration_power = 1``), the
conda environment its jobs need beyond the BO stage's (``envs/NAME.yaml``), and what its jobs
need of the machine: a method that is faster on a GPU (``gpu``: TabICLv2, a 29 M-parameter
network; a GP on at most 110 points is milliseconds of CPU arithmetic), a task whose oracle
evaluates a round's points in parallel processes (``parallel``: Lunar Lander's simulator; its
factory takes ``workers``), and the settings that name files its jobs read (``inputs``:
TabICLv2's checkpoint), which the workflow makes the jobs' inputs. Its rows of the report's
protocol, where the project read or filled what the paper says about it, are data in
``oscbo/study/protocol.yaml`` (:mod:`oscbo.study.protocol`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from oscbo import imports
from oscbo.settings import ConfigError, checked


@dataclass(frozen=True)
class Entry:
    """One registered method or task (module docstring)."""

    target: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    environment: str = "bo"
    gpu: bool = False
    parallel: bool = False
    inputs: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return self.target.split(":")[0]

    def load(self) -> Any:
        module, attribute = self.target.split(":")
        return getattr(import_module(module), attribute)

    def definition(self) -> dict[str, Any]:
        """What of the entry determines a run's numbers: its target and defining settings (not its
        protocol rows, env or machine needs). A job holds its method's and its task's
        (``JobMethod.entry``, ``JobTask.entry``), so that editing one entry re-runs that entry's
        jobs alone."""
        return {"target": self.target, "settings": dict(self.settings)}

    def check_options(self, options: Mapping[str, Any], reserved: tuple[str, ...] = ()) -> None:
        """Raise ValueError naming any of ``options`` that the target (a factory, or a method's
        class) does not take but for its ``reserved`` parameters (a method's settings, budget and
        seeds), or whose value is not of its default's kind (an integer, a finite number or a boolean)."""
        parameters = imports.defaults(self.target)  # from the source: no torch for a config check
        if parameters is None or any(parameters.get(option) is imports.UNREAD for option in options):
            parameters = {name: p.default for name, p in inspect.signature(self.load()).parameters.items()}
        parameters = {name: default for name, default in parameters.items() if name not in reserved}
        unknown = sorted(set(options) - set(parameters), key=str)
        if unknown:
            raise ValueError(f"{self.target} takes no option(s) {unknown}; its options: {list(parameters) or 'none'}")
        for option, value in options.items():
            default = parameters[option]
            if isinstance(default, str):
                continue  # a path: the factory checks it
            try:
                checked(f"option {option}", value, default)
            except ConfigError as error:
                raise ValueError(f"{self.target}: {error}") from None


class UnknownNameError(KeyError):
    """A name no registry entry has; the message lists the valid ones."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(MutableMapping[str, Entry]):
    """Entries by name, in registration order; ``kind`` names them in errors ("method", "task").
    A plug-in (a test's faulty task, a user's method in a notebook) is registered by assigning
    an :class:`Entry` to its name."""

    def __init__(self, kind: str, entries: Mapping[str, Entry]) -> None:
        self.kind = kind
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> Entry:
        if name not in self._entries:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(self._entries)}")
        return self._entries[name]

    def __setitem__(self, name: str, entry: Entry) -> None:
        if not isinstance(entry, Entry):
            raise TypeError(f"a {self.kind} is registered as an Entry, got {entry!r}")
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)
