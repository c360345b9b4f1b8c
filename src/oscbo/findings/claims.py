"""The claims' framework: a claim is a sentence of the paper, a test made of conditions, and the
word its verdict reads (the claims themselves: :mod:`oscbo.findings.catalogue`; their evaluation
on the seed resamples: :mod:`oscbo.findings.evaluate`).

A claim's check reads :class:`Data` (one reading's samples per experiment, :mod:`oscbo.findings.sampling`)
and returns an :class:`Outcome`: the :class:`Condition` s its test is made of, each a statistic
per sample compared with a threshold (a named constant of :mod:`oscbo.findings.thresholds`, a number
the paper gives, or another statistic). The claim holds in a sample when every condition does, and
says nothing in a sample where a condition's statistic is undefined (a share of no task, the log of
a violation that is 0): no 0/0 decides anything.

A verdict's word follows the resamples, never the study as it ran alone:

===================  ===============================================================================
``held``             at least :data:`~oscbo.findings.thresholds.DECIDED_SHARE` of the resamples hold
``not held``         at least that share do not
``undecided``        neither (the share that holds is shown, and the outcome as run is a detail)
``premise fails``    the claim explains an effect (a gap, a cost) that the study as it ran does not show:
                     neither held nor not held, the premise and the share of resamples that show
                     it are given
``not evaluable``    the test's statistic is undefined on the study as it ran (the reason is given)
``not evaluated``    a run the test needs did not happen, and its outcome could change the verdict
``not applicable``   the reading's stand-ins did not run in the claim's experiments, or the reading
                     reads another claim's words
===================  ===============================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from oscbo.findings.sampling import Exact, Samples
from oscbo.findings.thresholds import DECIDED_SHARE, MIN_SEEDS, Constant
from oscbo.paper import MAIN
from oscbo.verdicts import HELD, NOT_EVALUABLE, NOT_HELD, PREMISE_FAILS, UNDECIDED

Tables = dict[str, pd.DataFrame]
Value = np.ndarray | Exact


class NotEvaluated(Exception):
    """A run the test needs did not happen; the message says which, and why."""


class MissingTask(NotEvaluated):
    """An experiment lacks a task the test reads; the evaluator bounds what its runs could change."""

    def __init__(self, experiment: str, task: str, why: str = "") -> None:
        super().__init__(f"'{experiment}' has no '{task}' runs{why}")
        self.experiment, self.task = experiment, task


def _defined(x: Any) -> np.ndarray:
    if isinstance(x, Exact):
        return x.den != 0
    if isinstance(x, np.ndarray):
        return ~np.isnan(x.astype(float))
    return np.bool_(not (isinstance(x, float) and np.isnan(x)))


@dataclass(frozen=True)
class Condition:
    """``value op threshold``, per sample: one part of a claim's test.

    Attributes:
        label: what is compared ("OSCBO's place").
        value: the statistic, one per sample (``S``), or exact fractions.
        op: ``<``, ``<=``, ``>``, ``>=`` or ``==``.
        threshold: a :class:`~oscbo.findings.thresholds.Constant`, a number the paper gives, or
            another statistic (per sample).
        unit: the value's unit, for the margin.
        against: what the threshold is when it is a statistic ("OCBO's").
        distance: the value is a distance between two trajectories (never below 0): resampling
            adds its own spread to it, and :meth:`bias` measures how much.
    """

    label: str
    value: Value
    op: str
    threshold: Any
    unit: str = ""
    against: str = ""
    distance: bool = False

    def bias(self, n_boot: int) -> str:
        """The resampling's bias on a distance: its mean over the resamples against its value as run."""
        if not self.distance or n_boot == 0:
            return ""
        values = np.asarray(self.value, dtype=float)
        if np.isnan(values[0]):
            return ""
        mean = float(np.nanmean(values[1 : 1 + n_boot]))
        if abs(mean - values[0]) < 0.0005:
            return ""
        return f"{self.label} {mean:.3f} against {values[0]:.3f} ({mean - values[0]:+.3f})"

    def _threshold(self) -> Any:
        return self.threshold.value if isinstance(self.threshold, Constant) else self.threshold

    def holds(self) -> np.ndarray:
        value, threshold = self.value, self._threshold()
        if not isinstance(value, Exact) and isinstance(threshold, Fraction):
            threshold = float(threshold)
        if isinstance(threshold, Exact) and not isinstance(value, Exact):
            threshold = threshold.float()
        result = {
            "<": value < threshold,
            "<=": value <= threshold,
            ">": value > threshold,
            ">=": value >= threshold,
            "==": value == threshold,
        }[self.op]
        return np.asarray(result, dtype=bool)

    def defined(self) -> np.ndarray:
        """Per sample, whether both sides are numbers (a share of no task, a log of 0 are not)."""
        return _defined(self.value) & _defined(self._threshold())

    def near(self) -> str:
        """On the study as it ran, whether the value lies within one step of a constant threshold
        (the constant's resolution): a verdict decided there says so."""
        if not isinstance(self.threshold, Constant) or not bool(self.defined()[0]):
            return ""
        value, threshold = self.at()
        if abs(value - threshold) > float(self.threshold.step):
            return ""
        return f"{self.label} {_fmt(value)} within one step ({_fmt(float(self.threshold.step))}) of {self.threshold}"

    def at(self, sample: int = 0) -> tuple[float, float]:
        def scalar(x: Any) -> float:
            if isinstance(x, Exact):
                return float(x.at(sample))
            if isinstance(x, np.ndarray):
                return float(x[sample])
            return float(x)

        return scalar(self.value), scalar(self._threshold())

    def describe(self) -> str:
        value, threshold = self.at()
        name = self.threshold.name if isinstance(self.threshold, Constant) else (self.against or _fmt(threshold))
        shown = f" ({_fmt(threshold)})" if isinstance(self.threshold, Constant) or self.against else ""
        return f"{self.label} {_fmt(value)} {self.op} {name}{shown}"

    def margin(self) -> str:
        """Signed distance to the threshold, positive on the side that holds."""
        value, threshold = self.at()
        distance = value - threshold if self.op in (">", ">=") else threshold - value
        if self.op == "==":
            distance = -abs(value - threshold)
        return f"{self.label}: {distance:+.3g} {self.unit}".rstrip()

    def flip(self) -> str:
        """The value of the project's constant at which this condition would change, if it is one."""
        if not isinstance(self.threshold, Constant):
            return ""
        value, _ = self.at()
        name = self.threshold.name
        held = bool(self.holds()[0])
        side = {"<": (">", "<="), "<=": (">=", "<"), ">": ("<", ">="), ">=": ("<=", ">")}.get(self.op)
        if side is None:
            return ""
        keep, lose = side
        return f"{name} {keep if held else lose} {_fmt(value)} keeps it {'held' if held else 'not held'}"


