"""Ranks of final regret within each task, their mean over tasks (paper Fig. 3), and how far each
method's trajectory lies from GP-UCB-MLL's, under each reading (:mod:`oscbo.analysis.readings`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.analysis.summaries import GROUP_KEYS, TASK_KEYS
from oscbo.paper import REGRET_METRICS, TRACKING_REFERENCE

#: The final-regret metrics that are ranked and compared pairwise.
FINAL_METRICS = list(REGRET_METRICS)

#: The ``curves`` metrics compared in ``tracking``, each on a log10 scale: regret, the sharpness of
#: the intervals (their running mean half-width) and the lengthscale (paper 7.2).
TRACKED_METRICS = ["simple_regret", "mean_halfwidth", "coverage", "lengthscale"]
#: The tracked metrics compared by their difference, not on a log scale (a share).
LINEAR_METRICS = {"coverage"}
#: Seed-mean values below this are raised to it before the log10 in ``tracking``: a run that
#: hits the optimum exactly (zero regret) would otherwise be infinitely far from any other.
TRACKING_FLOOR = 1e-8


def ranks_table(final: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. of final regret (and best value) per method, and its rank within
    (experiment, task).

    Rank 1 is the lowest mean regret; tied means share the average of their ranks.
    ``{metric}_normalised`` is the mean divided by the largest mean of the task's methods (so
    the worst method of a task is at 1), 0 when every method of the task has zero regret.
    ``f_star_known`` is False for a task whose regret is against the best value seen.
    """
    grouped = final.groupby(GROUP_KEYS, sort=True)
    ranks = grouped.size().rename("n").to_frame()
    ranks["f_star_known"] = grouped["f_star_known"].all()
    for metric in [*FINAL_METRICS, "best_f", "reachable_regret"]:
        values = grouped[metric]
        ranks[f"{metric}_mean"] = values.mean()
        ranks[f"{metric}_se"] = values.std() / np.sqrt(values.count())  # NaN for one seed
    ranks = ranks.reset_index()
    by_task = ranks.groupby(TASK_KEYS)
    ranks["rank_simple"] = by_task["simple_regret_mean"].rank(method="average")
    ranks["rank_cumulative"] = by_task["cumulative_regret_mean"].rank(method="average")
    for metric in FINAL_METRICS:
        largest = by_task[f"{metric}_mean"].transform("max")
        ranks[f"{metric}_normalised"] = np.where(largest > 0, ranks[f"{metric}_mean"] / largest, 0.0)
    return ranks


def reading_ranks(final: pd.DataFrame, readings: Sequence[readings_.Reading]) -> pd.DataFrame:
    """:func:`ranks_table` under each reading (:func:`oscbo.analysis.readings.apply`), one after the other,
    with the columns ``reading``, ``label`` (the method label that ran) and ``task_run``."""
    frames = []
    for reading in readings:
        applied = readings_.apply(final, reading, readings)
        ran = applied.drop_duplicates(GROUP_KEYS).set_index(GROUP_KEYS)[["label", "task_run"]]
        frames.append(ranks_table(applied).join(ran, on=GROUP_KEYS).assign(reading=reading.name))
    ranks = pd.concat(frames, ignore_index=True)
    return ranks[
        ["reading", *GROUP_KEYS, "label", "task_run"]
        + [c for c in ranks.columns if c not in ("reading", *GROUP_KEYS, "label", "task_run")]
    ]


def per_reading(ranks: pd.DataFrame, summarise: Any) -> pd.DataFrame:
    """``summarise`` (e.g. :func:`mean_ranks_table`) of each reading's ``ranks``, with its ``reading``."""
    frames = [summarise(rows).assign(reading=reading) for reading, rows in ranks.groupby("reading", sort=False)]
    table = pd.concat(frames, ignore_index=True)
    return table[["reading"] + [c for c in table.columns if c != "reading"]]


#: ``ranks`` column of each metric's per-task rank.
RANK_COLUMNS = {"simple_regret": "rank_simple", "cumulative_regret": "rank_cumulative"}
MEAN_RANK_COLUMNS = ["experiment", "metric", "method", "n_tasks", "n_methods", "rank_mean", "rank_se"]
MEAN_RANK_COLUMNS += ["place", "normalised_mean", "normalised_se"]


