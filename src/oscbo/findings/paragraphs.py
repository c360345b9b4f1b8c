"""The paragraphs the report opens with, each computed from the summary tables and the verdicts:
``verdict`` (what held), ``size`` (what the study ran, against the paper's protocol), ``readings``
(which claims change with the reading) and ``dual`` (the dual study's reading, :mod:`oscbo.findings.dual`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings import claims, dual
from oscbo.paper import MAIN, N_INIT, ROUNDS, SEEDS

#: The summary tables the paragraphs read.
TABLES = sorted({*dual.TABLES, "final", "not_run", "failed", "readings"})
HEADLINE = "main-strongest"


def findings(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame) -> pd.DataFrame:
    """The ``findings`` table (module docstring)."""
    try:
        reading = dual.dual_reading(tables)
    except claims.NotEvaluated as missing:
        reading = f"No reading of the dual study: {missing}."
    rows = [
        ("verdict", verdict(tables, verdicts)),
        ("size", size(tables)),
        ("readings", changes(verdicts)),
        ("dual", reading),
    ]
    return pd.DataFrame(rows, columns=["id", "text"])


def counts(verdicts: pd.DataFrame, reading: str = readings_.DEFAULT) -> dict[str, Any]:
    """The verdicts under ``reading`` counted: ``held`` and ``not_held`` (decided by the seeds),
    ``undecided`` (and ``leaning``, the undecided that held as run), ``not_evaluated`` (ids),
    ``claims`` and ``groups`` (comparisons: claims on one comparison count once)."""
    rows = verdicts[verdicts["reading"] == reading]
    evaluated = rows[rows["verdict"].isin([claims.HELD, claims.NOT_HELD])]
    decided = evaluated[evaluated["decided"].astype(bool)]
    undecided = evaluated[~evaluated["decided"].astype(bool)]
    return {
        "claims": len(rows),
        "groups": rows["group"].nunique(),
        "held": int((decided["verdict"] == claims.HELD).sum()),
        "not_held": int((decided["verdict"] == claims.NOT_HELD).sum()),
        "undecided": len(undecided),
        "leaning": int((undecided["verdict"] == claims.HELD).sum()),
        "not_evaluated": rows.loc[rows["verdict"] == claims.NOT_EVALUATED, "id"].tolist(),
        "seeds": int(evaluated["seeds"].min()) if len(evaluated) else 0,
    }


def count_sentence(found: dict[str, Any]) -> str:
    """``counts`` in a sentence."""
    text = (
        f"of the paper's {found['claims']} claims tested here ({found['groups']} comparisons: claims that rest on "
        f"one comparison count once), {found['held']} held and {found['not_held']} did not, decided by the seeds "
        f"(at least 90 % of {claims.RESAMPLES:,} seed resamples agree); {found['undecided']} "
        f"{'is' if found['undecided'] == 1 else 'are'} undecided at {found['seeds']} seeds"
        + (f" ({found['leaning']} of them held as run)" if found["undecided"] else "")
    )
    missing = found["not_evaluated"]
    return text + (f"; {len(missing)} could not be evaluated ({', '.join(missing)})" if missing else "")


def verdict(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame) -> str:
    """What held under the default reading, decided and undecided, the headline claim with its
    confidence, and how much the seeds and rounds can support: a paragraph."""
    default = verdicts[verdicts["reading"] == readings_.DEFAULT].set_index("id")
    parts = [f"Under the default reading ({_default_reading(tables)}), {count_sentence(counts(verdicts))}."]
    if HEADLINE in default.index and default.loc[HEADLINE, "verdict"] in (claims.HELD, claims.NOT_HELD):
        row = default.loc[HEADLINE]
        held = row["verdict"] == claims.HELD
        parts.append(
            f"The headline claim, that OSCBO is “consistently among the strongest methods”, "
            f"{'holds' if held else 'does not hold'} ({row['confidence']}): {row['numbers']}."
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
        return f"Every verdict rests on {seeds} seeds of {rounds} BO rounds per task and method, the paper's protocol."
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
    changed = claims.changes(verdicts)
    if changed.empty:
        return "No claim's verdict changes with the reading."
    applied = verdicts[verdicts["id"].isin(changed["id"]) & verdicts["verdict"].isin([claims.HELD, claims.NOT_HELD])]
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
            left_out.append(
                f"{count} run{'s' * (count != 1)} of {', '.join(group['method'].unique())} on "
                f"{', '.join(group['task'].unique())} in {', '.join(sorted(group['experiment'].unique()))} "
                f"({reason.splitlines()[0].split('. ')[0]})"
            )
        text += " Not run: " + "; ".join(left_out) + "."
    failed = tables["failed"]
    if len(failed):
        text += (
            f" {len(failed)} run{'s' * (len(failed) != 1)} ended at an objective fault (listed under 'What was run')."
        )
    return text
