"""The dual study (not in the paper): what OSCBO's lambda_0 and omega do, in two summary tables.

:func:`dual_table` and :func:`dual_ranks_table` are summary tables (:mod:`oscbo.analysis.tables`);
the paragraph the report shows is read from them by the findings stage (:mod:`oscbo.findings.dual`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from oscbo.analysis.ranks import FINAL_METRICS, mean_ranks_table, ranks_table, tracking_gaps
from oscbo.analysis.summaries import GROUP_KEYS
from oscbo.paper import DUAL, MAIN, TRACKING_REFERENCE
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
        "coverage_gap",
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
