"""The study report: one self-contained HTML file rendered from the summaries and figures.

The page is a list of sections, each a dict ``{"id", "title", "blocks"}``; a block is one
of a few kinds the template knows how to draw (``text``, ``facts``, ``table``, ``figure``,
``pre``). :data:`SECTIONS` lists the functions that build the sections, in page order: to
add a section, write a function of :class:`ReportInputs` that returns a list of sections
and put it in that list. Everything shown comes from the tables written by
:mod:`oscbo.aggregate` (and the claims' verdicts that :mod:`oscbo.claims` draws from them),
the figure descriptions returned by :func:`oscbo.figures.make_figures`, and the config,
provenance and protocol passed in; nothing is recomputed here.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import yaml

from oscbo import aggregate, claims, figures, readings, records
from oscbo.config import Settings

TITLE = "OSCBO replication report"
TEMPLATE = "index.html.j2"
#: The summary tables the sections read.
REPORT_TABLES = sorted({"final", "ranks", "tests", "tasks", "not_run", "failed", *claims.TABLES, *claims.DUAL_TABLES})
#: p-values below this are set in bold in the statistics table.
SIGNIFICANCE = 0.05

Section = dict[str, Any]


@dataclass(frozen=True)
class ReportInputs:
    """Everything a section may draw on."""

    summary_dir: Path
    tables: dict[str, pd.DataFrame]
    figures: list[dict[str, Any]]
    config: dict[str, Any]
    provenance: dict[str, Any]
    protocol: list[dict[str, Any]]


def render_report(
    summary_dir: str | Path,
    figures: list[dict[str, Any]],
    config: dict[str, Any],
    provenance: dict[str, Any],
    protocol: list[dict[str, Any]],
    out_html: str | Path,
) -> Path:
    """Render the report to one HTML file with the figures embedded and no external assets.

    Args:
        summary_dir: Folder holding the tables written by :func:`oscbo.aggregate.aggregate`.
        figures: The figure descriptions returned by :func:`oscbo.figures.make_figures`;
            their PNG files are read and embedded as data URIs.
        config: The resolved study configuration (summarised, and shown in full).
        provenance: The output of :func:`oscbo.provenance.collect` for ``config``.
        protocol: Rows ``{"setting", "value", "paper", "note"}``: every setting, and every
            departure from the paper.
        out_html: Where to write the page; its folder is created if missing.

    Returns:
        ``out_html`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: Two sections would share an ``id`` (the page's anchors must be unique).
    """
    inputs = ReportInputs(
        summary_dir=Path(summary_dir),
        tables=aggregate.load(summary_dir, REPORT_TABLES),
        figures=figures,
        config=config,
        provenance=provenance,
        protocol=protocol,
    )
    sections = [section for build in SECTIONS for section in build(inputs)]
    ids = [section["id"] for section in sections]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"report sections share ids {duplicates}")
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,  # method labels and config values are data, never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = environment.get_template(TEMPLATE).render(
        title=TITLE,
        provenance=provenance,
        sections=sections,
    )
    out_html = Path(out_html)
    with records.atomic_path(out_html) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out_html


# ----------------------------------------------------------------------------- blocks


def text(content: str) -> dict[str, Any]:
    return {"kind": "text", "text": content}


def facts(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A definition list of ``(name, value)`` pairs."""
    return {"kind": "facts", "items": [(name, str(value)) for name, value in items]}


def cell(content: Any, strong: bool = False, tone: str = "") -> dict[str, Any]:
    """A table cell; ``tone`` is a CSS class of the template that colours it (e.g. ``held``)."""
    return {"text": str(content), "strong": bool(strong), "tone": tone}


def table(columns: list[str], rows: list[list[dict[str, Any]]], caption: str = "") -> dict[str, Any]:
    """A table; each row is a list of :func:`cell` dicts, one per column."""
    return {"kind": "table", "columns": columns, "rows": rows, "caption": caption}


def pre(content: str) -> dict[str, Any]:
    return {"kind": "pre", "text": content}


def figure(path: str | Path, alt: str, caption: str, sources: list[str], producer: str) -> dict[str, Any]:
    """A PNG embedded as a base64 data URI, with its caption and where it came from."""
    encoded = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return {
        "kind": "figure",
        "src": f"data:image/png;base64,{encoded}",
        "alt": alt,
        "caption": caption,
        "sources": sources,
        "producer": producer,
    }


def number(value: float) -> str:
    """Three significant digits, or an en dash for a missing value."""
    return "–" if value is None or not math.isfinite(value) else f"{value:.3g}"


def mean_se(mean: float, se: float) -> str:
    """``"0.123 ± 0.045"``; the mean alone when there is no standard error (one seed)."""
    return number(mean) if not math.isfinite(se) else f"{number(mean)} ± {se:.2g}"


def _joined(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in sorted(set(values)))


def _span(values: pd.Series) -> str:
    """``"10"`` when all values agree, else ``"8–10"``."""
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}–{high}"


# ----------------------------------------------------------------------------- sections


def summary_section(inputs: ReportInputs) -> list[Section]:
    """What was run, per experiment, as found in the records and checked against the config."""
    final = inputs.tables["final"]
    configured = inputs.config.get("experiments", {})
    rows = []
    for experiment, runs in final.groupby("experiment", sort=True):
        asked = configured.get(experiment, {})
        seeds = asked.get("seeds")
        rows.append(
            [
                cell(experiment),
                cell(asked.get("description", "")),
                cell(_joined(runs["task"])),
                cell(_joined(runs["method"])),
                _found(runs.groupby(["task", "method"])["seed"].nunique(), len(seeds) if isinstance(seeds, list) else seeds),
                _found(runs["n_init"], asked.get("n_init")),
                _found(runs["bo_rounds"], asked.get("budget")),
                cell(len(runs)),
            ]
        )
    columns = ["experiment", "description", "tasks", "methods", "seeds per method", "initial design", "BO rounds"]
    settings = [(key, value) for key, value in inputs.config.items() if not isinstance(value, (dict, list))]
    blocks = [
        text(
            "Counts are read from the finished run records. A count that differs from the configuration "
            "is in bold, with the configured value beside it. The full configuration is under Provenance."
        ),
        table(columns + ["runs"], rows),
    ]
    not_run = inputs.tables["not_run"]
    if len(not_run):
        blocks += [
            text("Not run: these jobs could not run on this machine and have no curves in this report."),
            table(
                ["experiment", "task", "method", "seeds", "reason"],
                [[cell(row[c]) for c in ["experiment", "task", "method", "seeds", "reason"]] for _, row in not_run.iterrows()],
            ),
        ]
    failed = inputs.tables["failed"]
    if len(failed):
        columns = ["experiment", "task", "method", "seed", "step", "reason"]
        blocks += [
            text(
                "Failed runs: the objective raised, or returned NaN or inf, at this oracle call. These seeds are "
                "left out of every curve, rank and test (means are over the seeds that finished, so a method that "
                "fails on hard seeds can look better than it is); each keeps a partial record with the reason."
            ),
            table(columns, [[cell(row[c]) for c in columns] for _, row in failed.iterrows()]),
        ]
    if settings:
        blocks += [text("Top-level settings of the configuration:"), facts(settings)]
    return [{"id": "summary", "title": "What was run", "blocks": blocks}]


def _found(values: pd.Series, configured: Any) -> dict[str, Any]:
    """A cell with the count found in the records, flagged when the config asked for another."""
    found = _span(values)
    if configured is None or str(configured) == found:
        return cell(found)
    return cell(f"{found} (config: {configured})", strong=True)


def figure_block(item: dict[str, Any]) -> dict[str, Any]:
    """The figure block of one figure description of :func:`oscbo.figures.make_figures`."""
    return figure(item["path"], item["title"], item["caption"], item["sources"], item.get("producer", ""))


def figure_sections(inputs: ReportInputs) -> list[Section]:
    """One section per figure that has no section of its own to go to, in drawing order."""
    return [
        {"id": item["id"], "title": item["title"], "blocks": [figure_block(item)]}
        for item in inputs.figures
        if not item.get("section")
    ]


def dual_section(inputs: ReportInputs) -> list[Section]:
    """The dual study (not in the paper): what lambda_0 and omega do to OSCBO's lengthscale and regret."""
    dual = inputs.tables["dual"]
    known = dual["mll_equivalent_lambda"].dropna()
    mll_lambda = float(known.iloc[0]) if len(known) else Settings().mll_equivalent_lambda
    intro = text(
        "OSCBO's dual step (Table S1: ω = 0.001) moves the multiplier λ by a factor of at most e^(±ω) per round, "
        "so over 100 rounds λ stays within λ0 e^(±0.1), and the initial λ0, which the paper does not state, "
        "decides how the FTPL objective (S5) weighs calibration against sharpness, and thereby the lengthscale. "
        "With p = 2 and constant λ, S5 is proportional to −2 × the GP marginal log likelihood exactly at "
        f"λ = β / log(1 + σ⁻²) = {mll_lambda:.3f}: there OSCBO picks GP-UCB-MLL's lengthscales (a test checks "
        f"it, and that the default λ0 = 1 does not). The '{aggregate.DUAL}' experiment (not in the paper) runs "
        "OSCBO and OSCBO-L1 at several λ0 and ω beside GP-UCB-MLL on the same tasks, seeds and initial designs."
    )
    section = {"id": figures.DUAL_SECTION, "title": "What sets OSCBO's lengthscale"}
    if dual.empty:
        configured = aggregate.DUAL in inputs.config.get("experiments", {})
        why = (
            f"The '{aggregate.DUAL}' experiment is configured but has no finished runs in these summaries."
            if configured else
            f"This study's configuration has no '{aggregate.DUAL}' experiment, so there is nothing to show here; "
            "config/config.yaml runs it (config/README.md)."
        )
        return [{**section, "blocks": [intro, text(why)]}]
    try:
        reading = claims.dual_reading(inputs.tables)
    except claims.NotEvaluated as missing:
        reading = f"No reading of the dual study: {missing}."
    blocks = [intro, text(reading)]
    blocks += [figure_block(item) for item in inputs.figures if item.get("section") == figures.DUAL_SECTION]
    blocks.append(_dual_table(dual))
    return [{**section, "blocks": blocks}]


def _dual_table(dual: pd.DataFrame) -> dict[str, Any]:
    rows = []
    order = dual.assign(reference=dual["method"] != aggregate.TRACKING_REFERENCE)
    for _, row in order.sort_values(["task", "reference", "method_name", "omega", "lambda0"]).iterrows():
        multiplier = pd.notna(row["lambda0"])
        rows.append([
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
        ])
    columns = ["task", "method", "λ0", "ω", "seeds", "final lengthscale", "final simple regret",
               "÷ GP-UCB-MLL", "final cumulative regret", "λ / λ0 over the run"]
    caption = (
        "Mean ± s.e. over seeds after the last oracle call; the lowest regret of each task in bold; ÷ GP-UCB-MLL: "
        "the seed-mean final simple regret over GP-UCB-MLL's on the task (– without it)."
    )
    return table(columns, rows, caption)


def claims_section(inputs: ReportInputs) -> list[Section]:
    """Each qualitative claim of the paper's section 7, tested on this study (:mod:`oscbo.claims`),
    with a verdict under each reading of what the paper leaves open (:mod:`oscbo.readings`)."""
    verdicts = claims.evaluate(inputs.tables)
    names = list(dict.fromkeys(verdicts["reading"]))
    counts = verdicts.loc[verdicts["reading"] == readings.DEFAULT, "verdict"].value_counts()
    rows = []
    for claim, group in verdicts.groupby("id", sort=False):
        by_reading = group.set_index("reading")
        default = by_reading.loc[readings.DEFAULT]
        numbers = [default["numbers"]] + [
            f"{name}: {by_reading.loc[name, 'numbers']}" for name in names[1:]
            if by_reading.loc[name, "verdict"] in (claims.HELD, claims.NOT_HELD)
        ]
        rows.append([
            cell(claim),
            cell(f"“{default['paper']}” ({default['source']})"),
            cell(default["test"]),
            cell(" ‖ ".join(numbers)),
            *[cell(by_reading.loc[name, "verdict"], strong=True, tone=by_reading.loc[name, "verdict"].replace(" ", "-"))
              for name in names],
        ])
    changed = claims.changes(verdicts)
    if len(names) == 1:
        changes = "This study runs no alternative reading."
    elif changed.empty:
        changes = "No claim's verdict changes with the reading."
    else:
        changes = ("The verdict changes with the reading for " + str(len(changed)) + " claim"
                   + "s" * (len(changed) != 1) + ": "
                   + "; ".join(f"{row.id} ({row.verdicts})" for row in changed.itertuples())
                   + ". Every other claim has the same verdict under every reading that applies to it.")
    described = readings.from_table(inputs.tables["readings"])
    intro = (
        changes + " Each claim of the paper's section 7 and figure captions is turned into a test on this study's "
        "summary tables; the verdict is computed, never set by hand. Where the paper leaves a choice open, the study "
        "runs each choice and gives a verdict under each reading (columns): "
        + "; ".join(f"{r.name}: {r.description}" for r in described)
        + ". 'not applicable': none of the reading's stand-ins ran in the claim's experiment. Mean rank: final "
        "regret averaged over seeds per task and method, methods ranked within each task (ties share the average "
        "rank), ranks averaged over tasks (± s.e. over tasks); place = 1 + the number of methods with a lower mean "
        "rank. The thresholds are the constants of oscbo.claims. With few seeds or tasks a verdict says little "
        "either way. Under the default reading: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in claims.VERDICTS if v != claims.NOT_APPLICABLE)
        + "."
    )
    columns = ["claim", "paper", "test", "numbers (default ‖ other readings)", *names]
    return [{"id": "claims", "title": "Claims", "blocks": [text(intro), table(columns, rows)]}]


def final_regret_section(inputs: ReportInputs) -> list[Section]:
    """Mean ± s.e. final regret per task and method, the best of each task in bold; a stand-in of a
    reading with its rank under that reading."""
    ranks = inputs.tables["ranks"]
    stand_ins = ranks[(ranks["reading"] != readings.DEFAULT)
                      & ((ranks["label"] != ranks["method"]) | (ranks["task_run"] != ranks["task"]))]
    stand_ins = stand_ins.drop_duplicates(["experiment", "task_run", "label"])
    shown = pd.concat([ranks[ranks["reading"] == readings.DEFAULT], stand_ins], ignore_index=True)
    shown = shown.sort_values(["experiment", "task", "rank_simple", "label"])
    rows = []
    for _, row in shown.iterrows():
        under = "" if row["reading"] == readings.DEFAULT else f" (ranked under reading {row['reading']})"
        rows.append(
            [
                cell(row["experiment"]),
                cell(row["task_run"]),
                cell(row["label"] + under),
                cell(row["n"]),
                cell(mean_se(row["simple_regret_mean"], row["simple_regret_se"]), row["rank_simple"] == 1),
                cell(f"{row['rank_simple']:g}"),
                cell(
                    mean_se(row["cumulative_regret_mean"], row["cumulative_regret_se"]),
                    row["rank_cumulative"] == 1,
                ),
                cell(f"{row['rank_cumulative']:g}"),
                cell(mean_se(row["best_f_mean"], row["best_f_se"]) + ("" if row["f_star_known"] else " †")),
                cell(mean_se(row["reachable_regret_mean"], row["reachable_regret_se"])),
            ]
        )
    columns = ["experiment", "task", "method", "seeds"]
    columns += ["final simple regret", "rank", "final cumulative regret", "rank", "best value found",
                "regret vs. reachable max"]
    intro = (
        "Mean ± standard error over seeds of the regret after the last oracle call. Ranks order the "
        "methods of a task by mean (1 = lowest; ties share the average rank); the best of each task "
        "is in bold. Rows are ordered by simple-regret rank; a reading's stand-in (e.g. OSCBO at λ0 = 0.433, or "
        "the task material5-max) is ranked among the default methods in place of what it replaces. †: f* of the "
        "task is unknown (Lunar Lander); its regret is taken against the best value seen on it in this whole study. "
        "Regret vs. reachable max: for a tabular task, the best value of a dense search of its oracle (the tasks "
        "table) minus the best value found; f* is a table value the interpolating oracle reaches only at (and very "
        "near) its design, so this says whether a method got as far as the oracle lets one get (negative: beyond "
        "the dense search)."
    )
    tasks = inputs.tables["tasks"].dropna(subset=["reachable_value"])
    blocks = [text(intro), table(columns, rows)]
    if len(tasks):
        blocks.append(table(["task", "f* (best table value)", "reachable maximum (dense search)"],
                            [[cell(t.task), cell(f"{t.optimal_value:.6g}"), cell(f"{t.reachable_value:.6g}")]
                             for t in tasks.itertuples()],
                            "The tabular tasks' f* beside what a dense search of the oracle reaches: the best of "
                            "65,536 Sobol points polished by L-BFGS-B from the 16 best."))
    return [{"id": "final-regret", "title": "Final regret", "blocks": blocks}]


def statistics_section(inputs: ReportInputs) -> list[Section]:
    """The paired comparisons of final regret, as ``aggregate.tests_table`` wrote them."""
    tests = inputs.tables["tests"]
    rows = []
    for _, row in tests.iterrows():
        interval = f"[{number(row['ci_low'])}, {number(row['ci_high'])}]"
        rows.append(
            [
                cell(row["experiment"]),
                cell(row["task"]),
                cell(row["metric"].replace("_", " ")),
                cell(row["method_a"]),
                cell(row["method_b"]),
                cell(row["n"]),
                cell(number(row["mean_diff"])),
                cell(interval),
                cell(number(row["median_diff"])),
                cell(number(row["p_value"]), bool(row["p_value"] < SIGNIFICANCE)),
            ]
        )
    columns = ["experiment", "task", "metric", "A", "B", "paired seeds"]
    columns += ["mean A − B", "95% CI", "median A − B", "p"]
    intro = (
        "Final regret of each pair of methods on the same task, paired on seed (the same seed gives the "
        "same initial design). Negative differences favour A. CI: percentile bootstrap of the mean "
        f"difference ({aggregate.BOOTSTRAP_RESAMPLES} resamples, seed {aggregate.BOOTSTRAP_SEED}). "
        "p: two-sided Wilcoxon signed-rank test, not corrected for multiple comparisons; – where the "
        f"test is undefined (fewer than 2 seeds, or all differences zero). p < {SIGNIFICANCE} in bold."
    )
    blocks = [text(intro), table(columns, rows)]
    return [{"id": "statistics", "title": "Paired comparisons", "blocks": blocks}]


def protocol_section(inputs: ReportInputs) -> list[Section]:
    """Every setting, and every departure from the paper, as supplied by the caller."""
    columns = ["setting", "value", "paper", "kind", "note"]
    rows = [[cell(entry.get(column, ""), strong=column == "kind" and entry.get(column) == "departure")
             for column in columns] for entry in inputs.protocol]
    departures = [entry["setting"] for entry in inputs.protocol if entry.get("kind") == "departure"]
    intro = (
        "The settings of this run beside the paper's. Kind: 'as stated' is the paper's own setting, 'gap filled' "
        "the project's choice where the paper is silent, 'departure' a deliberate difference from what the paper "
        "states; the notes explain each, with its measured effect where it could change a number. "
        + (f"Departures ({len(departures)}): {'; '.join(departures)}." if departures else "No departures.")
    )
    return [{"id": "protocol", "title": "Protocol", "blocks": [text(intro), table(columns, rows)]}]


def provenance_section(inputs: ReportInputs) -> list[Section]:
    """Where the numbers came from, and the resolved configuration in full."""
    info = inputs.provenance
    versions = info.get("versions", {})
    hardware = info.get("hardware", {})
    # A JSON round trip turns paths and other objects into strings YAML can write.
    resolved = yaml.safe_dump(json.loads(json.dumps(inputs.config, default=str)), sort_keys=False)
    blocks = [
        facts(
            [
                ("config hash", info.get("config_hash", "unknown")),
                ("git commit", info.get("git_commit", "unknown")),
                ("date", info.get("date", "unknown")),
                ("summary tables", inputs.summary_dir),
            ]
        ),
        table(["package", "version"], [[cell(name), cell(version)] for name, version in versions.items()]),
        table(["hardware", "value"], [[cell(name), cell(value)] for name, value in hardware.items()]),
        text("Resolved configuration:"),
        pre(resolved),
    ]
    return [{"id": "provenance", "title": "Provenance", "blocks": blocks}]


#: The section builders, in page order.
SECTIONS: list[Callable[[ReportInputs], list[Section]]] = [
    summary_section,
    figure_sections,
    claims_section,
    dual_section,
    final_regret_section,
    statistics_section,
    protocol_section,
    provenance_section,
]
