"""The report's first band, the verdicts: the answer (each claim in plain words with its verdict
and how sure it is) and every claim's test and numbers under every reading."""

from __future__ import annotations

import re

import pandas as pd

from oscbo.analysis import readings
from oscbo.paper import (
    CALIBRATION_PAIR,
    CLAIM_FIGURES,
    FIGURES,
    SEEDS,
    claim_order,
    shown_name,
    task_name,
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
from oscbo.report.sections.inputs import REFERENCE_REPORT, ReportInputs, bearing_on, evidence, shown_in
from oscbo.verdicts import NOT_APPLICABLE, PREMISE_FAILS, TESTED, UNDECIDED


def _tone(verdict: str) -> str:
    return verdict.replace(" ", "-")


def verdict_cell(row: pd.Series) -> dict:
    """A verdict with how sure it is: ``held · 98 %``, ``undecided · 61 % held`` (the share of seed
    study's seeds); the share is that of the seed resamples in which the claim holds."""
    verdict = row["verdict"]
    if verdict == PREMISE_FAILS:
        return cell(f"{verdict} · {row['share']:.0%}", True, _tone(verdict))
    if verdict not in TESTED:
        return cell(verdict, True, _tone(verdict))
    shown = f"{verdict} · {row['share']:.0%}{' held' if verdict == UNDECIDED else ''}"
    return cell(shown, True, _tone(verdict))


_WORD = re.compile(r"(?:^|(?<=[\s;(]))'([^']+)':")


def _folded(shown: str, whole: str) -> dict:
    """A direction in a line (its first clause), the whole of it under every reading folded under it."""
    first, more, _ = shown.partition("; ")
    if not more and whole in ("", shown):
        return cell(shown)
    return cell(first + (" …" if more else ""), more=whole or shown)


def _rests_on(basis: str, apart: str, elsewhere: str) -> dict:
    """The answer's "what it rests on" cell: the paper's words the verdict reads, whether a constant
    sits within a step of flipping it, why a hold could not have failed, and whether another reading
    changes it, in one line; the whole of each folded under it."""
    if elsewhere:
        basis = "; ".join(part for part in (basis, f"another reading changes it: {elsewhere}") if part)
    if not basis:
        return cell("–")
    words = ", ".join(f"'{word}'" for word in dict.fromkeys(_WORD.findall(basis)))
    marks = [words] if words else []
    if "within one step" in basis:
        marks.append("near a constant")
    if "upward bias" in basis:
        marks.append("resampled distance")
    if isinstance(apart, str) and apart:
        marks.append(apart)
    if elsewhere:
        marks.append("another reading")
    return cell(" · ".join(marks) or "its basis", more=basis)


def _registration(sentence: str) -> list[dict]:
    """When the claims' tests were registered, in a line; each amendment since, and whose evidence was
    public before it, folded under it."""
    registered, amended, rest = sentence.partition("; amended ")
    if not amended:
        return [text(sentence)]
    count = rest.split(" since: ")[0]
    amendments, _, runs = rest.rpartition(". ")
    return [
        details(
            f"{registered}; amended {count} since, each with its reason and the verdicts before and after "
            f"(click to open). {runs}",
            [text(f"Amended {amendments}.")],
            id="registration",
        )
    ]


def _seed_sets(inputs: ReportInputs) -> list[dict]:
    """Each claim on the registered seed sets that ran (the confirmatory seeds alone among them), in
    one folded table; nothing while only the seeds the tests were written on ran."""
    sets = inputs.tables["seed_sets"]
    if sets.empty or sets["seeds"].nunique() < 2:
        return []
    names = list(dict.fromkeys(sets["seeds"]))
    ranges = sets.drop_duplicates("seeds").set_index("seeds")
    columns = [f"{name} (seeds {ranges.loc[name, 'first']}-{ranges.loc[name, 'last']})" for name in names]
    rows = []
    for reading, group in sets.groupby("reading", sort=False):
        by = group.set_index(["id", "seeds"])
        for claim_id in sorted(dict.fromkeys(group["id"]), key=claim_order):
            first = by.loc[(claim_id, names[0])]
            label = first["plain"] if reading == readings.DEFAULT else f"{first['plain']} ({reading})"
            rows.append([cell(label, href=f"#claim-{claim_id}"), *(verdict_cell(by.loc[(claim_id, n)]) for n in names)])
    return [
        details(
            "The claims on unseen seeds: each decided on the seeds run after the tests were registered, beside "
            "the seeds they were written on and the two pooled (click to open)",
            [text(inputs.finding("seed_sets")), table(["the paper's claim", *columns], rows, kind="verdicts")],
            id="seed-sets",
        )
    ]


def _verdicts(inputs: ReportInputs) -> pd.DataFrame:
    return inputs.tables["claims"]


def tested_here(inputs: ReportInputs, section_id: str) -> list[dict]:
    """What a figure section tests, above its figures: each claim its figures are evidence for
    (:data:`oscbo.paper.EVIDENCE`), in plain words, with the paper's sentence quoted where it comes
    from and its verdict under the defaults. A claim's cell in the first section that shows its
    evidence is where the answer's link to it lands; it links on to the claim's test and numbers."""
    verdicts = _verdicts(inputs)
    default = verdicts[verdicts["reading"] == readings.DEFAULT].set_index("id")
    rows = []
    for claim_id in bearing_on(section_id):
        if claim_id not in default.index:
            continue
        row = default.loc[claim_id]
        first = evidence(inputs, claim_id)[0][1] == f"#{section_id}"
        rows.append(
            [
                cell(row["plain"], href=f"#claim-{claim_id}", id=f"evidence-{claim_id}" if first else ""),
                cell(f"“{row['paper']}” ({row['source']})"),
                verdict_cell(row),
            ]
        )
    if not rows:
        return []
    columns = ["what these figures test (a claim: its test and numbers)", "the paper's words", readings.DEFAULT]
    return [table(columns, rows, kind="tested")]


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
    if inputs.finding("lambda0"):
        blocks.append(text(inputs.finding("lambda0"), "why"))
    headline = readings.headline(readings.from_table(inputs.tables["readings"]))
    other = headline.name if headline else None
    found = inputs.tables["answer"].set_index("id")
    by = verdicts.set_index(["id", "reading"])
    columns = ["the paper's claim", headline.default_shown if headline else "default"]
    if other:
        columns.append(headline.shown)
    columns += ["which way, how far (as run; click for more)", "what it rests on (click for more)"]
    rows: list = []
    group = None
    for claim_id, row in sorted(found.iterrows(), key=lambda pair: claim_order(pair[0])):
        shown_in = evidence(inputs, claim_id)
        figure_ = FIGURES[CLAIM_FIGURES[claim_id]] if claim_id in CLAIM_FIGURES else "other claims"
        if figure_ != group:
            rows.append(cell(figure_, href=shown_in[0][1] if shown_in else ""))
            group = figure_
        default = by.loc[(claim_id, readings.DEFAULT)]
        verdict = verdict_cell(default)
        registered = row.get("registered")
        if isinstance(registered, str) and registered:  # the verdict under the tests as first registered
            verdict["text"] += f"\n(registered test: {registered})"
        # to the claim in the section that shows its evidence (its text there, above the figures)
        cells = [cell(row["plain"], href=f"#evidence-{claim_id}" if shown_in else f"#claim-{claim_id}"), verdict]
        if other:
            cells.append(verdict_cell(by.loc[(claim_id, other)]))
        direction = default["direction"] if isinstance(default["direction"], str) and default["direction"] else "–"
        cells += [
            _folded(direction, row.get("direction") or ""),
            _rests_on(row.get("basis") or "", default["apart"], row["elsewhere"] or ""),
        ]
        rows.append(cells)
    blocks.append(
        table(
            columns,
            rows,
            f"How sure: {inputs.finding('decision')}; the percentage is the share in which the claim "
            "holds (for premise fails, its premise); '(registered test: …)': an amendment moved the verdict, and "
            "this was the verdict under the tests as first registered, on the reference's tables. "
            "Claims are grouped by the paper's figure whose evidence they test; a figure's name links to its "
            "section, a claim to the figures that are its evidence, headed by the claim and the paper's words (from "
            "there, to its test, numbers and the other methods' verdicts on it).",
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
                            f"{task_name(r.task)}: {shown_name(r.subject)} − {shown_name(r.other)} "
                            f"{r.metric.replace('_', ' ')} {number(r.mean_diff)} "
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
        "Each claim of the paper's section 7, its theory and its figure captions is a test on this study's summary "
        "tables; the verdict is computed, never set by hand, and a reading none of whose stand-ins ran in a claim's "
        "experiment is 'not applicable' there. Mean rank: final regret averaged over seeds per task and method, "
        "methods ranked within each task (ties share the average rank), ranks averaged over tasks; place = 1 + the "
        "number of methods with a strictly lower mean rank (compared exactly, as fractions). How sure: as in the "
        "answer's table, with the outcome as run beside it. A claim about a property of OSCBO is tested for every "
        "other method too: one that every method has, or that holds by the method's design or by the reading's own "
        "definition, is counted apart; random search is the theory claims' negative control; a claim that explains "
        "an effect the data do not show reads 'premise fails'. Margins are in the test's own units; the constants "
        "(oscbo.findings.thresholds) are the project's readings of the paper's words, each with the value at which "
        "the verdict would flip, and each vague word is read one way by every claim that has it (folded below)."
    )
    words = verdicts.drop_duplicates("reading").set_index("reading")["words"].to_dict()
    study_readings = readings.from_table(inputs.tables["readings"])
    words.update({r.name: readings.in_symbols(r.description) for r in study_readings})
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
        details(
            "The verdicts in words: how many held, the headline claim, and which verdicts change with the reading "
            "(click to open)",
            [text(inputs.finding("verdict"))],
            id="verdicts-in-words",
        ),
        *_registration(inputs.finding("registration")),
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
        *_seed_sets(inputs),
        text("Each claim, its test and its numbers (click to open):"),
        *folded,
    ]
    return [section("claims", "Claims, tests and numbers", blocks)]
