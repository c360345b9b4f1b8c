"""The claims evaluated: each claim's test on the study as it ran, on 1,000 paired seed resamples
and with each task left out, under every reading (the claims: :mod:`oscbo.findings.catalogue`;
claims, conditions and verdicts: :mod:`oscbo.findings.claims`). Per (claim, reading) the row
(:data:`COLUMNS`) holds the verdict and ``as_run``; the ``share`` of resamples that hold; each
condition's ``margin``, the constants' ``flips`` and those ``near`` (within one step); the tasks
whose removal alone changes the outcome (``left_out``); for a property of OSCBO every other
method's verdict (``alike``, ``shared``) and the negative control's (``control``: it must fail,
else the claim is not evaluable); for a missing task or method the bound on what its runs could
change (``missing``, ``absent``: a witness placement, not a proof); ``direction`` (which way, how
far), ``basis`` (the words' readings with their counts, the constants near, the resampling's bias
on a distance) and ``apart`` (a hold that could not have failed: every method alike, by design, or
by the reading's definition, counted apart); ``counted`` (a tested claim that joins no other's
evidence). Every rank comparison is exact (:class:`~oscbo.findings.sampling.Exact`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings import bearing
from oscbo.findings.catalogue import CLAIMS
from oscbo.findings.claims import Claim, Data, MissingTask, NotEvaluated, Tables, decide, short
from oscbo.findings.sampling import RESAMPLES
from oscbo.findings.thresholds import DECIDED_SHARE, MIN_SEEDS
from oscbo.paper import NEGATIVE_CONTROL, OMEGA, OSCBO, REGRET_METRICS
from oscbo.verdicts import (
    HELD,
    NOT_APPLICABLE,
    NOT_EVALUABLE,
    NOT_EVALUATED,
    NOT_HELD,
    PREMISE_FAILS,
    TESTED,
    UNDECIDED,
)

TABLES = ["final", "trajectories", "curves", "tests", "not_run", "readings", "tasks", "dual"]
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
    "as_run",
    "decided",
    "share",
    "resamples",
    "seeds",
    "confidence",
    "numbers",
    "margin",
    "flips",
    "near",
    "left_out",
    "alike",
    "shared",
    "control",
    "missing",
    "absent",
    "approximate",
    "direction",
    "basis",
    "apart",
    "counted",
]
#: Why a hold could not have failed (the ``apart`` column): it is counted apart from the others.
ALIKE, BY_DESIGN, BY_DEFINITION = "every method alike", "by design", "by the reading's definition"
#: A multiplier this close to the MLL-equivalent value makes OSCBO's objective GP-UCB-MLL's (eq. 5).
EQUIVALENT_BAND = 0.1
#: A missing task is bounded by every order of its experiment's methods, up to this many (6 methods).
MAX_ORDERS = 720


def evaluate(
    tables: Tables, n_boot: int = RESAMPLES, only: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``claims`` table and the paired tests bearing on each claim (``claim_tests``), from :data:`TABLES`."""
    study = readings_.from_table(tables["readings"]) or [readings_.Reading(readings_.DEFAULT)]
    applied = {reading.name: _applied(tables, reading, study) for reading in study}
    interpretations = list(dict.fromkeys(name for claim_ in CLAIMS for name in claim_.interpretations))
    rows, tests = [], []
    caches: dict[str, dict] = {name: {} for name in [*applied, *interpretations]}
    defined_by = {reading.name: equivalent(tables, reading) for reading in study}
    for claim_ in [c for c in CLAIMS if only is None or c.id in only]:
        for reading in study:
            row = _row(claim_, applied[reading.name], reading.name, n_boot, caches[reading.name], {})
            _apart(row, claim_, defined_by[reading.name])
            rows.append(row)
            if row["verdict"] in TESTED:
                tests += bearing.tests(claim_, tables, reading)
        for name in interpretations:
            if name in claim_.interpretations:
                description, options = claim_.interpretations[name]
                row = _row(claim_, applied[readings_.DEFAULT], name, n_boot, caches[name], options)
                _apart(row, claim_, "")
                row["test"] = f"{claim_.test} Under '{name}': {description}."
            else:
                row = {
                    **_identity(claim_),
                    "reading": name,
                    "verdict": NOT_APPLICABLE,
                    "numbers": f"'{name}' reads another claim's words",
                }
            rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    table["decided"] = table["verdict"].isin([HELD, NOT_HELD])
    table["counted"] = table["verdict"].isin(TESTED) & table["id"].map(lambda i: not _claim(i).rests_on)
    described = {reading.name: reading.description for reading in study}
    described.update({name: description for name, (description, _) in CLAIMS.interpretations().items()})
    table["words"] = [readings_.words(name, described, study) for name in table["reading"]]
    return table, pd.DataFrame(tests, columns=bearing.COLUMNS)


