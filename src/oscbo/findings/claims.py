"""The paper's claims as measurements: each test evaluated on the study as it ran, on 1,000 paired
seed resamples and with each task left out, under every reading (the catalogue of claims, each
beside the paper's words: :mod:`oscbo.findings.catalogue`).

A claim's check reads :class:`Data` (one reading's samples per experiment, :mod:`oscbo.findings.sampling`)
and returns an :class:`Outcome`: the :class:`Condition` s its test is made of, each a statistic
per sample compared with a threshold (a named constant of :mod:`oscbo.findings.thresholds`, a number
the paper gives, or another statistic). The claim holds in a sample when every condition does.
:func:`evaluate` then reports, per (claim, reading):

* ``verdict``: ``held`` / ``not held`` on the study as it ran, ``not evaluated`` (a run the test
  needs did not happen: the reason), or ``not applicable`` (the reading's stand-ins did not run in
  the claim's experiments, or the reading reads another claim's words);
* ``share``: the share of the seed resamples in which the claim holds, and ``decided``: whether at
  least :data:`~oscbo.findings.thresholds.DECIDED_SHARE` of them agree with the verdict (else it is
  undecided at the study's seeds);
* ``margin`` and ``flips``: each condition's distance to its threshold in the test's own units, and
  the value of the project's constant at which the verdict would change;
* ``left_out``: the tasks whose removal alone changes the verdict;
* ``seeds_needed``: for an undecided verdict, the smallest number of seeds per task (of
  :data:`~oscbo.findings.thresholds.SEED_GRID`) at which 90 % of resamples of that size, drawn from
  the study's own seeds, would agree with it: the seeds that would settle it if the seeds run are
  representative.

Every rank comparison is exact (ranks are halves, mean ranks fractions: :class:`~oscbo.findings.sampling.Exact`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings.sampling import RESAMPLES, Exact, Samples
from oscbo.findings.thresholds import DECIDED_SHARE, MIN_SEEDS, SEED_GRID, Constant
from oscbo.paper import MAIN

#: The summary tables the claims read.
TABLES = ["final", "trajectories", "curves", "tests", "not_run", "readings", "tasks", "dual"]
HELD, NOT_HELD, NOT_EVALUATED, NOT_APPLICABLE = "held", "not held", "not evaluated", "not applicable"
VERDICTS = (HELD, NOT_HELD, NOT_EVALUATED, NOT_APPLICABLE)
COLUMNS = [
    "id",
    "plain",
    "group",
    "source",
    "paper",
    "test",
    "reading",
    "words",
    "verdict",
    "decided",
    "share",
    "resamples",
    "seeds",
    "confidence",
    "numbers",
    "margin",
    "flips",
    "left_out",
    "seeds_needed",
    "approximate",
]
TEST_COLUMNS = [
    "id",
    "reading",
    "experiment",
    "task",
    "metric",
    "subject",
    "other",
    "n",
    "mean_diff",
    "p_holm",
    "significant",
]
#: Resamples per size when estimating how many seeds would decide a verdict.
SEED_GRID_RESAMPLES = 200

Tables = dict[str, pd.DataFrame]
Value = np.ndarray | Exact


class NotEvaluated(Exception):
    """A run the test needs did not happen; the message says which, and why."""


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
    """

    label: str
    value: Value
    op: str
    threshold: Any
    unit: str = ""
    against: str = ""

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
    """A claim's test on every sample: its conditions, and the numbers of the study as it ran."""

    conditions: list[Condition]
    numbers: str

    def held(self) -> np.ndarray:
        return np.all([condition.holds() for condition in self.conditions], axis=0)


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


#: The claims, in the paper's order (filled by :func:`claim`, :mod:`oscbo.findings.catalogue`).
CLAIMS: list[Claim] = []


def claim(
    id: str,
    *,
    plain: str,
    group: str,
    source: str,
    paper: str,
    test: str,
    experiments: tuple[str, ...] = (MAIN,),
    bearing: tuple = (),
    interpretations: dict | None = None,
) -> Callable[[Callable[..., Outcome]], Callable[..., Outcome]]:
    """Register the decorated check as a claim, beside the paper's words and its test."""

    def register(check: Callable[..., Outcome]) -> Callable[..., Outcome]:
        if any(known.id == id for known in CLAIMS):
            raise ValueError(f"two claims named {id!r}")
        CLAIMS.append(Claim(id, plain, group, source, paper, test, check, experiments, bearing, interpretations or {}))
        return check

    return register


