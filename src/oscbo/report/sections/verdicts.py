"""The report's first band, the verdicts: the answer (each claim in plain words with its verdict
and how sure it is) and every claim's test and numbers under every reading."""

from __future__ import annotations

import pandas as pd

from oscbo.analysis import readings
from oscbo.paper import (
    CALIBRATION_PAIR,
    CLAIM_FIGURES,
    FIGURES,
    SEEDS,
    claim_order,
)
from oscbo.report.blocks import (
    Section,
    cell,
    details,
    facts,
    link,
    links,
    number,
    section,
    table,
    text,
)
from oscbo.report.outline import DUAL as DUAL_SECTION
from oscbo.report.sections.inputs import REFERENCE_REPORT, ReportInputs, evidence, shown_in
from oscbo.verdicts import NOT_APPLICABLE, PREMISE_FAILS, TESTED, UNDECIDED


def _tone(verdict: str) -> str:
    return verdict.replace(" ", "-")


def verdict_cell(row: pd.Series) -> dict:
    """A verdict with how sure it is: ``held · 98 %``, ``undecided · 61 % held`` (the share of seed
    study's seeds); the share is that of the seed resamples in which the claim holds."""
    verdict = row["verdict"]
    if verdict == PREMISE_FAILS:
        return cell(f"{verdict} · shown in {row['share']:.0%}", True, _tone(verdict))
    if verdict not in TESTED:
        return cell(verdict, True, _tone(verdict))
    shown = f"{verdict} · {row['share']:.0%}{' held' if verdict == UNDECIDED else ''}"
    return cell(shown, True, _tone(verdict))


def _verdicts(inputs: ReportInputs) -> pd.DataFrame:
    return inputs.tables["claims"]


def answer(inputs: ReportInputs) -> list[Section]:
    """The first screen: what this study is (a demonstration links to the reference), the answer in
    one sentence, each claim in plain words with its verdict under the defaults and under the
    headline reading (λ₀'s in the shipped configs), what explains it, and the contents."""
    verdicts = _verdicts(inputs)
    blocks = []
    demonstration = inputs.finding("demonstration")
    if demonstration:
        blocks.append(
            link(
                "the reference replication's report",
                inputs.href(REFERENCE_REPORT),
                before=demonstration + " The answer is ",
                after=f" ({SEEDS} seeds, the paper's protocol).",
                kind="demo",
            )
        )
    blocks.append(text(inputs.finding("answer"), "lead"))
    moved = inputs.finding("dual").split(". ")[0]
    if len(inputs.tables["dual"]) and moved:
        blocks.append(
            link(
                "What sets OSCBO's lengthscale",
                f"#{DUAL_SECTION}",
                before=f"Why λ₀ decides: {moved}. So λ₀ sets how OSCBO's objective weighs calibration against "
                "sharpness, and thereby its lengthscale (",
                after=").",
                kind="why",
            )
        )
    headline = readings.headline(readings.from_table(inputs.tables["readings"]))
    other = headline.name if headline else None
    found = inputs.tables["answer"].set_index("id")
    by = verdicts.set_index(["id", "reading"])
    columns = ["the paper's figure", "the paper's claim", headline.default_shown if headline else "default"]
    if other:
        columns.append(headline.shown)
    columns += ["which way, how far (as run)", "what it rests on", "another reading changes it"]
    rows = []
    for claim_id, row in sorted(found.iterrows(), key=lambda pair: claim_order(pair[0])):
        shown_in = evidence(inputs, claim_id)
        figure_ = FIGURES[CLAIM_FIGURES[claim_id]][0] if claim_id in CLAIM_FIGURES else "–"
        cells = [
            cell(figure_, href=shown_in[0][1] if shown_in else ""),
            cell(row["plain"], href=f"#claim-{claim_id}"),
            verdict_cell(by.loc[(claim_id, readings.DEFAULT)]),
        ]
        if other:
            cells.append(verdict_cell(by.loc[(claim_id, other)]))
        cells += [cell(row.get("direction") or "–"), cell(row.get("basis") or "–"), cell(row["elsewhere"] or "–")]
        rows.append(cells)
    blocks.append(
        table(
            columns,
            rows,
            f"How sure: {inputs.finding('decision')}; the percentage is the share in which the claim holds. "
            "Claims are grouped by the paper's figure whose evidence they test; a figure's name links to its "
            "section, a claim to its words, test, numbers and the other methods' verdicts on it (Claims, below).",
            "answer",
        )
    )
    blocks.append({"kind": "toc"})
    return [section("answer", "Does the paper replicate?", blocks)]


