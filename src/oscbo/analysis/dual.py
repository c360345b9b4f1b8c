"""The dual study (not in the paper): what OSCBO's lambda_0 and omega do, in two tables and a paragraph.

:func:`dual_table` and :func:`dual_ranks_table` are summary tables (:mod:`oscbo.analysis.tables`);
every number of :func:`dual_reading`, the paragraph the report shows, comes from them and from
``mean_ranks`` (the findings, :mod:`oscbo.analysis.findings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.analysis.claims import (
    GP_UCB_MLL,
    MATCH_TOLERANCE,
    OSCBO,
    TOLERANCES_TEXT,
    TRACKING_TOLERANCE,
    NotEvaluated,
    Tables,
)
from oscbo.analysis.ranks import (
    DUAL,
    FINAL_METRICS,
    MAIN,
    TRACKING_REFERENCE,
    mean_ranks_table,
    ranks_table,
    tracking_gaps,
)
from oscbo.analysis.summaries import GROUP_KEYS
from oscbo.settings import Settings

#: The run settings the ``dual`` table reads from each run's sidecar.
SETTINGS_COLUMNS = [
    "experiment",
    "method",
    "method_name",
    "lambda0",
    "omega",
    "calibration_power",
    "mll_equivalent_lambda",
]


def run_settings(sidecars: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per (experiment, method label): the registry name and the resolved settings that
    the dual study varies, as the run's sidecar recorded them. Sidecars without settings
    (written by other tools) contribute no row."""
    rows = {}
    for meta in sidecars:
        settings = meta.get("settings")
        if not isinstance(settings, dict) or "experiment" not in meta:
            continue
        rows[meta["experiment"], meta["method"]] = {
            "experiment": meta["experiment"],
            "method": meta["method"],
            "method_name": meta.get("method_name", meta["method"]),
            "lambda0": settings["lambda0"],
            "omega": settings["omega"],
            "calibration_power": settings["calibration_power"],
            "mll_equivalent_lambda": Settings(
                beta=settings["beta"], noise_var=settings["noise_var"]
            ).mll_equivalent_lambda,
        }
    return pd.DataFrame(list(rows.values()), columns=SETTINGS_COLUMNS)


DUAL_COLUMNS = (
    SETTINGS_COLUMNS[:2]
    + ["task"]
    + SETTINGS_COLUMNS[2:]
    + [
        "n",
        "simple_regret_mean",
        "simple_regret_se",
        "cumulative_regret_mean",
        "cumulative_regret_se",
        "rank_simple",
        "rank_cumulative",
        "lengthscale_mean",
        "lengthscale_se",
        "lambda_low",
        "lambda_high",
        "simple_regret_ratio",
        "simple_regret_gap",
        "mean_halfwidth_gap",
        "lengthscale_gap",
    ]
)