def equivalent(tables: Tables, reading: readings_.Reading) -> str:
    """Why a lambda_0 reading makes OSCBO GP-UCB-MLL by construction (its multiplier within
    :data:`EQUIVALENT_BAND` of the MLL-equivalent value on every task of the dual study), else ""."""
    dual = tables.get("dual")
    if reading.setting != "lambda0" or reading.value is None or dual is None or dual.empty:
        return ""
    rows = dual[(dual["lambda0"] == reading.value) & (dual["omega"] == OMEGA) & (dual["calibration_power"] == 2)]
    if rows.empty:
        return ""
    low, high = rows["lambda_low"].min(), rows["lambda_high"].max()
    mll = float(rows["mll_equivalent_lambda"].iloc[0])
    value = float(reading.value)
    if not (low * value >= mll * (1 - EQUIVALENT_BAND) and high * value <= mll * (1 + EQUIVALENT_BAND)):
        return ""
    return (
        f"under {reading.shown} OSCBO's multiplier stays within λ₀ × [{low:.3f}, {high:.3f}] on every task of the "
        f"dual study, within {EQUIVALENT_BAND:.0%} of the MLL-equivalent {mll:.3f}: OSCBO's objective is "
        "GP-UCB-MLL's by the reading's own definition"
    )


def _apart(row: dict[str, Any], claim_: Claim, defined_by: str) -> None:
    """Mark a hold that could not have failed (``apart``) and say why in its ``basis``."""
    basis = [part for part in str(row.get("basis") or "").split("; ") if part]
    apart = ""
    if row.get("verdict") == HELD:
        if row.get("shared") is True:
            apart = ALIKE
            basis.append("every other method holds the same test: it does not single OSCBO out")
        elif row.get("design"):
            apart = BY_DESIGN
            basis.append(f"holds by design: {row['design']}")
        elif claim_.likeness and defined_by:
            apart = BY_DEFINITION
            basis.append(f"restates the reading: {defined_by}")
    row.pop("design", None)
    row["apart"] = apart
    row["basis"] = "; ".join(basis)


def _claim(id: str) -> Claim:
    return next(claim_ for claim_ in CLAIMS if claim_.id == id)


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
            "numbers": "none of this reading's stand-ins ran in " + ", ".join(f"'{e}'" for e in claim_.experiments),
        }
    data = Data(tables, reading, _universe(claim_, tables), n_boot, None, cache)
    try:
        outcome = claim_.check(data, **options)
    except MissingTask as missing:
        return {**row, **_bounded(claim_, tables, reading, n_boot, options, missing)}
    except NotEvaluated as missing:
        return {**row, "verdict": NOT_EVALUATED, "numbers": str(missing)}
    seeds = min(min(len(seeds) for seeds in s.seeds.values()) for s in data.used)
    row.update(decide(outcome, n_boot, seeds))
    row["direction"] = outcome.direction
    if row["verdict"] == PREMISE_FAILS:
        row["direction"] = f"{outcome.premise_text}; {outcome.direction}".strip("; ")
    near = [condition.near() for condition in outcome.conditions]
    steps = list(dict.fromkeys(str(c.threshold) for c, n in zip(outcome.conditions, near) if n))
    shown = [b for b in (c.bias(n_boot) for c in outcome.conditions) if b]
    row["basis"] = "; ".join(
        [
            *outcome.basis,
            *([f"within one step of {', '.join(steps)}: a step of the constant may flip it"] if steps else []),
            *([f"resampling's upward bias on a distance (resampled mean, as run): {', '.join(shown)}"] * bool(shown)),
        ]
        if row["verdict"] in TESTED
        else []
    )
    row["design"] = outcome.design
    if row["verdict"] in (NOT_EVALUABLE, PREMISE_FAILS):
        return row
    observed = row["as_run"] == HELD
    held, samples = outcome.held(), data.used[0]
    row.update(
        margin="; ".join(condition.margin() for condition in outcome.conditions),
        flips="; ".join(filter(None, (condition.flip() for condition in outcome.conditions))),
        near="; ".join(filter(None, near)),
        left_out=", ".join(task for task, index in samples.left_out() if bool(held[index]) != observed),
        approximate=", ".join(sorted({metric for s in data.used for metric in s.approximate})),
    )
    if claim_.subject:
        row.update(_alike(claim_, tables, reading, n_boot, cache, options, row["verdict"]))
        if row.get("control_as_run") == HELD:
            row["numbers"] = (
                f"the negative control ({NEGATIVE_CONTROL}) passes this test as run, so the test cannot tell "
                f"the property apart. {row['numbers']}"
            )
            row["verdict"] = NOT_EVALUABLE
            return row
    row["absent"] = _absent(claim_, tables, reading, options, row["as_run"])
    row["confidence"] = confidence(row)
    return row


