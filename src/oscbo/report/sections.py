"""The report's sections, in page order: the answer first, then the figures in the paper's order,
then the tables a reader checks the answer against.

Every section renders what the earlier stages wrote (the summary tables, the protocol table, the
``claims`` and ``findings`` tables, the figures' manifest); nothing is computed here beyond
choosing rows and formatting numbers.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo.analysis import readings, statistics
from oscbo.imports import SOURCE_ROOT
from oscbo.paper import (
    CALIBRATION_PAIR,
    CLAIM_FIGURES,
    DIAGNOSTICS_TASK,
    DUAL,
    FIGURES,
    TRACKING_REFERENCE,
    claim_order,
    experiment_order,
)
from oscbo.report.blocks import (
    Section,
    bullets,
    cell,
    details,
    facts,
    figure,
    heading,
    link,
    links,
    mean_se,
    number,
    pre,
    section,
    span,
    table,
    text,
)
from oscbo.report.outline import DUAL as DUAL_SECTION
from oscbo.report.outline import SECTIONS as OUTLINE

#: The verdicts' words as the claims table writes them (oscbo.findings.claims): those of a tested claim,
#: and the one of a reading that does not apply.
TESTED, UNDECIDED, NOT_APPLICABLE = ("held", "not held", "undecided"), "undecided", "not applicable"

#: The methods whose comparisons the statistics section lists.
SUBJECTS = CALIBRATION_PAIR
#: The published reference replication's report, which a smaller study's report links to.
REFERENCE_REPORT = SOURCE_ROOT.parents[1] / "reference" / "report.html"


def evidence(inputs: ReportInputs, claim: str) -> list[tuple[str, str]]:
    """The report's sections that show the evidence of ``claim`` (the paper's figure it tests,
    :data:`oscbo.paper.CLAIM_FIGURES`), those this report has: ``(title, #id)``."""
    if claim not in CLAIM_FIGURES:
        return []
    drawn = {item["section"] for item in inputs.figures.get("figures", [])}
    present = {id: title for id, title, _ in inputs.figures.get("sections", []) if id in drawn}
    present["final-regret"] = "Final regret"  # a section of tables, always there
    return [(present[id], f"#{id}") for id in FIGURES[CLAIM_FIGURES[claim]][1] if id in present]


def shown_in(claim: str) -> list[tuple[str, str]]:
    """The report's sections, by the outline, that show the evidence of ``claim``: ``(id, title)``.
    From the outline alone, so that a claim's entry is the same whatever figures a report has."""
    titles = {id: title for id, title, _ in OUTLINE} | {"final-regret": "Final regret"}
    return [(id, titles[id]) for id in FIGURES[CLAIM_FIGURES[claim]][1]] if claim in CLAIM_FIGURES else []


def bearing_on(section_id: str) -> list[str]:
    """The claims whose evidence a report section shows (:func:`evidence`, the other way)."""
    return [claim for claim, figure_ in CLAIM_FIGURES.items() if section_id in FIGURES[figure_][1]]


def numbers_dir(page: Path) -> Path:
    """Where a report's figures' numbers (CSV) go: a folder beside it, named after it."""
    return page.with_name(f"{page.stem}-numbers")


@dataclass(frozen=True)
class ReportInputs:
    """Everything a section may draw on; ``page`` is where the report is written (its links are
    relative to its folder, so that they hold in a clone)."""

    summary_dir: Path
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Any]  # the figures' manifest (oscbo.figures.draw)
    config: dict[str, Any]
    page: Path = Path("index.html")

    def finding(self, id: str) -> str:
        findings = self.tables["findings"].set_index("id")["text"]
        return findings.get(id, "")

    def href(self, target: str | Path) -> str:
        """``target``'s address relative to the report's folder."""
        return Path(os.path.relpath(Path(target).resolve(), self.page.parent.resolve())).as_posix()


def _tone(verdict: str) -> str:
    return verdict.replace(" ", "-")


