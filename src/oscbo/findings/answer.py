"""The answer to "does the paper replicate?" in one sentence and one table, from the verdicts.

The table has one row per claim, in plain words, with its verdict and how sure it is under the
protocol's defaults and under the reading of lambda_0 (the multiplier the paper does not state),
which way the data went and how far, what the verdict rests on beside the data, and the other
readings under which the verdict changes. The report opens with both; the README's
"Does the paper replicate?" is :func:`markdown` of the published reference (``oscbo answer``),
and a test keeps the two equal.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings import registration
from oscbo.findings.claims import short
from oscbo.findings.paragraphs import DECIDED, apart, counts
from oscbo.paper import CLAIM_FIGURES, FIGURES, SEEDS, claim_order
from oscbo.settings import shown as shown_setting
from oscbo.verdicts import HELD, TESTED

COLUMNS = ["id", "plain", "default", "headline", "direction", "basis", "elsewhere", "registered"]


def headline(tables: dict[str, pd.DataFrame]) -> readings_.Reading | None:
    """The reading the answer shows beside the defaults (the config's ``headline: true``), if any."""
    return readings_.headline(readings_.from_table(tables["readings"]))


def _includes(name: str, part: str) -> bool:
    return part in name.split(readings_.JOIN)


def _cell(row: pd.Series, registered: str = "") -> str:
    """:func:`short`, why a hold could not have failed (every method alike, by design, by the
    reading's definition), and the verdict under the tests as first registered where an amendment
    changed it (``registered``)."""
    why = row.get("apart")
    text = short(row) + (f", {why}" if isinstance(why, str) and why else "")
    return text + (f" (registered test: {registered})" if registered else "")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def table(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per claim: ``plain`` words, the ``default`` and ``headline`` verdicts (:func:`short`;
    the headline reading's, :func:`headline`), the default's ``direction`` and ``basis`` (with the
    headline's where they differ), and ``elsewhere``: the other readings that change the
    verdict (one that combines the headline's with another choice: where that choice changes the
    headline's verdict), in plain words, each with its verdict."""
    found = headline(tables)
    other = found.name if found else None
    record = registration.Registration.read()
    amended = record.amended() if record else {}
    # the other points of the headline's curve (λ₀'s other values) have their own sentence, :func:`curve`
    on_curve = {name for _, name in readings_.curve(readings_.from_table(tables["readings"]))}
    rows = []
    for claim_id, group in verdicts.groupby("id", sort=False):
        by = group.set_index("reading")
        default = by.loc[readings_.DEFAULT]
        # a reading that adds a choice to the headline's is compared with the headline's alone: it is
        # listed where that other choice (e.g. Material's direction) changes the verdict
        changed = [
            name
            for name, row in by.iterrows()
            if name not in (readings_.DEFAULT, other)
            and name not in on_curve
            and row["verdict"] in TESTED
            and row["verdict"] != by.loc[other if other and _includes(name, other) else readings_.DEFAULT, "verdict"]
        ]
        direction, basis = _text(default.get("direction")), _text(default.get("basis"))
        if other:
            theirs = by.loc[other]
            if _text(theirs.get("direction")) and _text(theirs.get("direction")) != direction:
                direction = f"{direction} ({found.shown}: {_text(theirs.get('direction'))})".strip()
            own = basis.split("; ")
            extra = [part for part in _text(theirs.get("basis")).split("; ") if part and part not in own]
            if extra:
                basis = f"{basis} ({found.shown}: {'; '.join(extra)})".strip()
        rows.append(
            {
                "id": claim_id,
                "plain": default["plain"],
                "default": _cell(default, amended.get(claim_id, "")),
                "headline": _cell(by.loc[other]) if other else "",
                "direction": direction,
                "basis": basis,
                "elsewhere": "; ".join(f"{by.loc[name, 'words']}: {short(by.loc[name])}" for name in changed),
                "registered": amended.get(claim_id, ""),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def sentence(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> str:
    """The answer in one sentence: partly or not, the counts (each piece of evidence once, the
    claims not tested named apart), and what lambda_0 changes."""
    default = counts(verdicts)
    reading = headline(tables)
    if not default["claims"]:
        return "No claim of the paper could be tested on this study."
    decided = default["held"] + default["not_held"]
    verdict = (
        "Undecided"
        if decided == 0
        else "Yes"
        if default["held"] == default["claims"]
        else "No"
        if default["held"] == 0
        else "Partly"
    )
    alike = f" ({apart(default)}: counted apart, they do not single OSCBO out)" if apart(default) else ""
    text = (
        f"{verdict}. Under the protocol's defaults, of the {default['claims']} claims of the paper tested, "
        f"{default['held']} hold{alike} and {default['not_held']} do not, decided by the seeds; "
        f"{default['undecided']} {'is' if default['undecided'] == 1 else 'are'} undecided"
    )
    if default["premise"]:
        premise = len(default["premise"])
        text += f"; {premise} explain{'s' * (premise == 1)} an effect the study does not show (premise fails)"
    untested = len(default["not_evaluated"]) + len(default["not_evaluable"])
    if untested:
        text += f"; {untested} more could not be tested (listed below the table)"
    if reading:
        flipped = sum(row["verdict"] != by_default for row, by_default in _pairs(verdicts, reading.name))
        shifted = counts(verdicts, reading.name)
        alike = f" ({apart(shifted)})" if apart(shifted) else ""
        described = readings_.in_symbols(reading.description).split(" (")[0]
        text += (
            f". Read with {reading.shown} instead ({described}), {flipped} verdict"
            f"{'s' * (flipped != 1)} change{'s' * (flipped == 1)}: {shifted['held']} hold{alike} and "
            f"{shifted['not_held']} do not, decided, and {shifted['undecided']} "
            f"{'is' if shifted['undecided'] == 1 else 'are'} undecided (the other claims' experiments do not run it)"
        )
    return text + "."


def curve(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> str:
    """Over which values of the headline's setting (λ₀) each claim it bears on holds, and whether one
    value makes them hold together, in one sentence ("" with fewer than three values on the curve,
    :func:`oscbo.analysis.readings.curve`). A claim λ₀ bears on is tested under a value other than
    the default (its experiment ran the stand-ins); it holds at a value where its verdict is held."""
    points = readings_.curve(readings_.from_table(tables["readings"]))
    if len(points) < 3:
        return ""
    setting = headline(tables).setting
    by = verdicts.set_index(["id", "reading"])["verdict"].to_dict()
    plain = verdicts.drop_duplicates("id").set_index("id")["plain"]
    off_default = [name for _, name in points if name != readings_.DEFAULT]
    claims = sorted(dict.fromkeys(verdicts["id"]), key=claim_order)
    bears = [claim for claim in claims if any(by.get((claim, name)) in TESTED for name in off_default)]
    if not bears:
        return ""
    held = {claim: [value for value, name in points if by.get((claim, name)) == HELD] for claim in bears}
    every = [claim for claim in bears if len(held[claim]) == len(points)]
    never = [claim for claim in bears if not held[claim]]
    some = [claim for claim in bears if 0 < len(held[claim]) < len(points)]
    symbol = shown_setting(setting, 0.0).split(" = ")[0]

    def at(values: list[float]) -> str:
        listed = [f"{value:g}" for value in values]
        return f"{symbol} = " + (", ".join(listed[:-1]) + " and " + listed[-1] if len(listed) > 1 else listed[0])

    together = {value: sum(value in held[claim] for claim in bears) for value, _ in points}
    most = max(together.values())
    best = [value for value, count in together.items() if count == most]
    text = (
        f"Over {symbol} from {points[0][0]:g} to {points[-1][0]:g} ({len(points)} values; the paper states none), "
        f"of the {len(bears)} claims {symbol} bears on, {len(every)} hold at every value, {len(never)} at none"
        f" and {len(some)} at some"
    )
    if some:
        text += ": " + "; ".join(f"{plain[claim]} at {at(held[claim])}" for claim in some)
    if most == len(bears):
        return text + f"; one value makes them all hold: {at(best)}."
    return text + f"; no single value makes them all hold (the most together: {most} of {len(bears)}, at {at(best)})."


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
    found = table(verdicts, tables)
    reading = headline(tables)
    header = [
        "the paper's figure",
        "the paper's claim",
        reading.default_shown if reading else "default",
        *([reading.shown] if reading else []),
        "which way, how far (as run)",
        "what it rests on",
    ]
    lines = [sentence(verdicts, tables), ""]
    over_lambda0 = curve(verdicts, tables)
    if over_lambda0:
        lines += [over_lambda0, ""]
    # the claims on unseen seeds (oscbo.findings.seeds), written with the findings
    paragraphs_ = tables.get("findings")
    unseen = paragraphs_.set_index("id")["text"].get("seed_sets", "") if paragraphs_ is not None else ""
    if unseen:
        lines += [unseen, ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    shown = None
    for row in sorted(found.itertuples(), key=lambda row: claim_order(row.id)):
        figure = FIGURES[CLAIM_FIGURES[row.id]] if row.id in CLAIM_FIGURES else "–"
        cells = [
            figure if figure != shown else "",
            row.plain,
            row.default,
            *([row.headline] if reading else []),
            _cell_text(row.direction),
            _cell_text(row.basis),
        ]
        shown = figure
        lines.append("| " + " | ".join(cells) + " |")
    counted = counts(verdicts)
    untested = (
        [f"{i} (premise fails)" for i in counted["premise"]]
        + [f"{i} (not evaluated)" for i in counted["not_evaluated"]]
        + [f"{i} (not evaluable)" for i in counted["not_evaluable"]]
    )
    lines += [
        "",
        f"A verdict is decided by {counted['resamples']:,} resamples of the study's seeds: *held* or *not held* "
        f"when at least {DECIDED} of them agree, else *undecided*; the percentage is the share in which the claim "
        "holds (for *premise fails*: the share that shows the effect the claim explains), how often the test comes "
        "out the same on seeds drawn like these, not the probability that the claim is true. "
        + (
            "Where an amendment moved a verdict, '(registered test: …)' gives the verdict under the tests as first "
            "registered, on the reference's tables. "
            if (found["registered"] != "").any()
            else ""
        )
        + (f"Not decided either way: {', '.join(untested)}. " if untested else "")
        + (f"Shown apart, as the conjunction of others: {', '.join(counted['joined'])}. " if counted["joined"] else "")
        + f"Every test, the other methods' verdicts on it and the readings are in the [report]({report}).",
    ]
    return "\n".join(lines)


def _cell_text(text: str) -> str:
    """A table cell's text in Markdown: its pipes escaped."""
    return (text or "–").replace("|", "\\|")


def rows(verdicts: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> list[tuple[str, Any]]:
    """The findings' paragraphs this module adds: the answer sentence and, for a small study, what it is."""
    return [
        ("answer", sentence(verdicts, tables)),
        ("lambda0", curve(verdicts, tables)),
        ("demonstration", demonstration(tables)),
    ]
