"""The report's second band, the results: what was run, and the figures in the paper's order (the
dual study's among them); the final regret and OSCBO's paired comparisons follow (:mod:`.regret`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pandas as pd

from oscbo.paper import (
    DIAGNOSTICS_TASK,
    DUAL,
    OMEGA,
    ROUNDS,
    TRACKING_REFERENCE,
    experiment_order,
    paper_order,
    shown_name,
    task_name,
)
from oscbo.report.blocks import (
    Section,
    bullets,
    cell,
    details,
    figure,
    mean_se,
    number,
    section,
    span,
    table,
    text,
)
from oscbo.report.outline import DUAL as DUAL_SECTION
from oscbo.report.sections.inputs import ReportInputs, numbers_dir
from oscbo.report.sections.verdicts import tested_here


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
                cell(", ".join(task_name(task) for task in sorted(set(runs["task"])))),
                cell(", ".join(shown_name(label) for label in sorted(set(runs["method"]), key=paper_order))),
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
        named = not_run.assign(task=not_run["task"].map(task_name), method=not_run["method"].map(shown_name))
        # one row per (experiment, tasks, seeds, reason) and the methods it leaves out: exact, as
        # each method's tasks are grouped first
        keys = ["experiment", "method", "seeds", "reason"]
        by_method = named.groupby(keys, sort=False)["task"].agg(", ".join).reset_index()
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
    numbers (CSV, copied beside the report), each relative to the report."""
    module, function = item["producer"].rsplit(".", 1)
    targets = {f"drawn by {module}.{function}": inputs.href(importlib.util.find_spec(module).origin)}
    targets.update({f"from {Path(source).name}": inputs.href(source) for source in item["sources"]})
    if item.get("numbers"):
        targets["its numbers (CSV)"] = inputs.href(numbers_dir(inputs.page) / Path(item["numbers"]).name)
    return figure(item, targets)


#: Supplementary figures folded but one panel: Fig. S3's tasks beyond Fig. 3 bottom's, Fig. S2's beyond its first.
FOLDED = {"figS3": f"figS3-{DIAGNOSTICS_TASK}", "figS2": None}


def _figures(inputs: ReportInputs, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The figures of a section: shown, then folded (a click opens each): a supplementary figure's
    panels but one (:data:`FOLDED`; its first where none is named), and a figure drawn again under a
    reading (the paper's figure is the default's)."""
    shown, folded = [], []
    defaults = [item for item in items if not item.get("reading")]
    for item in items:
        block = figure_block(inputs, item)
        kept = FOLDED.get(item["section"], item["id"]) or defaults[0]["id"]
        if item.get("reading"):
            summary_ = f"{item['title']}, under {item.get('reading_shown') or item['reading']} (click to open)"
            folded.append(details(summary_, [block], id=f"open-{item['id']}"))
        elif item["id"] != kept:
            folded.append(details(f"{item['title']} (click to open)", [block], id=f"open-{item['id']}"))
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
        tested = tested_here(inputs, id) if items else []  # the claims these figures are evidence for, first
        if id == DUAL_SECTION:
            built += dual(inputs, title, items)
        elif items and not paper_figure:  # not in the paper: folded, one click away
            folded = details("Its figures (not in the paper; click to open)", _figures(inputs, items), id=f"open-{id}")
            built.append(section(id, title, [*tested, folded]))
        elif items:
            built.append(section(id, title, [*tested, *_figures(inputs, items)]))
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
        f"OSCBO's dual step (Table S1: ω = {OMEGA:g}) moves the multiplier λ by a factor of at most e^(±ω) per round, "
        f"so over {ROUNDS} rounds λ stays within λ₀ e^(±{OMEGA * ROUNDS:g}), and the initial λ₀, which the paper "
        "does not state, decides how the FTPL objective (S5) weighs calibration against sharpness, and thereby the "
        "lengthscale. " + _dual_ran(table_)
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
                cell(task_name(row["task"])),
                cell(shown_name(row["method"])),
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
