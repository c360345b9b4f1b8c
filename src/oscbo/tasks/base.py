"""What a task is: a maximisation problem on a box, queried in normalised coordinates."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import Tensor


def build_task(name: str, **options: Any) -> Task:
    """A fresh instance of the task registered as ``name``, built with ``options``.

    Raises:
        ValueError: an option the task's factory does not take, or of the wrong kind (naming it).
    """
    from oscbo.tasks import REGISTRY

    entry = REGISTRY[name]
    try:
        entry.check_options(options)
    except ValueError as error:
        raise ValueError(f"task {name!r}: {error}") from None
    return entry.load()(**options)


def to_natural(x: Tensor, bounds: Tensor) -> Tensor:
    """Map ``... x d`` points of [0, 1]^d into the box ``bounds`` (``2 x d``: lower, upper)."""
    low, high = bounds.to(x)
    return low + x * (high - low)


class Task(ABC):
    """A black-box function to maximise over ``bounds`` (``2 x d``, natural units).

    The BO engine works in [0, 1]^d; :meth:`__call__` maps a normalised query to the box
    and evaluates the noise-free objective.
    """

    name: str
    bounds: Tensor

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    @abstractmethod
    def optimal_value(self) -> float | None:
        """f*, or None when unknown (regret is then taken against the best value seen)."""

    @abstractmethod
    def evaluate_true(self, X: Tensor) -> Tensor:
        """Noise-free objective at ``... x d`` points in natural units; returns ``...``."""

    def to_natural(self, x: Tensor) -> Tensor:
        return to_natural(x, self.bounds)

    def __call__(self, x: Tensor) -> Tensor:
        """Noise-free objective at ``... x d`` points in [0, 1]^d."""
        return self.evaluate_true(self.to_natural(x))

    def describe(self) -> dict:
        return {"name": self.name, "dim": self.dim, "optimal_value": self.optimal_value, "bounds": self.bounds.tolist()}


class BoTorchTask(Task):
    """A BoTorch synthetic test function, negated so that it is maximised."""

    def __init__(self, name: str, problem_cls: type, **kwargs) -> None:
        self.name = name
        self.problem = problem_cls(negate=True, **kwargs).to(torch.float64)
        self.bounds = self.problem.bounds.to(torch.float64)

    @property
    def optimal_value(self) -> float:
        return float(self.problem.optimal_value) + 0.0  # + 0.0 turns -0.0 into 0.0

    def evaluate_true(self, X: Tensor) -> Tensor:
        # forward() applies the negation; evaluate_true() of BoTorch would not.
        return self.problem(X.to(self.bounds), noise=False)