@dataclass
class Outcome:
    """A claim's test on every sample: its conditions, and the numbers of the study as it ran.

    ``undefined``: why a statistic is undefined, when it is (shown with a ``not evaluable`` verdict).
    ``direction``: which way the study as it ran went and how far, in the paper's terms (who is
    ahead and by how much), whatever the verdict. ``basis``: what the verdict rests on beside the
    data: each vague word's reading with the counts it asks for and the study's. ``design``: the
    subject's statistic is fixed by its design (it could not have been otherwise), said why.
    ``premise``: per sample, whether the effect the claim explains is there (None: no premise), and
    ``premise_text`` the effect as run.
    """

    conditions: list[Condition]
    numbers: str
    undefined: str = ""
    direction: str = ""
    basis: list[str] = field(default_factory=list)
    design: str = ""
    premise: np.ndarray | None = None
    premise_text: str = ""

    def held(self) -> np.ndarray:
        return np.all([condition.holds() for condition in self.conditions], axis=0)

    def defined(self) -> np.ndarray:
        return np.all([np.broadcast_to(c.defined(), c.holds().shape) for c in self.conditions], axis=0)


@dataclass(frozen=True)
class Claim:
    """One sentence of the paper and its test.

    Attributes:
        id: a stable name; plain: the claim in a few plain words (the report's first table).
        group: claims resting on one comparison share a group (counted once).
        source: where the paper says it; paper: its words; test: the test, as a sentence.
        check: ``(Data, **interpretation options) -> Outcome``; raises :class:`NotEvaluated`.
        experiments: the experiments it reads (an experiment name, or a prefix ending in ``*``).
        bearing: the paired comparisons that bear on it: ``(experiment, metric, subject, others)``.
        interpretations: another reading of the paper's words: name -> (description, check options).
        subject: the claim is a property of OSCBO that another method may share: the check takes
            ``subject=`` (a method) and is run for every other method of the claim's experiment.
        control: the negative control (:data:`~oscbo.paper.NEGATIVE_CONTROL`) must fail this test
            where it ran; if it passes, the test cannot tell, and the claim is not evaluable.
        rests_on: the claims whose evidence this one joins (a conjunction): shown, not counted again.
        words: the paper's vague words it reads (:data:`~oscbo.findings.thresholds.VOCABULARY`).
        likeness: the method the claim says OSCBO is like (matches, tracks): under a reading that
            makes OSCBO's objective that method's by definition, a hold restates the reading.
    """

    id: str
    plain: str
    group: str
    source: str
    paper: str
    test: str
    check: Callable[..., Outcome]
    experiments: tuple[str, ...] = (MAIN,)
    bearing: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()
    interpretations: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    subject: bool = False
    control: bool = False
    rests_on: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    likeness: str = ""