def claims(inputs: ReportInputs) -> list[Section]:
    """Every claim's verdict under every reading (one grid), then each claim folded: the paper's
    words, its test, and per reading the numbers behind the verdict and how sure it is."""
    verdicts = _verdicts(inputs)
    names = list(dict.fromkeys(verdicts["reading"]))
    grid = []
    folded = []
    tests = inputs.tables["claim_tests"]
    groups = sorted(verdicts.groupby("id", sort=False), key=lambda pair: claim_order(pair[0]))
    for claim_id, group in groups:
        by = group.set_index("reading")
        first = by.iloc[0]
        grid.append([cell(claim_id), *[verdict_cell(by.loc[name]) for name in names]])
        rows = []
        for name in names:
            row = by.loc[name]
            if name != readings.DEFAULT and row["verdict"] == NOT_APPLICABLE:
                continue
            sure = []
            if row["verdict"] in TESTED:
                sure.append(row["confidence"])
                for column, label in (
                    ("direction", "which way, how far"),
                    ("basis", "what it rests on"),
                    ("flips", "constants"),
                    ("near", "within one step of its constant"),
                    ("left_out", "leaving out alone changes the outcome"),
                    ("missing", "a missing task"),
                    ("absent", "a method the paper runs, not run here"),
                    ("alike", "the same test for the other methods"),
                    ("control", "the negative control"),
                    ("approximate", "resampled from the curves' s.e. (no per-seed values published)"),
                ):
                    if isinstance(row[column], str) and row[column]:
                        sure.append(f"{label}: {row[column]}")
            rows.append(
                [
                    cell(name if name == readings.DEFAULT else f"{name}\n({row['words']})"),
                    verdict_cell(row),
                    cell(row["numbers"]),
                    cell(row["margin"] if isinstance(row["margin"], str) else ""),
                    cell("\n".join(sure)),
                ]
            )
        inner = [
            facts([("the paper", f"“{first['paper']}” ({first['source']})"), ("test", first["test"])]),
            links(
                f"Its test: {claim_id} in src/oscbo/findings/catalogue.py. Its evidence:",
                [(title, f"#{id}") for id, title in shown_in(claim_id)],
            ),
            table(["reading", "verdict", "numbers", "margins", "how sure"], rows, kind="claim"),
        ]
        own = tests[(tests["id"] == claim_id) & (tests["reading"] == readings.DEFAULT)]
        if len(own):
            significant = own[own["significant"].astype(bool)]
            inner.append(
                text(
                    f"Paired tests under the default reading ({len(own)}): "
                    + (
                        "; ".join(
                            f"{r.task}: {r.subject} − {r.other} {r.metric.replace('_', ' ')} {number(r.mean_diff)} "
                            f"(Holm p {number(r.p_holm)})"
                            for r in significant.itertuples()
                        )
                        or "none significant after Holm's correction"
                    )
                    + "."
                )
            )
        default = by.loc[readings.DEFAULT]
        summary_ = f"{first['plain']} — {claim_id}: {verdict_cell(default)['text']}"
        folded.append(details(summary_, inner, id=f"claim-{claim_id}"))
    intro = (
        "Each claim of the paper's section 7, its theory and its figure captions is turned into a test on this "
        "study's summary tables; the verdict is computed, never set by hand, and a reading none of whose stand-ins "
        "ran in a claim's experiment is 'not applicable' there. Mean rank: final regret averaged over seeds per task "
        "and method, methods ranked within each task (ties share the average rank), ranks averaged over tasks; "
        "place = 1 + the number of methods with a strictly lower mean rank (compared exactly, as fractions). How "
        f"sure: {inputs.finding('decision')}, with the outcome as run beside it and an estimate of the seeds per "
        "task that would decide it if the effect these seeds show were the true one. An undefined statistic (a "
        "growth rate of a violation that stays 0) is not "
        "evaluable, never a pass. A claim about a property of OSCBO is tested for every other method too: one that "
        "every method has is counted apart, and the negative control (random search) must fail the theory's "
        "regret test. Margins are in the test's own units; the constants (oscbo.findings.thresholds) are the "
        "project's readings of the paper's words, each with the value at which the verdict would flip, and each "
        "vague word is read one way by every claim that has it (folded below)."
    )
    words = verdicts.drop_duplicates("reading").set_index("reading")["words"].to_dict()
    study_readings = readings.from_table(inputs.tables["readings"])
    words.update({r.name: r.description for r in study_readings})
    # the paper's own open choices (OSCBO's runs, the tasks) in the grid; a baseline's settings and
    # one claim's words in a folded one
    own = {readings.DEFAULT} | {
        r.name for r in study_readings if r.tasks or set(r.methods.values()) & set(CALIBRATION_PAIR)
    }
    grids = []
    for shown in ([n for n in names if n in own], [n for n in names if n not in own]):
        if not shown:
            continue
        columns = [names.index(name) + 1 for name in shown]
        described = "; ".join(f"{name}: {words[name]}" for name in shown)
        grids.append(
            table(
                ["claim", *shown],
                [[row[0], *(row[k] for k in columns)] for row in grid],
                f"Each claim's verdict under each reading (columns). Readings: {described}.",
                "verdicts",
            )
        )
    if len(grids) > 1:
        grids[1] = details("Verdicts under the readings of a baseline's settings or of one claim's words", grids[1:])
    blocks = [
        text(inputs.finding("verdict")),
        text(inputs.finding("registration")),
        text(intro),
        *grids,
        details(
            "The paper's vague words, each read one way by every claim that has it",
            [
                table(
                    ["the paper's word", "read as"],
                    [[cell(row.word), cell(row.reading)] for row in inputs.tables["vocabulary"].itertuples()],
                    "The paper's vague words, each read one way by every claim that has it.",
                    "vocabulary",
                )
            ],
            id="vocabulary",
        ),
        text("Each claim, its test and its numbers (click to open):"),
        *folded,
    ]
    return [section("claims", "Claims, tests and numbers", blocks)]
