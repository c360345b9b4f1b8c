"""The paragraphs the report opens with, each computed from the summary tables and the verdicts:
``verdict`` (what held), ``size`` (what the study ran, against the paper's protocol), ``readings``
(which claims change with the reading), ``registration`` (when the claims' tests were registered,
:mod:`oscbo.findings.registration`), ``decision`` (how a verdict's word follows its resamples) and
``dual`` (the dual study's reading, :mod:`oscbo.findings.dual`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings import dual, registration
from oscbo.findings.claims import NotEvaluated
from oscbo.findings.sampling import RESAMPLES
from oscbo.findings.thresholds import DECIDED_SHARE
from oscbo.paper import KNOWN_TRUTH, MAIN, N_INIT, ROUNDS, SEEDS, shown_name, task_name
from oscbo.verdicts import HELD, NOT_EVALUABLE, NOT_EVALUATED, NOT_HELD, PREMISE_FAILS, TESTED, UNDECIDED

#: The summary tables the paragraphs read.
TABLES = sorted({*dual.TABLES, "final", "not_run", "failed", "readings", "provenance"})
HEADLINE = "main-strongest"
#: The share of resamples that decides a verdict, as the words write it ("90 %").
DECIDED = f"{float(DECIDED_SHARE) * 100:g} %"


def findings(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame) -> pd.DataFrame:
    """The ``findings`` table (module docstring)."""
    try:
        reading = dual.dual_reading(tables)
    except NotEvaluated as missing:
        reading = f"No reading of the dual study: {missing}."
    rows = [
        ("verdict", verdict(tables, verdicts)),
        ("size", size(tables)),
        ("readings", changes(verdicts)),
        ("dual", reading),
        ("registration", registration.sentence(tables.get("provenance"))),
        ("decision", decision(resampled(verdicts))),
    ]
    return pd.DataFrame(rows, columns=["id", "text"])


def counts(verdicts: pd.DataFrame, reading: str = readings_.DEFAULT) -> dict[str, Any]:
    """The verdicts under ``reading`` counted, each piece of evidence once: ``claims`` (tested and
    counted: a claim that joins others' evidence is named apart, in ``joined``), ``held`` (of them
    ``alike``, ``design`` and ``definition``: holds that could not have failed, counted apart by
    why, the ``apart`` column), ``not_held``, ``undecided``, and the ids of those whose premise
    fails (``premise``), ``not_evaluated`` and ``not_evaluable``."""
    rows = verdicts[verdicts["reading"] == reading]
    counted = rows[rows["counted"].astype(bool)]
    held = counted[counted["verdict"] == HELD]
    apart = held["apart"].fillna("") if "apart" in held else pd.Series("", index=held.index)
    ids = {
        word: rows.loc[rows["verdict"] == word, "id"].tolist() for word in (NOT_EVALUATED, NOT_EVALUABLE, PREMISE_FAILS)
    }
    joined = rows[rows["verdict"].isin(TESTED) & ~rows["counted"].astype(bool)]
    return {
        "claims": len(counted),
        "held": len(held),
        "alike": int((apart == "every method alike").sum()),
        "design": int((apart == "by design").sum()),
        "definition": int((apart == "by the reading's definition").sum()),
        "premise": ids[PREMISE_FAILS],
        "not_held": int((counted["verdict"] == NOT_HELD).sum()),
        "undecided": int((counted["verdict"] == UNDECIDED).sum()),
        "not_evaluated": ids[NOT_EVALUATED],
        "not_evaluable": ids[NOT_EVALUABLE],
        "joined": [f"{r.id} ({r.verdict})" for r in joined.itertuples()],
        "seeds": int(counted["seeds"].min()) if len(counted) else 0,
        "resamples": resampled(verdicts),
    }


def resampled(verdicts: pd.DataFrame) -> int:
    """The seed resamples the verdicts were decided on (their ``resamples`` column; the default,
    :data:`~oscbo.findings.sampling.RESAMPLES`, where no verdict was resampled)."""
    counted = verdicts["resamples"].dropna() if "resamples" in verdicts else ()
    return int(counted.max()) if len(counted) else RESAMPLES


def decision(resamples: int = RESAMPLES) -> str:
    """How a verdict's word follows its ``resamples`` (:mod:`oscbo.findings.sampling`,
    :data:`~oscbo.findings.thresholds.DECIDED_SHARE`), as the report states it."""
    return (
        f"each test is run again on {resamples:,} resamples of the study's seeds (with replacement, one draw per "
        f"task shared by every method), and the verdict is held or not held when at least "
        f"{DECIDED} of them agree, else undecided. The share is how often the test comes out the same on seeds "
        "drawn like these, not the probability that the claim is true; and for a gap measured as a distance (the "
        "tracking and distinctness claims), resampling adds its own spread, so the resampled gaps lie above the "
        "gap as run on average and those claims lean toward not held (the bias is shown beside each)"
    )


def apart(found: dict[str, Any]) -> str:
    """The holds of ``counts`` that could not have failed, by why: ``"2 for every method alike, 1 by
    OSCBO's design"`` ("" where there are none)."""
    parts = [
        f"{found[key]} {words}"
        for key, words in (
            ("alike", "for every method alike"),
            ("design", "by the method's design"),
            ("definition", "by the reading's own definition"),
        )
        if found.get(key)
    ]
    return ", ".join(parts)


