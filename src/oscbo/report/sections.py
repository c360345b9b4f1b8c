"""The report's sections, in page order: the answer first, then the figures in the paper's order,
then the tables a reader checks the answer against.

Every section renders what the earlier stages wrote (the summary tables, the protocol table, the
``claims`` and ``findings`` tables, the figures' manifest); nothing is computed here beyond
choosing rows and formatting numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo.analysis import readings, statistics
from oscbo.paper import CALIBRATION_PAIR, DUAL, TRACKING_REFERENCE
from oscbo.report.blocks import (
    Section,
    bullets,
    cell,
    facts,
    figure,
    mean_se,
    number,
    pre,
    section,
    span,
    table,
    text,
)
from oscbo.report.outline import DUAL as DUAL_SECTION

#: The methods whose comparisons the statistics section lists.
SUBJECTS = CALIBRATION_PAIR


@dataclass(frozen=True)
class ReportInputs:
    """Everything a section may draw on."""

    summary_dir: Path
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Any]  # the figures' manifest (oscbo.figures.draw)
    config: dict[str, Any]

    def finding(self, id: str) -> str:
        findings = self.tables["findings"].set_index("id")["text"]
        return findings.get(id, "")


def _tone(verdict: str) -> str:
    return verdict.replace(" ", "-")


def verdict_cell(row: pd.Series) -> dict:
    """A verdict with how sure it is: ``held · 98 %`` (decided), ``held? · 61 %`` (undecided at the
    study's seeds); the share is that of the seed resamples in which the claim holds."""
    verdict = row["verdict"]
    if verdict not in ("held", "not held"):
        return cell(verdict, True, _tone(verdict))
    decided = bool(row["decided"])
    shown = f"{verdict}{'' if decided else '?'} · {row['share']:.0%}"
    return cell(shown, True, _tone(verdict) if decided else "undecided")


def _claim_rows(verdicts: pd.DataFrame, leading) -> tuple[list[str], list[list[dict]]]:
    """One row per claim: `leading(claim, rows by reading, readings)`'s cells, then a verdict per reading."""
    names = list(dict.fromkeys(verdicts["reading"]))
    rows = []
    for claim, group in verdicts.groupby("id", sort=False):
        by = group.set_index("reading")
        rows.append([*leading(claim, by, names), *[verdict_cell(by.loc[name]) for name in names]])
    return names, rows


def answer(inputs: ReportInputs) -> list[Section]:
    """The verdict paragraph, the study's size, the table of contents and each claim's verdicts."""
    names, rows = _claim_rows(
        inputs.tables["claims"], lambda claim, by, names: [cell(claim), cell(f"“{by['paper'].iloc[0]}”")]
    )
    blocks = [
        text(inputs.finding("verdict"), "lead"),
        text("Study: " + inputs.finding("size"), "size"),
        {"kind": "toc"},
        table(
            ["claim", "the paper's words", *names],
            rows,
            "Each claim's verdict under each reading (columns; the claims section gives each test and its "
            "numbers), with the share of 1,000 paired seed resamples in which it holds; a '?' marks a verdict the "
            "seeds do not decide (fewer than 90 % of the resamples agree with it). Readings: "
            + "; ".join(f"{r.name}: {r.description}" for r in readings.from_table(inputs.tables["readings"]))
            + ".",
            "verdicts",
        ),
    ]
    return [section("answer", "Does the paper replicate?", blocks)]


def claims(inputs: ReportInputs) -> list[Section]:
    """Each claim with its test and the numbers behind each reading's verdict."""

    def leading(claim: str, by: pd.DataFrame, names: list[str]) -> list[dict]:
        lines = []
        for name in names:
            row = by.loc[name]
            if name != readings.DEFAULT and row["verdict"] == "not applicable":
                continue
            lines.append(f"{name}: {row['numbers']}")
            if row["verdict"] in ("held", "not held"):
                lines.append(f"  how sure: {row['confidence']}")
                lines.append(f"  margins: {row['margin']}")
                if isinstance(row["flips"], str) and row["flips"]:
                    lines.append(f"  constants: {row['flips']}")
                if isinstance(row["left_out"], str) and row["left_out"]:
                    lines.append(f"  leaving out {row['left_out']} alone changes the verdict")
                if isinstance(row["approximate"], str) and row["approximate"]:
                    lines.append(
                        f"  resampled from the curves' s.e. (no per-seed values published): {row['approximate']}"
                    )
        tests = inputs.tables["claim_tests"]
        own = tests[(tests["id"] == claim) & (tests["reading"] == readings.DEFAULT)]
        significant = own[own["significant"].astype(bool)]
        if len(own):
            lines.append(
                f"paired tests (default reading, {len(own)}): "
                + (
                    "; ".join(
                        f"{r.task}: {r.subject} - {r.other} {r.metric.replace('_', ' ')} {r.mean_diff:+.3g} "
                        f"(p_Holm {r.p_holm:.2g})"
                        for r in significant.itertuples()
                    )
                    or "none significant after Holm"
                )
            )
        return [cell(f"{claim}\n({by['source'].iloc[0]})"), cell(by["test"].iloc[0]), cell("\n".join(lines))]

    names, rows = _claim_rows(inputs.tables["claims"], leading)
    intro = (
        inputs.finding("readings")
        + " Each claim of the paper's section 7 and figure captions is turned into a test on "
        "this study's summary tables; the verdict is computed, never set by hand, and a reading none of whose "
        "stand-ins ran in a claim's experiment is 'not applicable' there. Mean rank: final regret averaged over seeds "
        "per task and method, methods ranked within each task (ties share the average rank), ranks averaged over "
        "tasks; place = 1 + the number of methods with a strictly lower mean rank (compared exactly, as fractions). "
        "How sure: each test is run again on 1,000 resamples of the seeds (with replacement, one draw per task shared "
        "by every method); a verdict is decided when at least 90 % agree with it, else undecided, with the seeds per "
        "task at which resamples of that size from these seeds would decide it. Margins are in the test's own units; "
        "the constants (oscbo.findings.thresholds) are the project's readings of the paper's words, each with the "
        "value at which the verdict would flip."
    )
    return [
        section(
            "claims",
            "Claims, tests and numbers",
            [text(intro), table(["claim", "test", "numbers, per reading", *names], rows, kind="claims")],
        )
    ]


def summary(inputs: ReportInputs) -> list[Section]:
    """What was run, per experiment, as found in the records and checked against the config."""
    final = inputs.tables["final"]
    configured = inputs.config.get("experiments", {})
    rows = []
    for experiment, runs in final.groupby("experiment", sort=True):
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
        blocks += [
            text(
                "Not run: jobs that could not run on this machine, and what the configuration leaves out of "
                "the paper's protocol (its not_run entries). They have no curves in this report."
            ),
            table(
                ["experiment", "tasks", "methods", "seeds", "reason"],
                [[cell(row[c]) for c in columns] for _, row in grouped.iterrows()],
            ),
        ]
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


def figure_sections(inputs: ReportInputs) -> list[Section]:
    """One section per figure section of the manifest that has figures, in the paper's order."""
    built = []
    omitted = inputs.figures.get("omitted", [])
    for id, title, _ in inputs.figures.get("sections", []):
        items = [item for item in inputs.figures["figures"] if item["section"] == id]
        if id == DUAL_SECTION:
            built += dual(inputs, title, items)
        elif items:
            built.append(section(id, title, [figure(item) for item in items]))
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


def dual(inputs: ReportInputs, title: str, items: list[dict[str, Any]]) -> list[Section]:
    """The dual study: what lambda_0 and omega do to OSCBO's lengthscale and regret (not in the paper)."""
    table_ = inputs.tables["dual"]
    if table_.empty and DUAL not in inputs.config.get("experiments", {}):
        return []
    intro = text(
        "OSCBO's dual step (Table S1: ω = 0.001) moves the multiplier λ by a factor of at most e^(±ω) per round, so "
        "over 100 rounds λ stays within λ0 e^(±0.1), and the initial λ0, which the paper does not state, decides how "
        "the FTPL objective (S5) weighs calibration against sharpness, and thereby the lengthscale. The 'dual' "
        "experiment runs OSCBO and OSCBO-L1 at several λ0 and ω beside GP-UCB-MLL on the same tasks, seeds and "
        "initial designs."
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
        "λ0",
        "ω",
        "seeds",
        "final lengthscale",
        "final simple regret",
        "÷ GP-UCB-MLL",
        "final cumulative regret",
        "λ / λ0 over the run",
    ]
    caption = (
        "Mean ± s.e. over the seeds given, after the last oracle call; the lowest regret of each task in bold; "
        "÷ GP-UCB-MLL: the seed-mean final simple regret over GP-UCB-MLL's on the task (– without it)."
    )
    blocks = [
        intro,
        text(inputs.finding("dual"), "lead"),
        *[figure(item) for item in items],
        table(columns, rows, caption),
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
    rows = []
    for _, row in shown.sort_values(["experiment", "task", "rank_simple", "label"]).iterrows():
        under = "" if row["reading"] == readings.DEFAULT else f"\n(ranked under {row['reading']})"
        rows.append(
            [
                cell(row["experiment"]),
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
        "experiment",
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
        "λ0 = 0.433, the task material5-max) is ranked among the default methods in place of what it replaces. "
        "†: f* unknown (Lunar Lander); its regret is against the best value seen on it in the study, the same order "
        "as the best value found. Regret vs. reachable max: for a tabular task, what a dense search of its oracle "
        "reaches minus the best value found (negative: beyond the search); f* is a table value the interpolating "
        "oracle reaches only at and very near its design, so this tells 'no method gets close' from 'no method can'."
    )
    blocks = [text(intro), table(columns, rows)]
    tasks = inputs.tables["tasks"].dropna(subset=["reachable_value"])
    if len(tasks):
        blocks.append(
            table(
                ["task", "f* (best table value)", "reachable maximum (dense search)"],
                [
                    [cell(t.task), cell(f"{t.optimal_value:.6g}"), cell(f"{t.reachable_value:.6g}")]
                    for t in tasks.itertuples()
                ],
                "A dense search of the oracle: the best of 65,536 Sobol points polished by L-BFGS-B from the 16 best.",
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
    rows = [
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
        for r in testable.itertuples()
    ]
    notes = [
        text(intro),
        table(["experiment", "task", "metric", "A", "B", "paired seeds", "mean A − B", "95% CI", "p", "Holm p"], rows),
    ]
    if len(ours) > len(testable):
        notes.append(
            text(
                f"{len(ours) - len(testable)} comparisons with too few seeds (at most 5 non-zero "
                "differences) are left out."
            )
        )
    return [section("statistics", "Paired comparisons", notes)]


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
    return [section("protocol", "Protocol", [text(intro), table(columns, rows)])]


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
        if unpinned:
            blocks.append(
                text(
                    f"{unpinned} of {len(runs)} runs did not run on the pinned numerical code path "
                    "(below): their numbers reproduce bit for bit on the same kind of machine only.",
                    "warning",
                )
            )
    for column, title in (
        ("device", "device"),
        ("threads", "threads"),
        ("code_path", "numerical code path"),
        ("mkl_reproducibility", "MKL mode (runs before the code path was pinned)"),
        ("hardware", "machine"),
    ):
        if column in runs:
            counts = runs[column].astype(str).value_counts()
            blocks.append(table([title, "runs"], [[cell(value), cell(n)] for value, n in counts.items()]))
    for versions, n in runs["versions"].value_counts().items():
        blocks.append(
            table(["package", f"version ({n} runs)"], [[cell(k), cell(v)] for k, v in json.loads(versions).items()])
        )
    if len(runs):
        blocks.append(
            facts(
                [
                    ("first run started", runs["started"].min()),
                    ("last run finished", runs["finished"].max()),
                    ("summary tables", inputs.summary_dir),
                ]
            )
        )
    resolved = yaml.safe_dump(json.loads(json.dumps(inputs.config, default=str)), sort_keys=False)
    blocks += [text("Resolved configuration:"), pre(resolved)]
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
