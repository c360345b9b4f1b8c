"""oscbo: a reproducible replication of Online Sharp-Calibrated Bayesian Optimization.

The package follows the pipeline (``docs/architecture.md``): ``study`` (configuration, jobs,
protocol) -> ``model`` (the GP and the acquisition) -> ``methods`` and ``tasks`` -> ``run`` (the
BO loop, seeds in lockstep, a workflow job) -> ``analysis`` (summary tables, claims, findings)
-> ``figures`` -> ``report``; ``api`` is a user's own objective. Importing this package is cheap
(no torch); the names for a user's own objective load on use: :class:`Optimizer` and
:func:`optimize`, :class:`OSCBOLengthscale` (:mod:`oscbo.api`), and the exceptions a user's code
may catch (``oscbo.ObjectiveValueError``, ``oscbo.UnknownMethodError``, ...).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from oscbo.reproducibility import pin

pin()  # the numerical code path, before torch and NumPy start (see oscbo.reproducibility)

__version__ = "0.1.0"

_LAZY = {
    "Optimizer": "oscbo.api.optimizer",
    "optimize": "oscbo.api.optimize",
    "OSCBOLengthscale": "oscbo.api.lengthscale",
    # what a user's code may catch: a value the objective returned that is not one real number, or
    # not finite; a method hook's output of the wrong shape; a name no registry holds; a bad setting
    "ObjectiveValueError": "oscbo.api.inputs",
    "NonFiniteObjectiveError": "oscbo.run.lockstep",
    "MethodOutputError": "oscbo.run.loop",
    "MethodUnavailableError": "oscbo.methods.base",
    "UnknownMethodError": "oscbo.methods",
    "UnknownTaskError": "oscbo.tasks",
    "ConfigError": "oscbo.settings",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'oscbo' has no attribute {name!r}")