def _alike(
    claim_: Claim, tables: Tables, reading: str, n_boot: int, cache: dict, options: dict, own: str
) -> dict[str, Any]:
    """Every other method's verdict on the claim's test (``alike``, ``shared``), the control's apart."""
    experiment = Data(tables, reading).experiments(claim_.experiments[0])
    final = tables["final"]
    methods = list(final.loc[final["experiment"].isin(experiment[:1]), "method"].unique())
    found, control, control_as_run = [], "", ""
    for method in [m for m in methods if m != OSCBO]:
        data = Data(tables, reading, _universe(claim_, tables), n_boot, None, cache)
        try:
            outcome = claim_.check(data, subject=method, **options)
        except NotEvaluated:
            continue
        seeds = min(min(len(seeds) for seeds in s.seeds.values()) for s in data.used)
        decided = decide(outcome, n_boot, seeds)
        if method == NEGATIVE_CONTROL:
            if claim_.control:
                control, control_as_run = f"{method}: {short(decided)}", decided.get("as_run", "")
        else:
            found.append((method, decided))
    shared = bool(found) and own == HELD and all(d["verdict"] == HELD for _, d in found)
    return {
        "alike": "; ".join(f"{method}: {short(d)}" for method, d in found),
        "shared": shared,
        "control": control,
        "control_as_run": control_as_run,
    }


def _bounded(
    claim_: Claim, tables: Tables, reading: str, n_boot: int, options: dict, missing: MissingTask
) -> dict[str, Any]:
    """A test whose experiment lacks a task, run with that task's methods in every order: decided
    when no order changes the outcome as run (its share the range over the orders)."""
    final = tables["final"]
    rows = final[final["experiment"] == missing.experiment]
    methods = list(rows["method"].unique())
    orders = list(itertools.islice(itertools.permutations(methods), MAX_ORDERS + 1))
    if len(orders) > MAX_ORDERS or rows.empty:
        return {"verdict": NOT_EVALUATED, "numbers": f"{missing}: too many orders of its methods to bound it"}
    seeds = sorted(set(rows["seed"]))
    template = rows.iloc[0]
    outcomes, shares, numbers = set(), [], ""
    for order in orders:
        filled = pd.DataFrame(
            [
                {
                    "experiment": missing.experiment,
                    "task": missing.task,
                    "task_run": missing.task,
                    "method": method,
                    "label": method,
                    "seed": seed,
                    "simple_regret": float(place),
                    "cumulative_regret": float(place),
                    "bo_rounds": template["bo_rounds"],
                    "n_init": template["n_init"],
                }
                for place, method in enumerate(order, start=1)
                for seed in seeds
            ]
        )
        with_task = {**tables, "final": pd.concat([final, filled], ignore_index=True)}
        data = Data(with_task, reading, _universe(claim_, with_task), n_boot, None, {})
        try:
            found = decide(claim_.check(data, **options), n_boot, len(seeds))
        except MissingTask as another:
            return {"verdict": NOT_EVALUATED, "numbers": f"{missing}, and {another}: too many runs missing to bound"}
        if found["verdict"] == NOT_EVALUABLE:
            return {"verdict": NOT_EVALUABLE, "numbers": found["numbers"]}
        outcomes.add(found["as_run"] or found["verdict"])
        shares.append(found.get("share", np.nan))
        numbers = numbers or found["numbers"]
        if len(outcomes) > 1:
            return {
                "verdict": NOT_EVALUATED,
                "missing": f"{missing}: some orders of its {len(methods)} methods there make the claim hold and "
                "others not",
                "numbers": f"{missing}, and its runs decide the claim: some orders of the methods there make it "
                "hold, others not",
            }
    low, high = min(shares), max(shares)
    (as_run,) = outcomes
    if as_run == PREMISE_FAILS:
        return {
            "verdict": PREMISE_FAILS,
            "share": high,
            "resamples": n_boot,
            "seeds": len(seeds),
            "missing": f"{missing}: in each of the {len(orders):,} orders of its {len(methods)} methods there, the "
            "effect the claim explains is not there",
            "numbers": f"{missing}; in every order of its methods there, {numbers}",
        }
    verdict = HELD if low >= DECIDED_SHARE else NOT_HELD if 1 - high >= DECIDED_SHARE else UNDECIDED
    return {
        "verdict": verdict,
        "as_run": as_run,
        "share": low if as_run == HELD else high,
        "resamples": n_boot,
        "seeds": len(seeds),
        "missing": f"{missing}: decided whatever they would show: with its {len(methods)} methods in each of "
        f"the {len(orders):,} orders there, the claim is {as_run} as run and holds in {low:.0%} to {high:.0%} of "
        "the resamples",
        "numbers": f"{missing}; every order of its methods there gives the same outcome. With them in the order "
        f"{', '.join(orders[0])}: {numbers}",
        "confidence": f"bounded over the missing task: held in {low:.0%} to {high:.0%} of {n_boot:,} seed resamples",
    }


