"""The method registry: ``oscbo.methods.get(name)``.

Each entry maps a name to ``"module:Class"`` and the settings that define the method (e.g.
OSCBO-L1 is OSCBO with ``calibration_power = 1``). Adding a method is one new file with a
:class:`~oscbo.methods.base.Method` subclass plus one line here. Names and source files are
listed without importing torch, so the workflow can read them cheaply.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module, util
from pathlib import Path
from typing import Any

REGISTRY: dict[str, tuple[str, dict[str, Any]]] = {
    "oscbo": ("oscbo.methods.oscbo:OSCBO", {"calibration_power": 2}),
    "oscbo-l1": ("oscbo.methods.oscbo:OSCBO", {"calibration_power": 1}),
    "gp-ucb-mll": ("oscbo.methods.gp_ucb_mll:GPUCBMLL", {}),
    "ocbo": ("oscbo.methods.ocbo:OCBO", {}),
    "a-gp-ucb": ("oscbo.methods.a_gp_ucb:AGPUCB", {"lengthscale_bounds": (1e-4, 1e1)}),
    "lb-gp-ucb": ("oscbo.methods.lb_gp_ucb:LBGPUCB", {"lengthscale_bounds": (1e-4, 1e1)}),
    "scgp": ("oscbo.methods.scgp:SCGP", {}),
    "vanilla-bo": ("oscbo.methods.vanilla_bo:VanillaBO", {"ard": True, "lengthscale_bounds": (1e-2, 1e2)}),
    "tabicl": ("oscbo.methods.tabicl:TabICL", {}),
}


class UnknownMethodError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def names() -> list[str]:
    return list(REGISTRY)


def _entry(name: str) -> tuple[str, str, dict[str, Any]]:
    if name not in REGISTRY:
        raise UnknownMethodError(f"unknown method {name!r}; valid methods: {', '.join(REGISTRY)}")
    target, fixed = REGISTRY[name]
    module, cls = target.split(":")
    return module, cls, fixed


def get(name: str):
    """The :class:`~oscbo.methods.base.Method` subclass registered as ``name``."""
    module, cls, _ = _entry(name)
    return getattr(import_module(module), cls)


def build(name: str, settings, budget: int, seeds: Sequence[int]):
    """An instance of method ``name`` with its defining settings applied on top of ``settings``."""
    _, _, fixed = _entry(name)
    method = get(name)(settings.replace(**fixed), budget, seeds)
    method.name = name
    return method


def source_file(name: str) -> Path:
    """The file that defines method ``name`` (for workflow rules that re-run when it changes)."""
    module, _, _ = _entry(name)
    return Path(util.find_spec(module).origin)


__all__ = ["get", "build", "names", "source_file", "UnknownMethodError"]