def mean_ranks_table(ranks: pd.DataFrame) -> pd.DataFrame:
    """Per-task ranks and normalised regret averaged over the tasks of each experiment.

    As in the paper's Fig. 3: regret is averaged over seeds per task and method, the methods
    are ranked within each task (``ranks``), and the ranks are averaged over tasks. A method
    missing from a task is averaged over the tasks it ran on (``n_tasks``).

    Columns: ``n_methods`` (methods in the experiment), ``rank_mean``/``rank_se`` (mean and
    s.e. over tasks, NaN s.e. for one task), ``place`` (1 + the number of methods with a
    strictly lower mean rank, so tied methods share the better place), and
    ``normalised_mean``/``normalised_se`` of ``{metric}_normalised`` over tasks.
    """
    frames = []
    for metric, rank_column in RANK_COLUMNS.items():
        grouped = ranks.groupby(["experiment", "method"], sort=True)
        table = grouped.size().rename("n_tasks").to_frame()
        table["rank_mean"] = grouped[rank_column].mean()
        table["rank_se"] = grouped[rank_column].std() / np.sqrt(table["n_tasks"])
        table["normalised_mean"] = grouped[f"{metric}_normalised"].mean()
        table["normalised_se"] = grouped[f"{metric}_normalised"].std() / np.sqrt(table["n_tasks"])
        table = table.reset_index()
        by_experiment = table.groupby("experiment")
        table["n_methods"] = by_experiment["method"].transform("size")
        table["place"] = by_experiment["rank_mean"].rank(method="min").astype(int)
        table["metric"] = metric
        frames.append(table)
    return pd.concat(frames, ignore_index=True)[MEAN_RANK_COLUMNS]


TRACKING_COLUMNS = ["reading", "experiment", "metric", "method", "reference", "n_tasks", "gap_mean", "gap_se", "place"]


def tracking_table(curves: pd.DataFrame) -> pd.DataFrame:
    """How closely each method's seed-mean trajectory follows :data:`TRACKING_REFERENCE`'s.

    Per task, the gap is the mean over BO rounds (those where both methods have a value) of
    ``|log10 m(t) - log10 m_ref(t)|``, m the seed-mean of the metric (values below
    :data:`TRACKING_FLOOR` raised to it): 0.3 means the curves are a factor of 2 apart on
    average. Per (experiment, metric, method) the table holds the mean and s.e. of the gap over
    tasks and ``place`` (1 = closest to the reference). Experiments without the reference, and
    methods without the metric (no lengthscale), have no rows.
    """
    gaps = tracking_gaps(curves)
    if gaps.empty:
        return pd.DataFrame(columns=[c for c in TRACKING_COLUMNS if c != "reading"])
    grouped = gaps.groupby(["experiment", "metric", "method"], sort=True)["gap"]
    table = grouped.agg(n_tasks="count", gap_mean="mean", gap_se="std").reset_index()
    table["gap_se"] /= np.sqrt(table["n_tasks"])
    table["reference"] = TRACKING_REFERENCE
    table["place"] = table.groupby(["experiment", "metric"])["gap_mean"].rank(method="min").astype(int)
    return table[[c for c in TRACKING_COLUMNS if c != "reading"]]


def tracking_gaps(curves: pd.DataFrame) -> pd.DataFrame:
    """The per-task gaps that :func:`tracking_table` averages: one row per (experiment, task,
    metric, method) with ``gap``, the mean over BO rounds of ``|log10 m(t) - log10 m_ref(t)|``
    (``|m(t) - m_ref(t)|`` for a share, :data:`LINEAR_METRICS`)."""
    data = curves[(curves["phase"] == "bo") & curves["metric"].isin(TRACKED_METRICS)]
    gaps = []
    for (experiment, task, metric), panel in data.groupby(["experiment", "task", "metric"], sort=True):
        wide = panel.pivot(index="step", columns="method", values="mean")
        if metric not in LINEAR_METRICS:
            wide = np.log10(wide.clip(lower=TRACKING_FLOOR))
        if TRACKING_REFERENCE not in wide:
            continue
        distance = wide.drop(columns=TRACKING_REFERENCE).sub(wide[TRACKING_REFERENCE], axis=0).abs()
        for method, gap in distance.mean().dropna().items():  # mean skips rounds missing on either side
            gaps.append({"experiment": experiment, "task": task, "metric": metric, "method": method, "gap": gap})
    return pd.DataFrame(gaps, columns=["experiment", "task", "metric", "method", "gap"])
