"""The answer to "does the paper replicate?" in one sentence and one table, from the verdicts.

The table has one row per claim, in plain words, with its verdict and how sure it is under the
protocol's defaults and under the reading of lambda_0 (the multiplier the paper does not state),
and the other readings under which the verdict changes. The report opens with both; the README's
"Does the paper replicate?" is :func:`markdown` of the published reference (``oscbo answer``),
and a test keeps the two equal.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings.claims import TESTED, short
from oscbo.findings.paragraphs import counts
from oscbo.findings.sampling import RESAMPLES
from oscbo.paper import SEEDS

COLUMNS = ["id", "plain", "default", "lambda0", "elsewhere"]


def lambda0_reading(verdicts: pd.DataFrame) -> str | None:
    """The reading of lambda_0 alone (no other stand-in), if the study runs one."""
    return readings_.lambda0(verdicts["reading"])


def _includes(name: str, part: str) -> bool:
    return part in name.split(readings_.JOIN)


def _cell(row: pd.Series) -> str:
    """:func:`short`, and whether every other method has the property too."""
    return short(row) + (", every method alike" if row.get("shared") is True else "")


def table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: ``plain`` words, the ``default`` and ``lambda0`` verdicts (:func:`short`),
    and ``elsewhere``: the other readings that change the verdict (one that combines lambda_0's
    with another choice: where that choice changes lambda_0's verdict), in plain words, each with
    its verdict."""
    other = lambda0_reading(verdicts)
    rows = []
    for claim_id, group in verdicts.groupby("id", sort=False):
        by = group.set_index("reading")
        default = by.loc[readings_.DEFAULT]
        # a reading that adds a choice to lambda_0's is compared with lambda_0's alone: it is
        # listed where that other choice (e.g. Material's direction) changes the verdict
        changed = [
            name
            for name, row in by.iterrows()
            if name not in (readings_.DEFAULT, other)
            and row["verdict"] in TESTED
            and row["verdict"] != by.loc[other if other and _includes(name, other) else readings_.DEFAULT, "verdict"]
        ]
        rows.append(
            {
                "id": claim_id,
                "plain": default["plain"],
                "default": _cell(default),
                "lambda0": _cell(by.loc[other]) if other else "",
                "elsewhere": "; ".join(f"{by.loc[name, 'words']}: {short(by.loc[name])}" for name in changed),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def sentence(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> str:
    """The answer in one sentence: partly or not, the counts (each piece of evidence once, the
    claims not tested named apart), and what lambda_0 changes."""
    default = counts(verdicts)
    other = lambda0_reading(verdicts)
    if not default["claims"]:
        return "No claim of the paper could be tested on this study."
    verdict = "Yes" if default["held"] == default["claims"] else "No" if default["held"] == 0 else "Partly"
    alike = f" ({default['alike']} of them for every method alike)" if default["alike"] else ""
    text = (
        f"{verdict}. Under the protocol's defaults, of the {default['claims']} claims of the paper tested, "
        f"{default['held']} hold{alike} and {default['not_held']} do not, decided by the seeds; "
        f"{default['undecided']} {'is' if default['undecided'] == 1 else 'are'} undecided"
    )
    untested = len(default["not_evaluated"]) + len(default["not_evaluable"])
    if untested:
        text += f"; {untested} more could not be tested (listed below the table)"
    if other:
        flipped = sum(row["verdict"] != by_default for row, by_default in _pairs(verdicts, other))
        shifted = counts(verdicts, other)
        value = other.removeprefix(readings_.LAMBDA0_PREFIX)
        text += (
            f". λ₀, OSCBO's initial multiplier, which the paper does not state, changes {flipped} verdict"
            f"{'s' * (flipped != 1)}: at λ₀ = {value}, where OSCBO's objective is the marginal likelihood's, "
            f"{shifted['held']} hold and {shifted['not_held']} do not, decided, and {shifted['undecided']} "
            f"{'is' if shifted['undecided'] == 1 else 'are'} undecided (the other claims' experiments do not "
            "run it)"
        )
    return text + "."


def _pairs(verdicts: pd.DataFrame, other: str) -> list[tuple[pd.Series, str]]:
    by = verdicts.set_index(["id", "reading"])
    found = []
    for claim_id in dict.fromkeys(verdicts["id"]):
        row, default = by.loc[(claim_id, other)], by.loc[(claim_id, readings_.DEFAULT)]
        if row["verdict"] in TESTED and default["verdict"] in TESTED:
            found.append((row, default["verdict"]))
    return found


def demonstration(tables: dict[str, pd.DataFrame]) -> str:
    """For a study smaller than the paper's, what it is: a demonstration, not the answer."""
    final = tables["final"]
    if final.empty:
        return ""
    # the seeds the study ran: a cell with fewer (a method added at one seed) does not make it smaller
    seeds = int(final.groupby(["experiment", "task", "method"])["seed"].nunique().max())
    if seeds >= SEEDS:
        return ""
    return (
        f"A demonstration at {seeds} seed{'s' * (seeds != 1)} (the paper's protocol: {SEEDS}): its verdicts are "
        "undecided by design."
    )


def markdown(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame], report: str) -> str:
    """The README's answer: the sentence, the table and where the rest is (``report``: a link)."""
    found = table(verdicts)
    other = lambda0_reading(verdicts)
    header = ["the paper's claim", "default (λ₀ = 1)"] + (
        [f"λ₀ = {other.removeprefix(readings_.LAMBDA0_PREFIX)}"] if other else []
    )
    lines = [sentence(verdicts, tables), "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in found.itertuples():
        cells = [row.plain, row.default] + ([row.lambda0] if other else [])
        lines.append("| " + " | ".join(cells) + " |")
    found = counts(verdicts)
    apart = [f"{i} (not evaluated)" for i in found["not_evaluated"]] + [
        f"{i} (not evaluable)" for i in found["not_evaluable"]
    ]
    lines += [
        "",
        f"A verdict is decided by {RESAMPLES:,} resamples of the study's seeds: *held* or *not held* when at least "
        "90 % of them agree, else *undecided*; the percentage is the share in which the claim holds. "
        + (f"Not tested: {', '.join(apart)}. " if apart else "")
        + (f"Shown apart, as the conjunction of others: {', '.join(found['joined'])}. " if found["joined"] else "")
        + f"Every test, the other methods' verdicts on it and the readings are in the [report]({report}).",
    ]
    return "\n".join(lines)


def rows(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> list[tuple[str, Any]]:
    """The findings' paragraphs this module adds: the answer sentence and, for a small study, what it is."""
    return [("answer", sentence(verdicts, tables)), ("demonstration", demonstration(tables))]
