"""The one-call driver: :func:`optimize` runs an :class:`~oscbo.api.optimizer.Optimizer` on the
user's function (or a BoTorch test problem, with BoTorch's conventions) for its whole budget, with
a progress bar, and decides what a failed evaluation does (``on_fault``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from oscbo.api.inputs import ObjectiveValueError
from oscbo.api.noise import botorch_noisy
from oscbo.api.optimizer import Optimizer
from oscbo.run.lockstep import NonFiniteObjectiveError


def botorch_problem(f: Any) -> bool:
    """Whether ``f`` is a BoTorch test problem (``botorch.test_functions``): bounds, negate, forward."""
    from botorch.test_functions.base import BaseTestProblem

    return isinstance(f, BaseTestProblem)


def optimize(
    f: Callable[[np.ndarray], Any],
    bounds: Any = None,
    *,
    budget: int,
    method: str = "oscbo",
    seed: int = 0,
    progress: bool = True,
    on_fault: str = "stop",
    **options: Any,
) -> Optimizer:
    """Optimise ``f`` over ``bounds`` for ``budget`` BO rounds after the initial design; the
    finished :class:`Optimizer`.

    Args:
        f: takes a point (a ``d`` NumPy array in the box) and returns one real number; or a BoTorch
            test problem (``botorch.test_functions``), with BoTorch's conventions: its ``bounds``
            (``2 x d``) unless ``bounds`` is given, minimised unless built with ``negate=True``
            (then its values, already negated, are maximised), its ``optimal_value`` for the
            regret columns where it has one, its class name for the record.
        bounds, budget, method, seed: as for :class:`Optimizer` (``budget + n_init`` evaluations).
        progress: show a progress bar (tqdm, on stderr) with the best value so far.
        on_fault: when ``f`` raises, or returns NaN, inf or something other than one number:
            ``"stop"`` (the default) ends the run there, keeps every evaluation before it, warns,
            and names the failure in ``.fault`` and the record's sidecar (``status: failed``);
            ``"continue"`` marks the point failed, tells it at the worst value told so far (so the
            method moves away from it) and goes on, listing it in ``.failed_evaluations`` and the
            sidecar; ``"raise"`` lets the error through (the optimiser, then, is lost with it).
            Before any value exists there is nothing to impute from: under ``"continue"`` the point
            is listed with no step and the initial design moves on to its next point (hidden
            constraints; a whole design's worth of failures raises), under ``"stop"`` the first
            evaluation's failure raises (nothing to keep, and ``f`` is likely wrong).
        **options: the other arguments of :class:`Optimizer` (``minimize``, ``n_init``,
            ``optimal_value``, ``name`` (the record's, by default ``f``'s own), ``design``, ``threads``,
            ``bounds_layout``, settings such as ``lambda0``).

    Returns:
        The optimiser: ``.best`` (x, y), ``.history`` (the record), ``.write(dir)``.

    Raises:
        KeyboardInterrupt: Ctrl-C, let through once the optimiser has marked where it stopped; the
            exception's ``optimizer`` holds every evaluation told (``.write(dir)`` writes them, the
            sidecar's status ``interrupted``).
    """
    from tqdm.auto import tqdm

    if on_fault not in ("stop", "continue", "raise"):
        raise ValueError(f"on_fault must be 'stop', 'continue' or 'raise', got {on_fault!r}")
    noisy = None  # a noisy BoTorch problem's x -> (y, f)
    if botorch_problem(f):
        problem = f
        if bounds is None:
            bounds, options["bounds_layout"] = problem.bounds, "botorch"
        options.setdefault("minimize", not problem.negate)
        if getattr(problem, "_optimal_value", None) is not None:
            options.setdefault("optimal_value", float(problem.optimal_value))
        options.setdefault("name", type(problem).__name__.lower())
        if getattr(problem, "noise_std", None):  # y noisy, f its noiseless value, the noise the run's own
            options.setdefault("noisy", True)
            noisy = botorch_noisy(problem, options["name"], seed)
        else:

            def f(x: np.ndarray) -> Any:
                return problem(torch.as_tensor(x, dtype=problem.bounds.dtype))

    if bounds is None:
        raise ValueError("optimize() needs bounds: d pairs (lower, upper), or BoTorch's 2 x d")
    name = getattr(f, "__name__", "objective")
    options.setdefault("name", "objective" if name == "<lambda>" else name)
    optimizer = Optimizer(bounds, method, seed, budget=budget, **options)
    with tqdm(
        total=optimizer.total, desc=f"{optimizer.method.name} on {optimizer.name}", unit="eval", disable=not progress
    ) as bar:
        shown = None  # the best value told, for the bar (.best would build the whole history each time)
        while optimizer.evaluations < optimizer.total:
            x = optimizer.ask()
            try:
                if noisy is None:
                    y = f(x.copy())  # a copy: f may change its argument
                    optimizer.tell(x, y)
                else:
                    y, noiseless = noisy(x)
                    optimizer.tell(x, y, f=noiseless)
            except KeyboardInterrupt as stop:  # Ctrl-C: nothing told is lost, and the interrupt goes on
                optimizer.interrupt()
                stop.optimizer = optimizer
                stop.add_note(
                    f"oscbo: {optimizer.name} interrupted at evaluation {optimizer.evaluations}; its evaluations are "
                    "kept: except KeyboardInterrupt as stop: stop.optimizer.write(folder)"
                )
                raise
            except Exception as error:
                if on_fault == "raise" or (on_fault == "stop" and optimizer.evaluations == 0):
                    raise  # nothing to keep: most likely f's bug
                own = isinstance(error, ObjectiveValueError | NonFiniteObjectiveError)  # already says what f did
                reason = str(error) if own else f"the objective raised {type(error).__name__}: {error}"
                if on_fault == "continue":
                    try:
                        optimizer.fail_and_go_on(reason)
                    except ValueError as everywhere:  # every point of a design failed
                        raise everywhere from error
                    failed = optimizer.failed_evaluations[-1]
                    said = (
                        f"an evaluation before any value failed ({reason}); nothing to impute: the initial design "
                        "moves on to its next point"
                        if failed["step"] is None
                        else f"evaluation {failed['step']} failed ({reason}); told at the worst value so far, "
                        f"{failed['imputed']:.6g}, and the run goes on"
                    )
                    warnings.warn(f"{optimizer.name}: {said}", RuntimeWarning, stacklevel=2)
                    if failed["step"] is not None:
                        bar.update()
                    continue
                optimizer.fail(reason)
                warnings.warn(
                    f"{optimizer.name}: evaluation {optimizer.fault['step']} failed ({optimizer.fault['reason']}); "
                    f"the run stopped there, its {optimizer.evaluations} evaluations before it kept",
                    RuntimeWarning,
                    stacklevel=2,
                )
                break
            bar.update()
            value = optimizer.sign * float(torch.as_tensor(y).reshape(-1)[0])  # told: one number
            shown = value if shown is None else max(shown, value)
            bar.set_postfix(best=f"{optimizer.sign * shown:.6g}", refresh=False)
    return optimizer
