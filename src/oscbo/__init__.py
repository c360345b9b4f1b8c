"""oscbo: a reproducible replication of Online Sharp-Calibrated Bayesian Optimization.

Importing this package is cheap (no torch); the engine, methods and tasks load on use, and so
do the names for a user's own objective: :class:`Optimizer` and :func:`optimize`
(:mod:`oscbo.optimizer`), :class:`OSCBOLengthscale` (:mod:`oscbo.lengthscale`).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from oscbo.reproducibility import request_strict_mkl

request_strict_mkl()  # before torch's first matrix computation (see oscbo.reproducibility)

__version__ = "0.1.0"

_LAZY = {
    "Optimizer": "oscbo.optimizer",
    "optimize": "oscbo.optimizer",
    "OSCBOLengthscale": "oscbo.lengthscale",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'oscbo' has no attribute {name!r}")