def verdict_cell(row: pd.Series) -> dict:
    """A verdict with how sure it is: ``held · 98 %``, ``undecided · 61 % held`` (the share of seed
    study's seeds); the share is that of the seed resamples in which the claim holds."""
    verdict = row["verdict"]
    if verdict not in TESTED:
        return cell(verdict, True, _tone(verdict))
    shown = f"{verdict} · {row['share']:.0%}{' held' if verdict == UNDECIDED else ''}"
    return cell(shown, True, _tone(verdict))


def _verdicts(inputs: ReportInputs) -> pd.DataFrame:
    return inputs.tables["claims"]


def _resamples(verdicts: pd.DataFrame) -> str:
    counts = verdicts["resamples"].dropna()
    return f"{int(counts.max()):,}" if len(counts) else "the"


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
                after=" (20 seeds, the paper's protocol).",
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
    columns.append("another reading changes it")
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
        cells.append(cell(row["elsewhere"] or "–"))
        rows.append(cells)
    blocks.append(
        table(
            columns,
            rows,
            f"A verdict is decided by {_resamples(verdicts)} resamples of the study's seeds: held or not held when "
            "at least 90 % of them agree, else undecided; the percentage is the share in which the claim holds. "
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
        "sure: each test is run again on 1,000 resamples of the seeds (with replacement, one draw per task shared by "
        "every method); the verdict is held or not held when at least 90 % agree, else undecided, with the "
        "outcome as run beside it and an estimate of the seeds per task that would decide it if the effect these "
        "seeds show were the true one. An undefined statistic (a growth rate of a violation that stays 0) is not "
        "evaluable, never a pass. A claim about a property of OSCBO is tested for every other method too: one that "
        "every method has is counted apart, and the negative control (random search) must fail the theory's "
        "regret test. Margins are in the test's own units; the constants (oscbo.findings.thresholds) are the "
        "project's readings of the paper's words, each with the value at which the verdict would flip, and each "
        "vague word is read one way by every claim that has it (the table below)."
    )
    words = verdicts.drop_duplicates("reading").set_index("reading")["words"].to_dict()
    words.update({r.name: r.description for r in readings.from_table(inputs.tables["readings"])})
    described = [f"{name}: {words[name]}" for name in names]
    blocks = [
        text(inputs.finding("verdict")),
        text(inputs.finding("registration")),
        text(intro),
        table(
            ["claim", *names],
            grid,
            "Each claim's verdict under each reading (columns). Readings: " + "; ".join(described) + ".",
            "verdicts",
        ),
        table(
            ["the paper's word", "read as"],
            [[cell(row.word), cell(row.reading)] for row in inputs.tables["vocabulary"].itertuples()],
            "The paper's vague words, each read one way by every claim that has it.",
            "vocabulary",
        ),
        text("Each claim, its test and its numbers (click to open):"),
        *folded,
    ]
    return [section("claims", "Claims, tests and numbers", blocks)]


def summary(inputs: ReportInputs) -> list[Section]:
    """What was run, per experiment, as found in the records and checked against the config."""
    final = inputs.tables["final"]
    configured = inputs.config.get("experiments", {})
    rows = []
    for experiment, runs in sorted(final.groupby("experiment"), key=lambda item: experiment_order(item[0])):
        asked = configured.get(experiment, {})
        seeds = asked.get("seeds")
        found = {
            "seeds": span(runs.groupby(["task", "method"])["seed"].nunique()),
            "init": span(runs["n_init"]),
            "rounds": span(runs["bo_rounds"]),
        }
        wanted = {
            "seeds": len(seeds) if isinstance(seeds, list) else seeds,
            "init": asked.get("n_init"),
            "rounds": asked.get("budget"),
        }
        rows.append(
            [
                cell(experiment),
                cell(asked.get("description", "")),
                cell(", ".join(sorted(set(runs["task"])))),
                cell(", ".join(sorted(set(runs["method"])))),
                *[
                    cell(
                        found[k]
                        + ("" if wanted[k] is None or str(wanted[k]) == found[k] else f" (config: {wanted[k]})"),
                        strong=wanted[k] is not None and str(wanted[k]) != found[k],
                    )
                    for k in ("seeds", "init", "rounds")
                ],
                cell(len(runs)),
            ]
        )
    blocks = [
        text(inputs.finding("size")),
        text(
            "Counts are read from the finished run records; one that differs from the configuration is in "
            "bold, with the configured value beside it."
        ),
        table(
            [
                "experiment",
                "description",
                "tasks",
                "methods",
                "seeds per method",
                "initial design",
                "BO rounds",
                "runs",
            ],
            rows,
        ),
    ]
    not_run = inputs.tables["not_run"]
    if len(not_run):
        # one row per (experiment, tasks, seeds, reason) and the methods it leaves out: exact, as
        # each method's tasks are grouped first
        keys = ["experiment", "method", "seeds", "reason"]
        by_method = not_run.groupby(keys, sort=False)["task"].agg(", ".join).reset_index()
        keys = ["experiment", "task", "seeds", "reason"]
        grouped = by_method.groupby(keys, sort=False)["method"].agg(", ".join).reset_index()
        columns = ["experiment", "task", "method", "seeds", "reason"]
        grouped = grouped.sort_values("experiment", key=lambda c: c.map(experiment_order), kind="stable")
        blocks.append(
            details(
                f"Not run ({int(not_run['seeds'].sum()):,} runs): what could not run on this machine, and what the "
                "configuration "
                "leaves out of the paper's protocol",
                [
                    text("Its not_run entries and the jobs this machine could not run; they have no curves here."),
                    table(
                        ["experiment", "tasks", "methods", "seeds", "reason"],
                        [[cell(row[c]) for c in columns] for _, row in grouped.iterrows()],
                    ),
                ],
                id="not-run",
            )
        )
    failed = inputs.tables["failed"]
    if len(failed):
        columns = ["experiment", "task", "method", "seed", "step", "reason"]
        blocks += [
            text(
                "Failed runs: the objective raised, or returned NaN or inf, at this oracle call. These seeds are "
                "left out of every curve, rank and test (means are over the seeds that finished, so a method "
                "that fails on hard seeds can look better than it is)."
            ),
            table(columns, [[cell(row[c]) for c in columns] for _, row in failed.iterrows()]),
        ]
    return [section("summary", "What was run", blocks)]


def figure_block(inputs: ReportInputs, item: dict[str, Any]) -> dict[str, Any]:
    """A figure of the manifest with links to the code that drew it, the tables it read and its
    numbers (CSV, copied beside the report), each relative to the report, and to the claims whose
    evidence it shows (:func:`bearing_on`)."""
    module, function = item["producer"].rsplit(".", 1)
    targets = {f"drawn by {module}.{function}": inputs.href(importlib.util.find_spec(module).origin)}
    targets.update({f"from {Path(source).name}": inputs.href(source) for source in item["sources"]})
    if item.get("numbers"):
        targets["its numbers (CSV)"] = inputs.href(numbers_dir(inputs.page) / Path(item["numbers"]).name)
    tested = set(inputs.tables["claims"]["id"])
    targets.update({f"claim {claim}": f"#claim-{claim}" for claim in bearing_on(item["section"]) if claim in tested})
    return figure(item, targets)


#: Figures shown folded (a click opens them): Fig. S3's tasks beyond Fig. 3 bottom's.
FOLDED_PREFIX = "figS3-"


def _figures(inputs: ReportInputs, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The figures of a section: shown, then folded (a click opens each): Fig. S3's tasks beyond
    Fig. 3 bottom's, and a figure drawn again under a reading (the paper's figure is the default's)."""
    shown, folded = [], []
    for item in items:
        block = figure_block(inputs, item)
        if item.get("reading"):
            summary_ = f"{item['title']}, under {item.get('reading_shown') or item['reading']} (click to open)"
            folded.append(details(summary_, [block], id=f"open-{item['id']}"))
        elif item["id"].startswith(FOLDED_PREFIX) and item["id"] != FOLDED_PREFIX + DIAGNOSTICS_TASK:
            folded.append(details(item["title"], [block], id=f"open-{item['id']}"))
        else:
            shown.append(block)
    return shown + folded


def figure_sections(inputs: ReportInputs) -> list[Section]:
    """One section per figure section of the manifest that has figures, in the paper's order; the
    figures of a section not in the paper (its outline names no paper figure) folded."""
    built = []
    omitted = inputs.figures.get("omitted", [])
    for id, title, paper_figure in inputs.figures.get("sections", []):
        items = [item for item in inputs.figures["figures"] if item["section"] == id]
        if id == DUAL_SECTION:
            built += dual(inputs, title, items)
        elif items and not paper_figure:  # not in the paper: folded, one click away
            folded = details("Its figures (not in the paper; click to open)", _figures(inputs, items), id=f"open-{id}")
            built.append(section(id, title, [folded]))
        elif items:
            built.append(section(id, title, _figures(inputs, items)))
    if omitted:
        built.insert(
            0,
            section(
                "figures-left-out",
                "Figures left out",
                [text("A figure is drawn only where it carries information:"), bullets(omitted)],
            ),
        )
    return built


def _values(values: pd.Series) -> str:
    found = sorted(set(values.dropna()))
    shown = [f"{value:g}" for value in found]
    return shown[0] if len(shown) == 1 else "{" + ", ".join(shown) + "}"


def _dual_ran(table_: pd.DataFrame) -> str:
    """What the dual experiment ran, read from its table: which methods at which λ₀ and ω."""
    if table_.empty:
        return "The 'dual' experiment runs OSCBO at several λ₀ beside GP-UCB-MLL."
    arms = []
    for name, rows in table_.dropna(subset=["lambda0"]).groupby("method_name", sort=True):
        label = {"oscbo": "OSCBO", "oscbo-l1": "OSCBO-L1"}.get(name, name)
        arms.append(
            f"{label} at ω = {_values(rows['omega'])} and λ₀ = {_values(rows['lambda0'])}".replace("= {", "∈ {")
        )
    references = sorted(set(table_.loc[table_["lambda0"].isna(), "method"]))
    beside = f" beside {', '.join(references)}" if references else ""
    return (
        f"The 'dual' experiment ran {' and '.join(arms)}{beside}, on {table_['task'].nunique()} tasks with the "
        "same seeds and initial designs."
    )


def dual(inputs: ReportInputs, title: str, items: list[dict[str, Any]]) -> list[Section]:
    """The dual study: what lambda_0 and omega do to OSCBO's lengthscale and regret (not in the paper)."""
    table_ = inputs.tables["dual"]
    if table_.empty and DUAL not in inputs.config.get("experiments", {}):
        return []
    intro = text(
        "OSCBO's dual step (Table S1: ω = 0.001) moves the multiplier λ by a factor of at most e^(±ω) per round, so "
        "over 100 rounds λ stays within λ₀ e^(±0.1), and the initial λ₀, which the paper does not state, decides how "
        "the FTPL objective (S5) weighs calibration against sharpness, and thereby the lengthscale. "
        + _dual_ran(table_)
    )
    if table_.empty:
        return [
            section(
                DUAL_SECTION,
                title,
                [intro, text("The 'dual' experiment is configured but has no finished runs in these summaries.")],
            )
        ]
    rows = []
    order = table_.assign(reference=table_["method"] != TRACKING_REFERENCE)
    for _, row in order.sort_values(["task", "reference", "method_name", "omega", "lambda0"]).iterrows():
        multiplier = pd.notna(row["lambda0"])
        rows.append(
            [
                cell(row["task"]),
                cell(row["method"]),
                cell(f"{row['lambda0']:g}" if multiplier else "–"),
                cell(f"{row['omega']:g}" if multiplier else "–"),
                cell(row["n"]),
                cell(mean_se(row["lengthscale_mean"], row["lengthscale_se"])),
                cell(mean_se(row["simple_regret_mean"], row["simple_regret_se"]), row["rank_simple"] == 1),
                cell(number(row["simple_regret_ratio"])),
                cell(mean_se(row["cumulative_regret_mean"], row["cumulative_regret_se"]), row["rank_cumulative"] == 1),
                cell(f"[{row['lambda_low']:.3f}, {row['lambda_high']:.3f}]" if multiplier else "–"),
            ]
        )
    columns = [
        "task",
        "method",
        "λ₀",
        "ω",
        "seeds",
        "final lengthscale",
        "final simple regret",
        "÷ GP-UCB-MLL",
        "final cumulative regret",
        "λ / λ₀ over the run",
    ]
    caption = (
        "Mean ± s.e. over the seeds given, after the last oracle call; the lowest regret of each task in bold; "
        "÷ GP-UCB-MLL: the seed-mean final simple regret over GP-UCB-MLL's on the task (– without it)."
    )
    blocks = [
        intro,
        text(inputs.finding("dual"), "lead"),
        details(
            "Its figures and table (not in the paper; click to open)",
            [*_figures(inputs, items), table(columns, rows, caption)],
            id="open-dual",
        ),
    ]
    return [section(DUAL_SECTION, title, blocks)]


def final_regret(inputs: ReportInputs) -> list[Section]:
    """Mean ± s.e. final regret per task and method (the default reading, and each stand-in)."""
    ranks = inputs.tables["ranks"]
    stand_ins = ranks[
        (ranks["reading"] != readings.DEFAULT)
        & ((ranks["label"] != ranks["method"]) | (ranks["task_run"] != ranks["task"]))
    ]
    shown = pd.concat(
        [ranks[ranks["reading"] == readings.DEFAULT], stand_ins.drop_duplicates(["experiment", "task_run", "label"])],
        ignore_index=True,
    )
    rows: dict[str, list] = {}
    for _, row in shown.sort_values(["task", "rank_simple", "label"]).iterrows():
        under = "" if row["reading"] == readings.DEFAULT else f"\n(ranked under {row['reading']})"
        rows.setdefault(row["experiment"], []).append(
            [
                cell(row["task_run"]),
                cell(row["label"] + under),
                cell(row["n"]),
                cell(mean_se(row["simple_regret_mean"], row["simple_regret_se"]), row["rank_simple"] == 1),
                cell(f"{row['rank_simple']:g}"),
                cell(mean_se(row["cumulative_regret_mean"], row["cumulative_regret_se"]), row["rank_cumulative"] == 1),
                cell(f"{row['rank_cumulative']:g}"),
                cell(mean_se(row["best_f_mean"], row["best_f_se"]) + ("" if row["f_star_known"] else " †")),
                cell(mean_se(row["reachable_regret_mean"], row["reachable_regret_se"])),
            ]
        )
    columns = [
        "task",
        "method",
        "seeds",
        "final simple regret",
        "rank",
        "final cumulative regret",
        "rank",
        "best value found",
        "regret vs. reachable max",
    ]
    intro = (
        "Mean ± standard error over the seeds given, after the last oracle call. Ranks order a task's methods by mean "
        "(1 = lowest; ties share the average rank); the best of each task is in bold. A reading's stand-in (OSCBO at "
        "λ₀ = 0.433, the task material5-max) is ranked among the default methods in place of what it replaces. "
        "†: f* unknown (Lunar Lander); its regret is against the best value seen on it in the study, the same order "
        "as the best value found. Regret vs. reachable max: for a tabular task, what a dense search of its oracle "
        "reaches minus the best value found (negative: beyond the search); f* is a table value the interpolating "
        "oracle reaches only at and very near its design, so this tells 'no method gets close' from 'no method can'."
    )
    blocks = [text(intro)]
    for experiment in sorted(rows, key=experiment_order):
        blocks.append(
            details(
                f"{experiment}: {len(rows[experiment])} rows",
                [table(columns, rows[experiment])],
                id=f"final-{experiment}",
            )
        )
    tasks = inputs.tables["tasks"].dropna(subset=["reachable_value"])
    if len(tasks):
        blocks.append(
            details(
                "The tabular tasks' f* and what a dense search reaches",
                [
                    table(
                        ["task", "f* (best table value)", "reachable maximum (dense search)"],
                        [
                            [cell(t.task), cell(f"{t.optimal_value:.6g}"), cell(f"{t.reachable_value:.6g}")]
                            for t in tasks.itertuples()
                        ],
                        "A dense search of the oracle: the best of 65,536 Sobol points polished by L-BFGS-B from the "
                        "16 best.",
                    )
                ],
                id="reachable",
            )
        )
    return [section("final-regret", "Final regret", blocks)]


def comparisons(inputs: ReportInputs) -> list[Section]:
    """OSCBO's and OSCBO-L1's paired comparisons, where the seeds can reach the test's level."""
    tests = inputs.tables["tests"]
    ours = tests[tests["method_a"].isin(SUBJECTS) | tests["method_b"].isin(SUBJECTS)]
    testable = ours[ours["testable"].astype(bool)]
    intro = (
        "Final regret of OSCBO and OSCBO-L1 against every other method of a task, paired on seed (the same seed gives "
        "the same initial design); negative differences favour A. p: two-sided Wilcoxon signed-rank test; Holm p: "
        f"adjusted by Holm's step-down method across every pair of methods and task of the experiment and metric "
        f"(the family; the full table is tests.parquet). With n non-zero differences the test cannot return a p "
        f"below 2 / 2^n, so a row needs at least 6 seeds to reach {statistics.ALPHA}; the 95 % bootstrap interval of "
        f"the mean difference needs {statistics.MIN_BOOTSTRAP_PAIRS} pairs ({statistics.BOOTSTRAP_RESAMPLES} "
        f"resamples). Holm p < {statistics.ALPHA} in bold."
    )
    if testable.empty:
        least = int(ours["n"].max()) if len(ours) else 0
        return [
            section(
                "statistics",
                "Paired comparisons",
                [
                    text(intro),
                    text(
                        f"Too few seeds: with at most {least} paired seed{'s' * (least != 1)} the smallest attainable "
                        f"p is {statistics.min_attainable_p(least):g}, above {statistics.ALPHA}: no comparison is "
                        f"shown."
                    ),
                ],
            )
        ]
    columns = ["experiment", "task", "metric", "A", "B", "paired seeds", "mean A − B", "95% CI", "p", "Holm p"]
    used = inputs.tables["claim_tests"]
    used = used[used["reading"] == readings.DEFAULT]
    pairs = {(r.experiment, r.task, r.metric, *sorted((r.subject, r.other))) for r in used.itertuples()}
    claimed = testable[
        [(r.experiment, r.task, r.metric, *sorted((r.method_a, r.method_b))) in pairs for r in testable.itertuples()]
    ]
    notes = [text(intro)]
    for rows, summary_, id in (
        (claimed, f"The comparisons the claims' tests rest on ({len(claimed)})", "tests-claims"),
        (testable, f"Every comparison of OSCBO or OSCBO-L1 with enough seeds ({len(testable)})", "tests-all"),
    ):
        if len(rows):
            notes.append(details(summary_, [table(columns, _test_rows(rows))], id=id))
    if len(ours) > len(testable):
        notes.append(
            text(
                f"{len(ours) - len(testable)} comparisons with too few seeds (at most 5 non-zero "
                "differences) are left out."
            )
        )
    return [section("statistics", "Paired comparisons", notes)]


def _test_rows(tests: pd.DataFrame) -> list[list[dict]]:
    order = tests.assign(_order=tests["experiment"].map(experiment_order)).sort_values(
        ["_order", "metric", "task", "method_a", "method_b"], kind="stable"
    )
    return [
        [
            cell(r.experiment),
            cell(r.task),
            cell(r.metric.replace("_", " ")),
            cell(r.method_a),
            cell(r.method_b),
            cell(r.n),
            cell(number(r.mean_diff)),
            cell(f"[{number(r.ci_low)}, {number(r.ci_high)}]"),
            cell(number(r.p_value)),
            cell(number(r.p_holm), bool(r.significant)),
        ]
        for r in order.itertuples()
    ]


def protocol(inputs: ReportInputs) -> list[Section]:
    """Every setting, and every departure from the paper: the ``protocol`` table the study wrote."""
    columns = ["setting", "value", "paper", "kind", "note"]
    entries = inputs.tables["protocol"].to_dict("records")
    rows = [
        [cell(entry[column], strong=column == "kind" and entry[column] == "departure") for column in columns]
        for entry in entries
    ]
    departures = [entry["setting"] for entry in entries if entry["kind"] == "departure"]
    intro = (
        "The settings of this run beside the paper's. Kind: 'as stated' is the paper's own setting, 'gap filled' "
        "the project's choice where the paper is silent, 'departure' a deliberate difference from what the paper "
        "states; the notes explain each, with its measured effect where it could change a number. "
        + (f"Departures ({len(departures)}): {'; '.join(departures)}." if departures else "No departures.")
    )
    chosen = [row for row, entry in zip(rows, entries) if entry["kind"] != "as stated"]
    blocks = [
        text(intro),
        details(f"Departures and gaps filled ({len(chosen)})", [table(columns, chosen)], id="protocol-choices"),
        details(f"Every setting ({len(rows)})", [table(columns, rows)], id="protocol-all"),
        *crosscheck(inputs.tables.get("crosscheck")),
    ]
    return [section("protocol", "Protocol", blocks)]


#: The cross-check's columns as the report heads them: (table column, heading).
CROSSCHECK_COLUMNS = [
    ("p_sr", "p(SR)"),
    ("p_cr", "p(CR)"),
    ("p_ls", "p(ls)"),
    ("gap_ls", "gap ls"),
    ("gap_sr", "gap SR"),
    ("within_1pct", "within 1 %"),
    ("median_sr", "median SR"),
    ("median_ls", "median ls"),
    ("seconds_per_run", "s/run"),
    ("fit_retries", "fit retries"),
]


def crosscheck(checked: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The baselines run beside independent code (``benchmarks/crosscheck.py --table``), when the
    study has that table; a line saying how to add it when not."""
    if checked is None:
        return [
            text(
                "The baselines were not run beside independent code for this study: "
                "python benchmarks/crosscheck.py --table SUMMARY/crosscheck.parquet adds that check here."
            )
        ]
    first = checked.iloc[0]

    def shown(row: Any, column: str) -> str:
        value = getattr(row, column)
        if pd.isna(value):
            return ""
        return f"{value}/{row.seeds}" if column == "within_1pct" else number(float(value))

    rows = [
        [cell(r.task), cell(r.method), cell(r.implementation, strong=r.implementation == "engine")]
        + [cell(shown(r, column)) for column, _ in CROSSCHECK_COLUMNS]
        for r in checked.itertuples()
    ]
    described = dict(zip(checked["implementation"], checked["description"]))
    return [
        heading("protocol-crosscheck", "The baselines beside independent code"),
        text(
            "GP-UCB-MLL and VanillaBO (ARD, as the ard ablation runs it) beside plain per-seed BoTorch loops that "
            "share no GP, fit or acquisition code with the engine (benchmarks/botorch_loops.py), on the same seeds "
            f"and initial designs: {first.seeds} seeds, {first.budget} BO rounds after {first.n_init} points. "
            "p: two-sided Mann-Whitney p of the final simple regret (SR), cumulative regret (CR) and lengthscale "
            "(ls; ARD: its geometric mean) against the engine's; gap: the mean over rounds of the |log10| "
            "difference of the seed-mean trajectories; within 1 %: the seeds whose final simple regret is within "
            "1 % of the engine's on the same seed; s/run: wall seconds per seed-run (the engine runs the seeds as "
            "one batch, the loops one seed at a time); fit retries: fits BoTorch ended abnormally (each retried "
            f"from a draw of the priors). Made by: {first.command}"
        ),
        bullets(f"{name}: {description}" for name, description in described.items()),
        table(["task", "method", "implementation", *(title for _, title in CROSSCHECK_COLUMNS)], rows),
    ]


def provenance(inputs: ReportInputs) -> list[Section]:
    """Where the numbers came from, as the runs' sidecars recorded it, and the configuration in full."""
    runs = inputs.tables["provenance"]
    blocks = []
    commits = runs["git_commit"].value_counts()
    if len(commits) > 1:
        blocks.append(
            text(
                f"The runs come from {len(commits)} commits: compare them before reading one number against another.",
                "warning",
            )
        )
    blocks.append(table(["git commit", "runs"], [[cell(c), cell(n)] for c, n in commits.items()]))
    if "code_path" in runs:
        unpinned = int((~runs["code_path"].astype(str).str.startswith("pinned")).sum())
        blocks.append(
            text(
                "What reproduces, and how: a run's records are the same bit for bit when it runs again with the same "
                "seeds, settings and code on the pinned numerical code path (below), alone or in a batch, on any "
                "x86-64 CPU the path supports; a GPU, or a machine's own kernels, round differently. Rounding is not "
                "noise that averages out within a run: a different last bit early on sends a BO run down another "
                "trajectory, so two runs of this protocol that differ only in rounding agree in distribution over "
                "the seeds, not seed by seed; the seeds' spread, which every verdict here resamples, is the measure "
                "of that."
            )
        )
        if unpinned:
            blocks.append(
                text(
                    f"{unpinned} of {len(runs)} runs did not run on the pinned numerical code path "
                    "(below): their numbers reproduce bit for bit on the same kind of machine only.",
                    "warning",
                )
            )
    machine = []
    for column, title in (
        ("device", "device"),
        ("threads", "threads"),
        ("code_path", "numerical code path"),
        ("mkl_reproducibility", "MKL mode (runs before the code path was pinned)"),
        ("hardware", "machine"),
    ):
        if column in runs:
            counts = runs[column].astype(str).value_counts()
            machine.append(table([title, "runs"], [[cell(value), cell(n)] for value, n in counts.items()]))
    for versions, n in runs["versions"].value_counts().items():
        machine.append(
            table(["package", f"version ({n} runs)"], [[cell(k), cell(v)] for k, v in json.loads(versions).items()])
        )
    if len(runs):
        machine.append(
            facts(
                [
                    ("first run started", runs["started"].min()),
                    ("last run finished", runs["finished"].max()),
                    ("summary tables", inputs.summary_dir),
                ]
            )
        )
    resolved = yaml.safe_dump(json.loads(json.dumps(inputs.config, default=str)), sort_keys=False, allow_unicode=True)
    blocks += [
        details("Devices, threads, numerical code path, machines and package versions", machine, id="machines"),
        details("The resolved configuration", [pre(resolved)], id="configuration"),
    ]
    return [section("provenance", "Provenance", blocks)]


#: The section builders, in page order.
SECTIONS: list[Callable[[ReportInputs], list[Section]]] = [
    answer,
    claims,
    summary,
    figure_sections,
    final_regret,
    comparisons,
    protocol,
    provenance,
]
