"""The report's final-regret section, per task and method, and OSCBO's paired comparisons."""

from __future__ import annotations

import pandas as pd

from oscbo import imports
from oscbo.analysis import readings, statistics
from oscbo.paper import (
    CALIBRATION_PAIR,
    experiment_order,
    shown_name,
    task_name,
)
from oscbo.report.blocks import (
    Section,
    cell,
    details,
    mean_se,
    number,
    section,
    table,
    text,
)
from oscbo.report.sections.inputs import ReportInputs

#: The tabular tasks' dense search for the reachable maximum (:mod:`oscbo.tasks.tabular`, read from its source).
SEARCH_POINTS = imports.constant("oscbo.tasks.tabular", "SEARCH_POINTS")
SEARCH_STARTS = imports.constant("oscbo.tasks.tabular", "SEARCH_STARTS")


#: The methods whose comparisons the statistics section lists.
SUBJECTS = CALIBRATION_PAIR


def stand_in_names(inputs: ReportInputs) -> str:
    """The readings' stand-ins (methods and tasks run in place of a default's), as a list in words."""
    found = readings.from_table(inputs.tables["readings"])
    names = dict.fromkeys(name for reading in found for name in (*reading.methods, *reading.tasks))
    return ", ".join(names) or "none in this study"


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
                cell(task_name(row["task_run"])),
                cell(shown_name(row["label"]) + under),
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
        "(1 = lowest; ties share the average rank); the best of each task is in bold. A reading's stand-in "
        f"({stand_in_names(inputs)}) is ranked among the default methods in place of what it replaces. "
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
                        f"A dense search of the oracle: the best of {SEARCH_POINTS:,} Sobol points polished by "
                        f"L-BFGS-B from the {SEARCH_STARTS} best.",
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
        f"below 2 / 2^n, so a row needs at least {statistics.MIN_TESTABLE_PAIRS} seeds to reach {statistics.ALPHA}; "
        "the 95 % bootstrap interval of "
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
                f"{len(ours) - len(testable)} comparisons with too few seeds (at most "
                f"{statistics.MIN_TESTABLE_PAIRS - 1} non-zero differences) are left out."
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
            cell(task_name(r.task)),
            cell(r.metric.replace("_", " ")),
            cell(shown_name(r.method_a)),
            cell(shown_name(r.method_b)),
            cell(r.n),
            cell(number(r.mean_diff)),
            cell(f"[{number(r.ci_low)}, {number(r.ci_high)}]"),
            cell(number(r.p_value)),
            cell(number(r.p_holm), bool(r.significant)),
        ]
        for r in order.itertuples()
    ]