def _absent(claim_: Claim, tables: Tables, reading: str, options: dict, as_run: str) -> str:
    """Whether a method listed as not run in the claim's experiment could flip the outcome as run."""
    final, not_run = tables["final"], tables["not_run"]
    experiments = [e for pattern in claim_.experiments for e in Data(tables, reading).experiments(pattern)]
    parts = []
    for experiment in experiments:
        rows = final[final["experiment"] == experiment]
        listed = not_run.loc[not_run["experiment"] == experiment, "method"].unique()
        for method in [m for m in listed if m not in set(rows["method"])]:
            parts.append(
                f"{method} in '{experiment}': " + _placements(claim_, tables, reading, options, as_run, rows, method)
            )
    return "; ".join(parts)


def _placements(
    claim_: Claim, tables: Tables, reading: str, options: dict, as_run: str, rows: pd.DataFrame, method: str
) -> str:
    """The outcome as run with ``method`` placed first, last, or beside each method, until one flips it."""
    means = rows.groupby(["task", "method"])[list(REGRET_METRICS)].mean()
    present = list(rows["method"].unique())
    scenarios = [("first", None, -1), ("last", None, 1)]
    scenarios += [(f"just ahead of {m}", m, -1) for m in present] + [(f"just behind {m}", m, 1) for m in present]
    template = rows.iloc[0]
    per_task = {
        task: {
            metric: (group[metric].min(), group[metric].max(), group[metric].droplevel("task").to_dict())
            for metric in REGRET_METRICS
        }
        for task, group in means.groupby(level="task")
    }
    seeds = {task: sorted(set(rows.loc[rows["task"] == task, "seed"])) for task in per_task}
    universe = _universe(claim_, tables)  # the placed runs add no task and no experiment
    facts: dict = {}  # what the placed runs cannot change (Data.facts), learnt once for every scenario
    for name, anchor, side in scenarios:
        added = []
        for task, regrets in per_task.items():
            values = {}
            for metric, (low, high, by_method) in regrets.items():
                if anchor is None:
                    spread = float(high - low) or 1.0
                    values[metric] = float(low - spread) if side < 0 else float(high + spread)
                elif anchor in by_method:
                    values[metric] = float(by_method[anchor]) * (1 + side * 1e-9) + side * 1e-300
            if len(values) < 2:
                continue
            added += [
                {
                    "experiment": template["experiment"],
                    "task": task,
                    "task_run": task,
                    "method": method,
                    "label": method,
                    "seed": seed,
                    "bo_rounds": template["bo_rounds"],
                    "n_init": template["n_init"],
                    **values,
                }
                for seed in seeds[task]
            ]
        with_method = {**tables, "final": pd.concat([tables["final"], pd.DataFrame(added)], ignore_index=True)}
        data = Data(with_method, reading, universe, 0, None, dict(facts))
        try:
            outcome = claim_.check(data, **options)
        except NotEvaluated:
            continue
        finally:
            facts = data.facts()
        if outcome.defined()[0] and (HELD if bool(outcome.held()[0]) else NOT_HELD) != as_run:
            return f"could flip it: placed {name} on every task, the outcome is {'not ' * (as_run == HELD)}held"
    return (
        f"none of {len(scenarios)} placements tried flips it (first, last, or just ahead of or behind each "
        "method on every task); not a proof for every placement"
    )


def confidence(row: dict[str, Any]) -> str:
    """``"held in 98 % of 1,000 seed resamples"``, with, for an undecided verdict, the outcome as run."""
    share = f"held in {row['share']:.0%} of {int(row['resamples']):,} seed resamples"
    if row["verdict"] != UNDECIDED:
        return f"{row['verdict']}: {share}"
    few = f" (fewer than {MIN_SEEDS} per task: too few to resample)" if row["seeds"] < MIN_SEEDS else ""
    as_run = "holds" if row["as_run"] == HELD else "does not"
    return f"undecided at {int(row['seeds'])} seeds{few}: {share}; as run it {as_run}"


def _universe(claim_: Claim, tables: Tables) -> list[str]:
    final = tables["final"]
    names = [e for pattern in claim_.experiments for e in Data(tables, "").experiments(pattern)]
    return list(final.loc[final["experiment"].isin(names), "task"].unique())


def _stood_in(claim_: Claim, tables: Tables) -> bool:
    """Whether one of the reading's stand-ins ran in one of the claim's experiments."""
    final = tables["final"]
    stood = final[(final["label"] != final["method"]) | (final["task_run"] != final["task"])]
    names = {e for pattern in claim_.experiments for e in Data(tables, "").experiments(pattern)}
    return bool(set(stood["experiment"].unique()) & names)