class Data:
    """What a check reads: one reading's per-seed tables, its samples per experiment."""

    def __init__(
        self,
        tables: Tables,
        reading: str,
        universe: Sequence[str],
        n_boot: int,
        seeds_per_task: int | None,
        cache: dict,
    ) -> None:
        self.tables, self.reading, self.universe = tables, reading, list(universe)
        self.n_boot, self.seeds_per_task, self._cache = n_boot, seeds_per_task, cache
        self.used: list[Samples] = []

    def experiments(self, pattern: str) -> list[str]:
        names = list(self.tables["final"]["experiment"].unique())  # in order of appearance
        if pattern.endswith("*"):
            return [name for name in names if name.startswith(pattern[:-1])]
        return [pattern] if pattern in names else []

    def samples(self, experiment: str, *methods: str) -> Samples:
        """``experiment``'s samples, with every method of ``methods`` run in it.

        Raises:
            NotEvaluated: the experiment or a method is not in the study (with the config's reason).
        """
        if experiment not in self.experiments(experiment):
            raise NotEvaluated(f"experiment '{experiment}' is not in this study" + self._why(experiment))
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

    def require_task(self, experiment: str, task: str) -> None:
        if task not in self.samples(experiment).tasks:
            raise NotEvaluated(f"'{experiment}' has no '{task}' runs" + self._why(experiment, task=task))

    def _why(self, experiment: str, method: str | None = None, task: str | None = None) -> str:
        not_run = self.tables["not_run"]
        rows = not_run[not_run["experiment"] == experiment]
        if method is not None:
            rows = rows[rows["method"] == method]
        if task is not None:
            rows = rows[rows["task"] == task]
        return f": {rows['reason'].iloc[0].splitlines()[0]}" if len(rows) else ""


def interpretations_() -> dict[str, tuple[str, dict[str, Any]]]:
    """Every claim's other readings of its own words: name -> (description, check options)."""
    import oscbo.findings.catalogue  # noqa: F401  (the claims register themselves)

    return {name: value for claim_ in CLAIMS for name, value in claim_.interpretations.items()}