def dual_table(
    steps: pd.DataFrame, final: pd.DataFrame, ranks: pd.DataFrame, curves: pd.DataFrame, settings: pd.DataFrame
) -> pd.DataFrame:
    """What lambda_0 and omega do, per (task, method) of the :data:`DUAL` experiment.

    Columns: the run settings of :func:`run_settings` (``lambda0``, ``omega`` and
    ``calibration_power`` NaN for a method that records no multiplier, such as the GP-UCB-MLL
    reference); ``n`` seeds; final regret mean, s.e. and rank within the task (from ``ranks``);
    ``lengthscale_mean``/``_se``, the final lengthscale over seeds; ``lambda_low``/``_high``, the
    smallest and largest lambda / lambda_0 in any round of any seed; ``simple_regret_ratio``,
    the seed-mean final simple regret over GP-UCB-MLL's on the task; ``simple_regret_gap``,
    ``mean_halfwidth_gap`` and ``lengthscale_gap``, the task's :func:`tracking_gaps` to GP-UCB-MLL
    (decades). The reference
    columns are NaN when the experiment has no GP-UCB-MLL.
    """
    rows = ranks[ranks["experiment"] == DUAL]
    if rows.empty:
        return pd.DataFrame(columns=DUAL_COLUMNS)
    columns = ["n", "simple_regret_mean", "simple_regret_se", "cumulative_regret_mean", "cumulative_regret_se"]
    table = rows[GROUP_KEYS + columns + ["rank_simple", "rank_cumulative"]].merge(
        settings, on=["experiment", "method"], how="left"
    )
    lengthscale = final[final["experiment"] == DUAL].groupby(GROUP_KEYS)["lengthscale"]
    spread = pd.DataFrame(
        {"lengthscale_mean": lengthscale.mean(), "lengthscale_se": lengthscale.std() / np.sqrt(lengthscale.count())}
    )
    table = table.merge(spread, left_on=GROUP_KEYS, right_index=True, how="left")
    multiplier = steps[steps["experiment"] == DUAL].groupby(GROUP_KEYS)["lambda"].agg(["min", "max"])
    table = table.merge(multiplier, left_on=GROUP_KEYS, right_index=True, how="left")
    has_multiplier = table["max"].notna()
    for column in ["lambda0", "omega", "calibration_power"]:
        table[column] = table[column].where(has_multiplier)
    table["lambda_low"] = table["min"] / table["lambda0"]
    table["lambda_high"] = table["max"] / table["lambda0"]
    reference = table[table["method"] == TRACKING_REFERENCE].set_index("task")["simple_regret_mean"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["simple_regret_ratio"] = table["simple_regret_mean"] / table["task"].map(reference)
    gaps = tracking_gaps(curves[curves["experiment"] == DUAL])
    gaps = gaps.pivot_table(index=GROUP_KEYS, columns="metric", values="gap").add_suffix("_gap")
    table = table.merge(gaps, left_on=GROUP_KEYS, right_index=True, how="left")
    return table.reindex(columns=DUAL_COLUMNS).sort_values(GROUP_KEYS, ignore_index=True)


DUAL_RANK_COLUMNS = [
    "metric",
    "method",
    "replaces",
    "lambda0",
    "omega",
    "n_tasks",
    "n_seeds",
    "n_methods",
    "rank_mean",
    "rank_se",
    "place",
    "replaced_rank_mean",
    "replaced_place",
]


def dual_ranks_table(final: pd.DataFrame, dual: pd.DataFrame) -> pd.DataFrame:
    """Where each multiplier variant of :data:`DUAL` would place among :data:`MAIN`'s methods.

    A variant replaces the method it varies (its registry name, e.g. ``oscbo``) in ``main`` on
    every task where the two ran with the same initial design size and budget, on the seeds both
    ran: the same seed gives the same initial design, so the variant's runs are what ``main``
    would have recorded with its settings. On those tasks and seeds (every method of ``main``
    restricted to them) the methods are ranked and the ranks averaged as in
    :func:`mean_ranks_table`; ``n_seeds`` is the smallest number of shared seeds of a task.
    ``replaced_rank_mean`` and ``replaced_place`` are the replaced method's own, over the same
    tasks and seeds. No rows without ``main`` or without such a task.

    Args:
        final: the ``final`` table as the default reading has it (``main`` without stand-ins).
        dual: :func:`dual_table`.
    """
    main = final[final["experiment"] == MAIN]
    variants = dual.dropna(subset=["lambda0"]).drop_duplicates("method")
    frames = []
    for variant in variants.itertuples():
        replaced = variant.method_name
        runs = final[(final["experiment"] == DUAL) & (final["method"] == variant.method)]
        own = main[main["method"] == replaced]
        shared = {}
        for task in sorted(set(runs["task"]) & set(own["task"])):
            mine, theirs = runs[runs["task"] == task], own[own["task"] == task]
            if _design(mine) == _design(theirs):
                seeds = sorted(set(mine["seed"]) & set(theirs["seed"]))
                if seeds:
                    shared[task] = seeds
        if not shared:
            continue
        on_shared = pd.concat(
            [
                frame[(frame["task"] == task) & frame["seed"].isin(seeds)]
                for task, seeds in shared.items()
                for frame in (main, runs)
            ],
            ignore_index=True,
        )
        in_main = on_shared[on_shared["experiment"] == MAIN]
        swapped = pd.concat(
            [
                in_main[in_main["method"] != replaced],
                on_shared[on_shared["experiment"] == DUAL].assign(experiment=MAIN),
            ],
            ignore_index=True,
        )
        placed = mean_ranks_table(ranks_table(swapped)).set_index(["metric", "method"])
        before = mean_ranks_table(ranks_table(in_main)).set_index(["metric", "method"])
        for metric in FINAL_METRICS:
            row = placed.loc[(metric, variant.method)]
            frames.append(
                {
                    "metric": metric,
                    "method": variant.method,
                    "replaces": replaced,
                    "lambda0": variant.lambda0,
                    "omega": variant.omega,
                    "n_tasks": row["n_tasks"],
                    "n_seeds": min(map(len, shared.values())),
                    "n_methods": row["n_methods"],
                    "rank_mean": row["rank_mean"],
                    "rank_se": row["rank_se"],
                    "place": row["place"],
                    "replaced_rank_mean": before.loc[(metric, replaced), "rank_mean"],
                    "replaced_place": before.loc[(metric, replaced), "place"],
                }
            )
    return pd.DataFrame(frames, columns=DUAL_RANK_COLUMNS)


def _design(runs: pd.DataFrame) -> tuple:
    """What makes two methods' runs of a seed on a task comparable: initial design size and budget."""
    return tuple(sorted(set(runs["n_init"]))), tuple(sorted(set(runs["bo_rounds"])))


#: The summary tables :func:`dual_reading` reads.
TABLES = ["dual", "dual_ranks", "mean_ranks", "tracking"]
#: The paper's dual step size (Table S1): the dual study reads lambda_0 at this omega.
PAPER_OMEGA = 0.001


def dual_reading(tables: Tables) -> str:
    """A paragraph on what lambda_0 does, every number drawn from the ``dual`` tables.

    It says how far the multiplier moved, which lambda_0 makes OSCBO (p = 2) track GP-UCB-MLL
    (by the test of claim ``main-tracks-mll``: every trajectory gap within
    :data:`TRACKING_TOLERANCE`), how omega changes final regret,
    and how the place of OSCBO (and OSCBO-L1) among the methods of 'main' moves with lambda_0
    (``dual_ranks``; without it, the ranking within the dual experiment). lambda_0 is read at
    the paper's omega, :data:`PAPER_OMEGA` (the smallest omega run, when that one was not).

    Raises:
        NotEvaluated: the dual experiment has no OSCBO run, or no GP-UCB-MLL run to compare with.
    """
    tables = readings_.select(tables)
    dual = tables["dual"]
    variants = dual.dropna(subset=["lambda0"])
    oscbo = variants[variants["method_name"] == OSCBO]
    if oscbo.empty:
        raise NotEvaluated(f"the '{DUAL}' experiment has no OSCBO runs")
    reference = dual[dual["method"] == GP_UCB_MLL]
    if reference.empty:
        raise NotEvaluated(f"the '{DUAL}' experiment has no {GP_UCB_MLL} runs to compare with")
    omega = PAPER_OMEGA if (oscbo["omega"] == PAPER_OMEGA).any() else float(oscbo["omega"].min())
    at_omega = oscbo[oscbo["omega"] == omega]
    return " ".join(
        [
            _multiplier_range(variants),
            *_tracking_by_lambda0(at_omega, reference, omega),
            *_omega_effect(oscbo, omega),
            _ranking_by_lambda0(tables, omega),
        ]
    )


def _multiplier_range(variants: pd.DataFrame) -> str:
    ranges = variants.groupby("omega").agg(low=("lambda_low", "min"), high=("lambda_high", "max"))
    parts = [f"λ0 × [{row.low:.3f}, {row.high:.3f}] at ω = {omega:g}" for omega, row in ranges.iterrows()]
    return f"In every BO round of every run, the multiplier λ stayed within {' and '.join(parts)}."


def _tracking_by_lambda0(at_omega: pd.DataFrame, reference: pd.DataFrame, omega: float) -> list[str]:
    by_lambda0 = at_omega.groupby("lambda0").agg(
        lengthscale_gap=("lengthscale_gap", "mean"),
        regret_gap=("simple_regret_gap", "mean"),
        halfwidth_gap=("mean_halfwidth_gap", "mean"),
        tasks=("task", "nunique"),
    )
    ref = reference.set_index("task")["simple_regret_mean"]
    # as claim main-matches-mll: at most MATCH_TOLERANCE above GP-UCB-MLL (0 matches 0)
    matched = at_omega["simple_regret_mean"] <= (1 + MATCH_TOLERANCE) * at_omega["task"].map(ref)
    by_lambda0["matched"] = matched.groupby(at_omega["lambda0"]).sum()
    ratio = at_omega.pivot_table(index="lambda0", columns="task", values="simple_regret_ratio")
    shown = "; ".join(
        f"at λ0 = {lambda0:g}, {row.lengthscale_gap:.3f} and {row.regret_gap:.3f} decades, and a final simple regret "
        f"{', '.join(f'{value:.3g}×' if np.isfinite(value) else '–' for value in ratio.loc[lambda0])} GP-UCB-MLL's "
        f"(within {1 + MATCH_TOLERANCE:g}× on {int(row.matched)} of {int(row.tasks)} tasks)"
        for lambda0, row in by_lambda0.iterrows()
    )
    mll_lambda = float(at_omega["mll_equivalent_lambda"].iloc[0])
    closest = by_lambda0["lengthscale_gap"].idxmin()
    sentences = [
        f"Beside GP-UCB-MLL on the same seeds and initial designs, OSCBO (ω = {omega:g}) has seed-mean lengthscale "
        "and simple-regret curves this far from GP-UCB-MLL's (per task the mean over BO rounds of |log10 of their "
        f"ratio|, averaged over tasks; tasks in the order {', '.join(ratio.columns)}): {shown}.",
        f"The lengthscale closest to GP-UCB-MLL's comes with λ0 = {closest:g}"
        + (
            f", the MLL-equivalent value β / log(1 + σ⁻²) = {mll_lambda:.3f}."
            if abs(closest - mll_lambda) < 5e-3
            else f"; the MLL-equivalent value is β / log(1 + σ⁻²) = {mll_lambda:.3f}."
        ),
    ]
    tolerance = TRACKING_TOLERANCE
    tracks = (
        (by_lambda0["lengthscale_gap"] <= tolerance["lengthscale"])
        & (by_lambda0["regret_gap"] <= tolerance["simple_regret"])
        & (by_lambda0["halfwidth_gap"] <= tolerance["mean_halfwidth"])
    )
    held = [f"{value:g}" for value in by_lambda0.index[tracks]]
    missed = [f"{value:g}" for value in by_lambda0.index[~tracks]]
    sentences.append(
        f"By the test of claim main-tracks-mll (gaps within {TOLERANCES_TEXT} decades; the half-width gaps here: "
        + ", ".join(f"{row.halfwidth_gap:.3f} at λ0 = {lambda0:g}" for lambda0, row in by_lambda0.iterrows())
        + "), the paper's claim that OSCBO tracks GP-UCB-MLL "
        + (f"holds at λ0 = {', '.join(held)}" if held else "holds at none of these λ0")
        + (f" and not at λ0 = {', '.join(missed)}." if missed and held else ".")
    )
    return sentences


def _omega_effect(oscbo: pd.DataFrame, omega: float) -> list[str]:
    """How much each other omega changes OSCBO's final simple regret, per (task, lambda_0)."""
    wide = oscbo.pivot_table(index=["task", "lambda0"], columns="omega", values="simple_regret_mean")
    parts = []
    for other in [column for column in wide.columns if column != omega]:
        both = wide[[omega, other]].dropna()
        both = both[both[omega] > 0]
        if len(both):
            factor = both[other] / both[omega]
            parts.append(
                f"by a factor of {factor.min():.3g} to {factor.max():.3g} when ω goes from {omega:g} to "
                f"{other:g} (over {len(factor)} task and λ0 pair{'s' * (len(factor) != 1)})"
            )
    return [f"OSCBO's final simple regret changes {' and '.join(parts)}."] if parts else []


def _ranking_by_lambda0(tables: Tables, omega: float) -> str:
    dual_ranks = tables["dual_ranks"]
    ranked = dual_ranks[(dual_ranks["metric"] == "simple_regret") & (dual_ranks["omega"] == omega)]
    if ranked.empty:
        mean_ranks = tables["mean_ranks"]
        within = mean_ranks[(mean_ranks["experiment"] == DUAL) & (mean_ranks["metric"] == "simple_regret")]
        within = within.sort_values(["rank_mean", "method"])
        shown = ", ".join(f"{row.method} {row.rank_mean:.2f}" for row in within.itertuples())
        return (
            f"There is no '{MAIN}' experiment with runs on the same tasks, initial design and budget, and a seed in "
            f"common, to rank the variants in; within '{DUAL}', the mean final simple-regret ranks over tasks are: "
            f"{shown}."
        )
    parts = []
    for replaced, rows in ranked.groupby("replaces", sort=True):
        rows = rows.sort_values("lambda0")
        first = rows.iloc[0]
        places = ", ".join(
            f"{int(row.place)} at λ0 = {row.lambda0:g} (mean rank {row.rank_mean:.2f})" for row in rows.itertuples()
        )
        spread = int(rows["place"].max() - rows["place"].min())
        parts.append(
            f"{replaced} places {int(first.replaced_place)} of {int(first.n_methods)} as run in '{MAIN}' "
            f"(mean rank {first.replaced_rank_mean:.2f} over the {int(first.n_tasks)} tasks and {int(first.n_seeds)} "
            f"seed{'s' * bool(first.n_seeds != 1)} both ran), and would "
            f"place {places} with its '{DUAL}' runs instead (ω = {omega:g}): λ0 moves it by {spread} "
            f"place{'s' * (spread != 1)}"
        )
    return f"Ranked by mean final simple-regret rank among the methods of '{MAIN}', " + "; ".join(parts) + "."
