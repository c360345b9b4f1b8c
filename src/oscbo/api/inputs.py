"""What the API takes from the user, checked at the boundary: the box (``d`` pairs or BoTorch's
``2 x d``, :func:`check_bounds`), each value the objective returns (:func:`objective_value`), and
the threads the optimiser's work may use (:func:`thread_limit`).
Each refusal names what is wrong, in the user's terms, before anything reaches the engine."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from torch import Tensor

from oscbo.run.lockstep import NonFiniteObjectiveError


def as_point(x: Any) -> np.ndarray:
    """A point the user gives, as a float64 NumPy array (a tensor's values, on the CPU)."""
    return np.asarray(x.detach().cpu() if isinstance(x, Tensor) else x, dtype=np.float64)


class ObjectiveValueError(ValueError):
    """The objective returned something other than one real number."""


#: How bounds may be laid out: ``pairs``, ``d`` pairs (lower, upper); ``botorch``, BoTorch's
#: ``2 x d`` (a row of lower bounds, then a row of upper bounds).
LAYOUTS = ("pairs", "botorch")


def _box_errors(pairs: np.ndarray) -> list[str]:
    """What makes ``d x 2`` pairs no box: infinite ends, or dimensions whose lower end is not below the upper."""
    if not np.isfinite(pairs).all():
        return [f"bounds must be finite, got {pairs.tolist()}"]
    return [f"dimension {i}: ({low:g}, {high:g})" for i, (low, high) in enumerate(pairs) if not low < high]


def check_bounds(bounds: Any, layout: str | None = None) -> Tensor:
    """``2 x d`` float64 lower and upper bounds, from ``d`` pairs ``(lower, upper)`` or from BoTorch's
    ``2 x d`` layout (``layout``: :data:`LAYOUTS`; None reads it from the shape). A ``2 x 2`` input
    that is a box read either way is refused unless ``layout`` names one, as is one that is a box
    only in BoTorch's layout (pairs are the default reading): either could be a mistake.

    Raises:
        ValueError: bounds that are neither layout's, not finite numbers, or a lower bound not
            below its upper bound (naming the dimension); an ambiguous ``2 x 2`` (naming both boxes).
    """
    example = "e.g. [(-5, 10), (0, 15)] for a 2-D box, or BoTorch's 2 x d bounds tensor"
    if layout not in (None, *LAYOUTS):
        raise ValueError(f"bounds_layout must be one of {LAYOUTS} or None, got {layout!r}")
    try:
        array = np.asarray(bounds.detach().cpu() if isinstance(bounds, Tensor) else bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be d pairs (lower, upper) of numbers, {example}; got {bounds!r}") from None
    if array.ndim != 2 or 2 not in array.shape or array.size == 0:
        raise ValueError(f"bounds must be d pairs (lower, upper) or 2 x d, {example}; got shape {array.shape}")
    readings = {"pairs": array if array.shape[1] == 2 else None, "botorch": array.T if array.shape[0] == 2 else None}
    if layout is None:
        if array.shape == (2, 2):
            as_pairs, as_botorch = (not _box_errors(readings[name]) for name in LAYOUTS)
            if as_botorch:
                both = "either way" if as_pairs else "only in BoTorch's layout"
                raise ValueError(
                    f"bounds {array.tolist()} are a box {both}: as pairs (lower, upper) per dimension "
                    f"{readings['pairs'].tolist()}, as BoTorch's 2 x d {readings['botorch'].tolist()}; name the "
                    "layout: bounds_layout='pairs' or 'botorch' (on the command line, --bounds-layout)"
                )
        layout = "pairs" if readings["pairs"] is not None else "botorch"
    pairs = readings[layout]
    if pairs is None:
        raise ValueError(f"bounds of shape {array.shape} are not laid out as {layout!r}, {example}")
    wrong = _box_errors(pairs)
    if wrong and wrong[0].startswith("bounds must"):
        raise ValueError(wrong[0])
    if wrong:
        raise ValueError(f"each lower bound must be below its upper bound; {'; '.join(wrong)}")
    return torch.as_tensor(pairs.T.copy())


def objective_value(value: Any, x: np.ndarray) -> float:
    """The one real number in ``value`` (a Python or NumPy number, or a one-element array or tensor).

    Raises:
        ObjectiveValueError: not a real number (a string, None, a bool, a complex number, ...),
            or more (or fewer) than one number.
        NonFiniteObjectiveError: NaN or infinity.
    """
    where = f"at x = {np.array2string(x, precision=6)}"
    try:
        array = np.asarray(value.detach().cpu() if isinstance(value, Tensor) else value)
    except ValueError:  # a ragged sequence
        array = np.asarray(None)
    if array.dtype.kind not in "iuf":
        raise ObjectiveValueError(
            f"the objective returned {value!r} ({type(value).__name__}) {where}; expected a real number"
        )
    if array.size != 1:
        raise ObjectiveValueError(
            f"the objective returned {array.size} values (shape {array.shape}) {where}; expected one number"
        )
    number = float(array.reshape(()))
    if not math.isfinite(number):
        raise NonFiniteObjectiveError(f"the objective returned {number} {where}")
    return number


#: A value at least this large in magnitude is more likely a failure code or an overflow than an
#: objective's: the GP standardises y, so one such value sets every other value's scale.
HUGE = 1e100


def surprises(value: float, x: np.ndarray, optimal_value: float | None, minimize: bool) -> dict[str, str]:
    """What a value the objective returned (in its own sign) says is likely wrong: ``{kind: message}``
    for a value beyond :data:`HUGE`, and for one better than the ``optimal_value`` given (its regret
    would be negative: a wrong sign, or the wrong optimum)."""
    where = f"at x = {np.array2string(x, precision=6)}"
    found = {}
    if abs(value) >= HUGE:
        found["huge"] = (
            f"the objective returned {value:g} {where}: a value this large is more likely a failure code or an "
            "overflow; the model standardises the values, so it sets the scale of every other"
        )
    if optimal_value is not None:
        beyond = value - optimal_value if not minimize else optimal_value - value
        if beyond > 1e-9 * max(1.0, abs(optimal_value)):
            found["optimum"] = (
                f"the objective returned {value:g} {where}, better than optimal_value={optimal_value:g} "
                f"({'minimising' if minimize else 'maximising'}): its regret is negative; check optimal_value's sign "
                "and minimize"
            )
    return found


@contextmanager
def thread_limit(threads: int | None) -> Iterator[None]:
    """torch's and the BLAS pools' threads capped at ``threads`` while the block runs, and what they
    were afterwards (None: left as they are): the optimiser's own work runs on its threads, the
    rest of the user's process on its own."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    with threadpool_limits(limits=threads):
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)