def count_sentence(found: dict[str, Any]) -> str:
    """``counts`` in a sentence."""
    alike = f" ({apart(found)}: counted apart, they do not single OSCBO out)" if apart(found) else ""
    text = (
        f"of the {found['claims']} claims of the paper tested here, {found['held']} held{alike} and "
        f"{found['not_held']} did not, decided by the seeds (at least {DECIDED} of {found['resamples']:,} seed "
        f"resamples agree); {found['undecided']} {'is' if found['undecided'] == 1 else 'are'} undecided at "
        f"{found['seeds']} seeds"
    )
    effect = "an effect the study does not show (premise fails)"
    for key, one, many in (
        ("premise", f"explains {effect}", f"explain {effect}"),
        ("not_evaluated", "could not be evaluated", "could not be evaluated"),
        ("not_evaluable", "is not evaluable", "are not evaluable"),
    ):
        if found[key]:
            text += f"; {len(found[key])} {one if len(found[key]) == 1 else many} ({', '.join(found[key])})"
    if found["joined"]:
        text += f"; shown apart as the conjunction of others, not counted again: {', '.join(found['joined'])}"
    return text


def verdict(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame) -> str:
    """What held under the default reading, decided and undecided, the headline claim with its
    confidence, and how much the seeds and rounds can support: a paragraph."""
    default = verdicts[verdicts["reading"] == readings_.DEFAULT].set_index("id")
    parts = [f"Under the default reading ({_default_reading(tables)}), {count_sentence(counts(verdicts))}."]
    if HEADLINE in default.index and default.loc[HEADLINE, "verdict"] in TESTED:
        row = default.loc[HEADLINE]
        says = {HELD: "holds", NOT_HELD: "does not hold", UNDECIDED: "is undecided"}[row["verdict"]]
        parts.append(
            f"The headline claim, that OSCBO is “consistently among the strongest methods”, "
            f"{says} ({row['confidence']}): {row['numbers']}."
        )
    parts.append(changes(verdicts))
    parts.append(_caveat(tables))
    return " ".join(part for part in parts if part)


def _default_reading(tables: dict[str, pd.DataFrame]) -> str:
    stand_ins = sorted({s for r in readings_.from_table(tables["readings"]) for s in [*r.methods, *r.tasks]})
    return "the protocol's defaults" + (f"; {', '.join(stand_ins)} left out" if stand_ins else "")


def _caveat(tables: dict[str, pd.DataFrame]) -> str:
    final = tables["final"]
    main = final[final["experiment"] == MAIN]
    if main.empty:
        return ""
    seeds = int(main.groupby(["task", "method"])["seed"].nunique().min())
    rounds = int(main["bo_rounds"].min())
    if seeds >= SEEDS and rounds >= ROUNDS:
        theory = final[final["experiment"] == KNOWN_TRUTH]
        beside = (
            f"; the theory's on {int(theory.groupby(['task', 'method'])['seed'].nunique().min())} seeds of "
            f"{int(theory['bo_rounds'].min())} BO rounds on the known-truth tasks"
            if len(theory)
            else ""
        )
        return (
            f"The paper's experiments' verdicts rest on {seeds} seeds of {rounds} BO rounds per task and method, the "
            f"paper's protocol{beside}."
        )
    return (
        f"These verdicts rest on {seeds} seed{'s' * (seeds != 1)} of {rounds} BO rounds per task and method "
        f"in '{MAIN}', against the paper's {SEEDS} and {ROUNDS}: too few to confirm or refute "
        "a claim either way."
    )