def evaluate(
    tables: Tables, n_boot: int = RESAMPLES, only: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``claims`` table (one row per (claim, reading); :data:`COLUMNS`) and the paired tests that
    bear on each claim (``claim_tests``; :data:`TEST_COLUMNS`), from the summary tables :data:`TABLES`
    (``only``: these claims' rows)."""
    import oscbo.findings.catalogue  # noqa: F401  (the claims register themselves)

    study = readings_.from_table(tables["readings"]) or [readings_.Reading(readings_.DEFAULT)]
    applied = {reading.name: _applied(tables, reading, study) for reading in study}
    interpretations = list(dict.fromkeys(name for claim_ in CLAIMS for name in claim_.interpretations))
    rows, tests = [], []
    caches: dict[str, dict] = {name: {} for name in [*applied, *interpretations]}
    for claim_ in [c for c in CLAIMS if only is None or c.id in only]:
        for reading in study:
            row = _row(claim_, applied[reading.name], reading.name, n_boot, caches[reading.name], {})
            rows.append(row)
            if row["verdict"] in (HELD, NOT_HELD):
                tests += _bearing(claim_, tables, reading)
        for name in interpretations:
            if name in claim_.interpretations:
                description, options = claim_.interpretations[name]
                row = _row(claim_, applied[readings_.DEFAULT], name, n_boot, caches[name], options)
                row["test"] = f"{claim_.test} Under '{name}': {description}."
            else:
                row = {
                    **_identity(claim_),
                    "reading": name,
                    "verdict": NOT_APPLICABLE,
                    "numbers": f"'{name}' reads another claim's words",
                    "decided": False,
                }
            rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    described = {reading.name: reading.description for reading in study}
    described.update({name: description for name, (description, _) in interpretations_().items()})
    table["words"] = [readings_.words(name, described) for name in table["reading"]]
    return table, pd.DataFrame(tests, columns=TEST_COLUMNS)


def _identity(claim_: Claim) -> dict[str, Any]:
    return {
        "id": claim_.id,
        "plain": claim_.plain,
        "group": claim_.group,
        "source": claim_.source,
        "paper": claim_.paper,
        "test": claim_.test,
    }


def _applied(tables: Tables, reading: readings_.Reading, study: list[readings_.Reading]) -> Tables:
    """The per-seed tables as ``reading`` ranks them (stand-ins in place of what they replace)."""
    own = {name: readings_.apply(tables[name], reading, study) for name in ("final", "trajectories", "curves")}
    return {**tables, **own}


def _row(claim_: Claim, tables: Tables, reading: str, n_boot: int, cache: dict, options: dict) -> dict[str, Any]:
    row = {**_identity(claim_), "reading": reading}
    if reading != readings_.DEFAULT and not options and not _stood_in(claim_, tables):
        return {
            **row,
            "verdict": NOT_APPLICABLE,
            "decided": False,
            "numbers": "none of this reading's stand-ins ran in " + ", ".join(f"'{e}'" for e in claim_.experiments),
        }
    universe = _universe(claim_, tables)
    data = Data(tables, reading, universe, n_boot, None, cache)
    try:
        outcome = claim_.check(data, **options)
    except NotEvaluated as missing:
        return {**row, "verdict": NOT_EVALUATED, "decided": False, "numbers": str(missing)}
    held = outcome.held()
    observed = bool(held[0])
    boot = held[1 : 1 + n_boot]
    agree = int(np.sum(boot == observed))
    samples = data.used[0]
    row.update(
        verdict=HELD if observed else NOT_HELD,
        share=float(boot.mean()),
        resamples=n_boot,
        seeds=min(min(len(seeds) for seeds in s.seeds.values()) for s in data.used),
        numbers=outcome.numbers,
        margin="; ".join(condition.margin() for condition in outcome.conditions),
        flips="; ".join(filter(None, (condition.flip() for condition in outcome.conditions))),
        left_out=", ".join(task for task, index in samples.left_out() if bool(held[index]) != observed),
        approximate=", ".join(sorted({metric for s in data.used for metric in s.approximate})),
    )
    row["decided"] = bool(Fraction(agree, n_boot) >= DECIDED_SHARE and row["seeds"] >= MIN_SEEDS)
    if not row["decided"]:
        row["seeds_needed"] = _seeds_needed(claim_, tables, reading, observed, options, cache)
    row["confidence"] = confidence(row)
    return row


def confidence(row: dict[str, Any]) -> str:
    """``"decided: held in 98 % of 1,000 seed resamples"``, or ``"undecided at 2 seeds: ...; N would decide it"``."""
    share = f"held in {row['share']:.0%} of {int(row['resamples']):,} seed resamples"
    if row["decided"]:
        return f"decided: {share}"
    few = f" (fewer than {MIN_SEEDS} per task: too few to resample)" if row["seeds"] < MIN_SEEDS else ""
    return f"undecided at {int(row['seeds'])} seeds{few}: {share}; {row['seeds_needed']} would decide it"


def _universe(claim_: Claim, tables: Tables) -> list[str]:
    final = tables["final"]
    names = [e for pattern in claim_.experiments for e in Data(tables, "", [], 0, None, {}).experiments(pattern)]
    return list(final.loc[final["experiment"].isin(names), "task"].unique())


def _stood_in(claim_: Claim, tables: Tables) -> bool:
    """Whether one of the reading's stand-ins ran in one of the claim's experiments."""
    final = tables["final"]
    stood = final[(final["label"] != final["method"]) | (final["task_run"] != final["task"])]
    names = {e for pattern in claim_.experiments for e in Data(tables, "", [], 0, None, {}).experiments(pattern)}
    return bool(set(stood["experiment"].unique()) & names)


def _seeds_needed(claim_: Claim, tables: Tables, reading: str, observed: bool, options: dict, cache: dict) -> str:
    """The smallest size of :data:`SEED_GRID` at which resamples of that many seeds per task, drawn
    from the study's, agree with the verdict in 90 % of cases."""
    for seeds in SEED_GRID:
        data = Data(tables, reading, [], SEED_GRID_RESAMPLES, seeds, cache)
        held = claim_.check(data, **options).held()[1:]
        if Fraction(int(np.sum(held == observed)), len(held)) >= DECIDED_SHARE:
            return f"{seeds} seeds per task"
    return f"more than {SEED_GRID[-1]} seeds per task (within the seeds' noise)"


def _bearing(claim_: Claim, tables: Tables, reading: readings_.Reading) -> list[dict[str, Any]]:
    """The paired tests of ``tests`` between each comparison's subject and others, the subject first
    (its difference's sign flipped where the table has it second); a reading's stand-in takes the
    place of the method it replaces."""
    found = []
    table = tables["tests"]
    for experiment, metric, subject, others in claim_.bearing:
        label = next((s for s, replaced in reading.methods.items() if replaced == subject), subject)
        for other in others:
            other_label = next((s for s, replaced in reading.methods.items() if replaced == other), other)
            for flip, (a, b) in ((1, (label, other_label)), (-1, (other_label, label))):
                rows = table[
                    (table["experiment"] == experiment)
                    & (table["metric"] == metric)
                    & (table["method_a"] == a)
                    & (table["method_b"] == b)
                ]
                for test in rows.itertuples():
                    found.append(
                        {
                            "id": claim_.id,
                            "reading": reading.name,
                            "experiment": experiment,
                            "task": test.task,
                            "metric": metric,
                            "subject": subject,
                            "other": other,
                            "n": test.n,
                            "mean_diff": flip * test.mean_diff,
                            "p_holm": test.p_holm,
                            "significant": bool(test.significant),
                        }
                    )
    return found


def changes(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The claims whose verdict differs between the readings that apply to them: one row per
    claim (``id``) with the ``verdicts`` of each such reading as ``"reading: verdict"`` strings."""
    applied = verdicts[verdicts["verdict"].isin([HELD, NOT_HELD])]
    rows = []
    for claim_, group in applied.groupby("id", sort=False):
        if group["verdict"].nunique() > 1:
            rows.append({"id": claim_, "verdicts": "; ".join(f"{r.reading}: {r.verdict}" for r in group.itertuples())})
    return pd.DataFrame(rows, columns=["id", "verdicts"])


def _fmt(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.3g}"