def decide(outcome: Outcome, n_boot: int, seeds: int) -> dict[str, Any]:
    """The verdict's word from the resamples (samples 1..``n_boot`` of ``outcome``), the outcome as
    run (sample 0) and the share that holds; ``not evaluable`` where the study's statistic is undefined."""
    held, defined = outcome.held(), outcome.defined()
    boot = slice(1, 1 + n_boot)
    if outcome.premise is not None and not bool(outcome.premise[0]):
        shown = int(np.sum(outcome.premise[boot]))
        return {
            "verdict": PREMISE_FAILS,
            "as_run": "",
            "share": shown / n_boot if n_boot else np.nan,
            "resamples": n_boot,
            "seeds": seeds,
            "numbers": f"the effect it explains is not there: {outcome.premise_text}. {outcome.numbers}",
        }
    if not bool(defined[0]):
        return {"verdict": NOT_EVALUABLE, "as_run": "", "numbers": f"{outcome.undefined}. {outcome.numbers}"}
    holds, fails = int(np.sum(held[boot] & defined[boot])), int(np.sum(~held[boot] & defined[boot]))
    enough = n_boot > 0 and seeds >= MIN_SEEDS
    verdict = UNDECIDED
    if enough and Fraction(holds, n_boot) >= DECIDED_SHARE:
        verdict = HELD
    elif enough and Fraction(fails, n_boot) >= DECIDED_SHARE:
        verdict = NOT_HELD
    return {
        "verdict": verdict,
        "as_run": HELD if bool(held[0]) else NOT_HELD,
        "share": holds / n_boot if n_boot else np.nan,
        "resamples": n_boot,
        "seeds": seeds,
        "numbers": outcome.numbers,
    }


def short(row: dict[str, Any] | pd.Series) -> str:
    """``held (98 %)``, ``undecided (27 % held)``: a verdict and its share of resamples."""
    if row["verdict"] == UNDECIDED:
        return f"undecided ({row['share']:.0%} held)"
    if row["verdict"] in (HELD, NOT_HELD):
        return f"{row['verdict']} ({row['share']:.0%})"
    if row["verdict"] == PREMISE_FAILS:
        return f"{row['verdict']} (shown in {row['share']:.0%})"
    return row["verdict"]


