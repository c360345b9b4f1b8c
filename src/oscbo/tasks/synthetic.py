"""Synthetic benchmarks of the paper's appendix E.1: BoTorch's test functions, negated."""

from __future__ import annotations

from botorch.test_functions import Hartmann, Levy

from oscbo.tasks.base import BoTorchTask


def levy5() -> BoTorchTask:
    """Levy 5-D on [-10, 10]^5 (eq. S131), f* = 0."""
    return BoTorchTask("levy5", Levy, dim=5)


def hartmann3() -> BoTorchTask:
    """Hartmann 3-D on [0, 1]^3 (eq. S132), f* = 3.86278."""
    return BoTorchTask("hartmann3", Hartmann, dim=3)


def hartmann6() -> BoTorchTask:
    """Hartmann 6-D on [0, 1]^6 (eq. S133), f* = 3.32237."""
    return BoTorchTask("hartmann6", Hartmann, dim=6)