def changes(verdicts: pd.DataFrame) -> str:
    """A sentence naming the claims whose verdict changes with the reading."""
    names = list(dict.fromkeys(verdicts["reading"]))
    if len(names) == 1:
        return "This study runs no alternative reading."
    changed = changed_claims(verdicts)
    if changed.empty:
        return "No claim's verdict changes with the reading."
    applied = verdicts[verdicts["id"].isin(changed["id"]) & verdicts["verdict"].isin(TESTED)]
    parts = []
    for claim, group in applied.groupby("id", sort=False):
        by_verdict = group.groupby("verdict", sort=False)["reading"].agg(list)
        under = "; ".join(f"{verdict} under " + ", ".join(names) for verdict, names in by_verdict.items())
        parts.append(f"{claim} ({under})")
    decided = applied.groupby("id", sort=False)["decided"].all()
    firm = int(decided.sum())
    return (
        f"The verdict changes with the reading for {len(changed)} claim{'s' * (len(changed) != 1)} "
        f"({firm} of them decided by the seeds under every reading that applies): "
        + "; ".join(parts)
        + ". Every other claim has the same verdict under every reading that applies to it."
    )


def size(tables: dict[str, pd.DataFrame]) -> str:
    """What each experiment ran (tasks, methods, seeds, rounds), and what did not run."""
    final = tables["final"]
    parts = []
    order = sorted(set(final["experiment"]), key=lambda name: (name != MAIN, name))
    for experiment in order:
        runs = final[final["experiment"] == experiment]
        seeds = runs.groupby(["task", "method"])["seed"].nunique()
        span = str(seeds.max()) if seeds.min() == seeds.max() else f"{seeds.min()}-{seeds.max()}"
        tasks, methods = runs["task"].nunique(), runs["method"].nunique()
        parts.append(
            f"{experiment}: {tasks} task{'s' * (tasks != 1)} × {methods} method{'s' * (methods != 1)} × "
            f"{span} seed{'s' * (span != '1')}, {int(runs['bo_rounds'].max())} BO rounds after "
            f"{int(runs['n_init'].max())} initial points"
        )
    text = "; ".join(parts) + f" (the paper: {SEEDS} seeds, {ROUNDS} rounds after {N_INIT})."
    not_run = tables["not_run"]
    if len(not_run):
        left_out = []
        for reason, group in not_run.groupby("reason", sort=False):
            count = int(group["seeds"].sum())
            methods, tasks = map(shown_name, group["method"].unique()), map(task_name, group["task"].unique())
            left_out.append(
                f"{count} run{'s' * (count != 1)} of {', '.join(methods)} on {', '.join(tasks)} in "
                f"{', '.join(sorted(group['experiment'].unique()))} ({reason.splitlines()[0].split('. ')[0]})"
            )
        text += " Not run: " + "; ".join(left_out) + "."
    failed = tables["failed"]
    if len(failed):
        text += (
            f" {len(failed)} run{'s' * (len(failed) != 1)} ended at an objective fault (listed under 'What was run')."
        )
    return text


def changed_claims(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The claims whose verdict differs between the readings that test them: one row per claim
    (``id``) with the ``verdicts`` of each such reading as ``"reading: verdict"`` strings."""
    applied = verdicts[verdicts["verdict"].isin(TESTED)]
    rows = []
    for claim_, group in applied.groupby("id", sort=False):
        if group["verdict"].nunique() > 1:
            rows.append({"id": claim_, "verdicts": "; ".join(f"{r.reading}: {r.verdict}" for r in group.itertuples())})
    return pd.DataFrame(rows, columns=["id", "verdicts"])