class Catalogue(list):
    """The claims, in the paper's order: :meth:`claim` registers a check beside the paper's words."""

    def claim(self, id: str, **described: Any) -> Callable[[Callable[..., Outcome]], Callable[..., Outcome]]:
        """Register the decorated check as claim ``id`` (the other fields: :class:`Claim`)."""

        def register(check: Callable[..., Outcome]) -> Callable[..., Outcome]:
            if any(known.id == id for known in self):
                raise ValueError(f"two claims named {id!r}")
            self.append(Claim(id=id, check=check, **described))
            return check

        return register

    def interpretations(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every claim's other readings of its own words: name -> (description, check options)."""
        return {name: value for claim_ in self for name, value in claim_.interpretations.items()}


#: The key of a :class:`Data` cache's facts (:meth:`Data.facts`): no experiment's name.
_FACTS = object()


class Data:
    """What a check reads: one reading's per-seed tables, its samples per experiment."""

    def __init__(
        self,
        tables: Tables,
        reading: str,
        universe: Sequence[str] = (),
        n_boot: int = 0,
        seeds_per_task: int | None = None,
        cache: dict | None = None,
    ) -> None:
        self.tables, self.reading, self.universe = tables, reading, list(universe)
        self.n_boot, self.seeds_per_task = n_boot, seeds_per_task
        self._cache = {} if cache is None else cache
        self._facts = self._cache.setdefault(_FACTS, {})
        self.used: list[Samples] = []

    def experiments(self, pattern: str) -> list[str]:
        if "experiments" not in self._facts:
            self._facts["experiments"] = list(self.tables["final"]["experiment"].unique())  # in order of appearance
        names = self._facts["experiments"]
        if pattern.endswith("*"):
            return [name for name in names if name.startswith(pattern[:-1])]
        return [pattern] if pattern in names else []

    def samples(self, experiment: str, *methods: str) -> Samples:
        """``experiment``'s samples, with every method of ``methods`` run in it.

        Raises:
            NotEvaluated: the experiment or a method is not in the study (with the config's reason).
            MissingTask: the config lists a task of the experiment as not run (the paper runs it).
        """
        missing = ("missing", experiment)
        if missing not in self._facts:
            self._facts[missing] = self._missing(experiment)
        if self._facts[missing] is not None:
            raise self._facts[missing]()  # a new exception each time: a raised one keeps its traceback
        key = (experiment, tuple(self.universe), self.n_boot, self.seeds_per_task)
        if key not in self._cache:
            panel = self._cache.setdefault(("panel", experiment), {})
            self._cache[key] = Samples.build(
                self.tables, experiment, self.reading, self.n_boot, self.universe, self.seeds_per_task, panel
            )
        samples = self._cache[key]
        for method in methods:
            if method not in samples.methods:
                raise NotEvaluated(f"'{method}' has no runs in '{experiment}'" + self._why(experiment, method))
        self.used.append(samples)
        return samples

    def facts(self) -> dict:
        """A cache holding only what this data's checks learnt that the study's experiments, their
        tasks and its not-run list decide, not its values: to start a :class:`Data` on the same
        tables with one more method's runs in places of its tasks (``evaluate``'s placements)."""
        return {_FACTS: self._facts}

    def _missing(self, experiment: str) -> Callable[[], NotEvaluated] | None:
        """Why ``experiment`` has no samples, as the exception's maker: it is not in the study, or
        the config lists one of its tasks as not run (the paper runs it); None when it has them."""
        if experiment not in self.experiments(experiment):
            return partial(NotEvaluated, f"experiment '{experiment}' is not in this study" + self._why(experiment))
        final, not_run, readings = self.tables["final"], self.tables["not_run"], self.tables["readings"]
        ran = set(final.loc[final["experiment"] == experiment, "task"])
        stand_ins = set(readings.loc[readings["kind"] == "task", "stand_in"])  # a reading's matter, not a gap
        for task in not_run.loc[not_run["experiment"] == experiment, "task"].unique():
            if task not in ran and task not in stand_ins:
                return partial(MissingTask, experiment, task, self._why(experiment, task=task))
        return None

    def require_task(self, experiment: str, task: str) -> None:
        if task not in self.samples(experiment).tasks:
            raise MissingTask(experiment, task, self._why(experiment, task=task))

    def _why(self, experiment: str, method: str | None = None, task: str | None = None) -> str:
        not_run = self.tables["not_run"]
        rows = not_run[not_run["experiment"] == experiment]
        if method is not None:
            rows = rows[rows["method"] == method]
        if task is not None:
            rows = rows[rows["task"] == task]
        return f": {rows['reason'].iloc[0].splitlines()[0]}" if len(rows) else ""


def _fmt(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.3g}"
