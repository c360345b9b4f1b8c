"""Tidy summaries of finished run records: per-step diagnostics, curves, finals, ranks, tests.

:func:`aggregate` reads the records of a study (see :mod:`oscbo.records`) and writes the
Parquet tables below; figures and the report only read them (:func:`load`), so every number they
show is computed here, once.

==================  =========================================================================
table               one row per
==================  =========================================================================
``steps``           (experiment, task, method, seed, step): the record's values plus the
                    running diagnostics over BO rounds (coverage p^_t of eq. 3, mean
                    half-width, V_t^+, cumulative sharpness, coverage gap |p^_t - 0.9|, the
                    mean f of the queries so far), lambda relative to the run's first
                    multiplier lambda_0, and cumulative wall-clock;
                    for a task with unknown f* (Lunar Lander) the regret is taken against
                    the best value seen on it in the whole study (``f_star_known`` False)
``curves``          (experiment, task, method, step, metric): mean, s.e. and count over seeds
``final``           (experiment, task, method, seed): the values after the last oracle call
``ranks``           (reading, experiment, task, method): mean and s.e. of final regret over
                    seeds, the rank of that mean among the methods of the task (1 = lowest
                    regret) and the mean divided by the task's largest mean over methods
                    (normalised), under each reading (:mod:`oscbo.readings`: ``method`` and
                    ``task`` as the reading names them, ``label`` and ``task_run`` as run)
``mean_ranks``      (reading, experiment, metric, method): the per-task rank and normalised
                    regret of ``ranks`` averaged over tasks, with their s.e. over tasks
                    (paper Fig. 3)
``tracking``        (reading, experiment, metric, method): how far a method's seed-mean
                    trajectory lies from GP-UCB-MLL's over BO rounds, averaged over tasks
``readings``        (reading, stand-in): the readings of the study and their stand-ins
``lengthscales``    (experiment, task, method, dimension): the final lengthscale of each
                    dimension (one row, dimension 0, for an isotropic kernel) over seeds, as the
                    mean and s.e. of log10 (the ARD figure)
``provenance``      (experiment, task, method, seed): what each run's sidecar says it ran on:
                    git commit, package versions, device, machine, threads, MKL mode, start
                    and end
``tests``           (experiment, task, metric, method_a, method_b): paired comparison of final
                    regret over common seeds (Wilcoxon signed-rank with the smallest p the
                    seeds allow and Holm's adjustment, bootstrap CI; :mod:`oscbo.statistics`)
``tasks``           (task): dimension, f*, and a known-truth task's true lengthscale
``dual``            (experiment, task, method) of the ``dual`` experiment: the run settings
                    lambda_0, omega and p (from the sidecars), final regret and lengthscale,
                    the range of lambda / lambda_0, and the distance to GP-UCB-MLL
``dual_ranks``      (metric, method) for each multiplier variant of ``dual``: the place it
                    would take among ``main``'s methods in place of the method it varies
``not_run``         (experiment, task, method): jobs that could not run, and why
``failed``          (experiment, task, method, seed): runs that ended at an objective fault
                    (the task raised, or returned NaN or inf), the oracle call and why; they
                    are in no other table, so no curve averages a NaN
==================  =========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from oscbo import readings as readings_
from oscbo import records
from oscbo.config import Settings
from oscbo.statistics import tests_table

KEYS = ["experiment", "task", "method", "seed"]
GROUP_KEYS = ["experiment", "task", "method"]
TASK_KEYS = ["experiment", "task"]

#: The per-step columns carried over from a record unchanged.
RECORD_STEP_COLUMNS = (
    records.STEP_COLUMNS
    + ["f", "best_f", "simple_regret", "cumulative_regret"]
    + [column for column in records.DIAGNOSTIC_COLUMNS if column not in ("mu", "sigma")]
)

#: The metrics averaged over seeds in ``curves``.
CURVE_METRICS = [
    "simple_regret",
    "cumulative_regret",
    "best_f",
    "average_f",
    "lengthscale",
    "coverage",
    "mean_halfwidth",
    "violation_positive",
    "cumulative_sharpness",
    "wallclock",
    "lambda",
    "lambda_relative",
    "coverage_gap",
]

#: The final-regret metrics that are ranked and compared pairwise.
FINAL_METRICS = ["simple_regret", "cumulative_regret"]

#: The coverage the intervals aim at, 1 - delta with delta = 0.1 (Table S1); the paper's
#: sharpness-calibration plane (Fig. 1 C, S3) measures the gap |p^_t - 0.9|.
TARGET_COVERAGE = 0.9

#: The method every other method's trajectory is compared with in ``tracking`` (paper 7.2:
#: "OSCBO closely tracks GP-UCB-MLL in regret [...] and lengthscale trajectories").
TRACKING_REFERENCE = "gp-ucb-mll"
#: The ``curves`` metrics compared in ``tracking``, each on a log10 scale: regret, the sharpness of
#: the intervals (their running mean half-width) and the lengthscale (paper 7.2).
TRACKED_METRICS = ["simple_regret", "mean_halfwidth", "lengthscale"]
#: Seed-mean values below this are raised to it before the log10 in ``tracking``: a run that
#: hits the optimum exactly (zero regret) would otherwise be infinitely far from any other.
TRACKING_FLOOR = 1e-8

#: The experiment that varies OSCBO's lambda_0 and omega (not in the paper), and the experiment whose
#: ranking of methods its variants are placed in.
DUAL = "dual"
MAIN = "main"

TABLES = [
    "steps", "curves", "final", "ranks", "mean_ranks", "tracking", "tests", "tasks", "dual", "dual_ranks",
    "readings", "lengthscales", "provenance", "not_run", "failed",
]
NOT_RUN_COLUMNS = ["experiment", "task", "method", "seeds", "reason"]
FAILED_COLUMNS = ["experiment", "task", "method", "seed", "step", "reason"]
#: Record columns that must be finite on every row of a finished run.
FINITE_COLUMNS = ["y", "f", "best_f"]



def table_path(out_dir: str | Path, name: str) -> Path:
    """``OUT_DIR/{name}.parquet``, the file of summary table ``name``."""
    return Path(out_dir) / f"{name}.parquet"


def aggregate(
    record_paths: Sequence[str | Path],
    out_dir: str | Path,
    not_run: Sequence[dict[str, Any]] = (),
    failed: Sequence[dict[str, Any]] = (),
    readings: Sequence[readings_.Reading] = (),
) -> dict[str, Path]:
    """Summarise finished records into the tables listed in the module docstring.

    Args:
        record_paths: Record Parquet files; each must have a sidecar with status
            ``complete`` (see :func:`oscbo.records.read_record`).
        out_dir: Folder for the tables; created if missing.
        not_run: Jobs that could not run (e.g. TabICLv2 without its checkpoint), each with
            ``experiment, task, method, seeds, reason``; written as the ``not_run`` table.
        failed: Runs that ended at an objective fault, each with ``experiment, task, method,
            seed, step, reason`` (a job manifest's ``failed`` entries); written as ``failed``.
        readings: the study's readings (:func:`oscbo.readings.from_config`); the default
            reading is added first when missing.

    Returns:
        Table name -> path of the Parquet file written (each written atomically).

    Raises:
        FileNotFoundError: A record or its sidecar is missing (an interrupted write).
        ValueError: No records, a record not finished, two records for one
            (experiment, task, method, seed), a record with NaN or inf in y, f or best_f,
            or seeds of one method disagreeing on which steps are initial design.
        oscbo.records.RecordError: A damaged record (naming the file).
    """
    if not record_paths:
        raise ValueError("aggregate needs at least one record")
    paths = sorted(map(Path, record_paths))
    runs = [records.read_record(path) for path in paths]
    for path, (table, _) in zip(paths, runs):
        finite = np.isfinite(table[FINITE_COLUMNS].to_numpy(dtype=float)).all(axis=1)
        if not finite.all():
            steps = table.loc[~finite, "step"].tolist()
            raise ValueError(f"record {path}: NaN or inf in {FINITE_COLUMNS} at step(s) {steps}")
    readings = list(readings)
    if not any(reading.name == readings_.DEFAULT for reading in readings):
        readings.insert(0, readings_.Reading(readings_.DEFAULT, readings_.DEFAULT_DESCRIPTION))
    default_reading = next(reading for reading in readings if reading.name == readings_.DEFAULT)
    steps = steps_table([table for table, _ in runs])
    tasks = tasks_table([meta for _, meta in runs])
    final = final_table(steps, tasks)
    curves = curves_table(steps)
    ranks = reading_ranks(final, readings)
    default = ranks[ranks["reading"] == readings_.DEFAULT]
    dual = dual_table(steps, final, default, curves, run_settings([meta for _, meta in runs]))
    tables = {
        "steps": steps,
        "curves": curves,
        "final": final,
        "ranks": ranks,
        "mean_ranks": per_reading(ranks, mean_ranks_table),
        "tracking": pd.concat([tracking_table(readings_.apply(curves, reading, readings)).assign(reading=reading.name)
                               for reading in readings], ignore_index=True)[TRACKING_COLUMNS],
        "tests": tests_table(final),
        "tasks": tasks,
        "dual": dual,
        "dual_ranks": dual_ranks_table(readings_.apply(final, default_reading, readings), dual),
        "readings": readings_.to_table(readings),
        "lengthscales": lengthscales_table([table for table, _ in runs]),
        "provenance": provenance_table([meta for _, meta in runs]),
        "not_run": pd.DataFrame(
            [{**{k: job[k] for k in NOT_RUN_COLUMNS}, "seeds": len(job["seeds"])} for job in not_run],
            columns=NOT_RUN_COLUMNS,
        ),
        "failed": pd.DataFrame([{k: run[k] for k in FAILED_COLUMNS} for run in failed], columns=FAILED_COLUMNS),
    }
    written = {}
    for name, table in tables.items():
        path = table_path(out_dir, name)
        with records.atomic_path(path) as tmp:
            table.to_parquet(tmp, index=False)
        written[name] = path
    return written


def load(out_dir: str | Path, names: Sequence[str] = TABLES) -> dict[str, pd.DataFrame]:
    """Read the summary tables ``names`` (default: those :func:`aggregate` writes) from ``out_dir``.

    Raises:
        FileNotFoundError: a table is not there, naming it and the folder.
    """
    missing = [name for name in names if not table_path(out_dir, name).is_file()]
    if missing:
        raise FileNotFoundError(f"summary table(s) {missing} not in {out_dir}; {TABLES} are written by "
                                "oscbo.aggregate.aggregate, claims and findings by oscbo.findings.write")
    return {name: pd.read_parquet(table_path(out_dir, name)) for name in names}


def tasks_table(sidecars: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per task: dimension, f* (NaN when unknown), for a known-truth task (a GP sample
    path) its true lengthscale and the one that fits its standardised y, and for a tabular task
    the oracle's reachable maximum (:attr:`oscbo.tasks.tabular.TableOracle.reachable_value`).
    Sidecars that do not describe their task (written by other tools) contribute no row."""
    rows = {}
    for meta in sidecars:
        task = meta.get("task")
        if not isinstance(task, dict):
            continue
        rows[task["name"]] = {
            "task": task["name"],
            "dim": task["dim"],
            "optimal_value": np.nan if task.get("optimal_value") is None else task["optimal_value"],
            "true_lengthscale": task.get("true_lengthscale", np.nan),
            "true_lengthscale_standardised": task.get("lengthscale_for_standardised_y", np.nan),
            "reachable_value": task.get("reachable_value", np.nan),
        }
    columns = ["task", "dim", "optimal_value", "true_lengthscale", "true_lengthscale_standardised", "reachable_value"]
    return pd.DataFrame(list(rows.values()), columns=columns).sort_values("task", ignore_index=True)


LENGTHSCALE_COLUMNS = ["experiment", "task", "method", "dimension", "n", "log10_mean", "log10_se"]


def lengthscales_table(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Per (experiment, task, method, dimension): mean and s.e. over seeds of log10 of the final
    lengthscale (the one that chose the last query). Methods without one (TabICLv2) have no rows."""
    rows = []
    for table in tables:
        last = table.sort_values("step").iloc[-1]
        for column in [c for c in table.columns if c.startswith("lengthscale_")]:
            value = float(last[column])
            if np.isfinite(value) and value > 0:
                rows.append({**{k: last[k] for k in GROUP_KEYS}, "dimension": int(column.split("_")[1]),
                             "log10": np.log10(value)})
    if not rows:
        return pd.DataFrame(columns=LENGTHSCALE_COLUMNS)
    grouped = pd.DataFrame(rows).groupby([*GROUP_KEYS, "dimension"], sort=True)["log10"]
    table = grouped.agg(n="count", log10_mean="mean", log10_se="std").reset_index()
    table["log10_se"] /= np.sqrt(table["n"])
    return table[LENGTHSCALE_COLUMNS]


#: What the ``provenance`` table keeps of each run's sidecar (``versions`` as a JSON string).
PROVENANCE_COLUMNS = ["experiment", "task", "method", "seed", "git_commit", "versions", "device", "device_note",
                      "hardware", "threads", "mkl_reproducibility", "started", "finished"]


def provenance_table(sidecars: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: the provenance its sidecar recorded (missing fields empty)."""
    import json

    rows = []
    for meta in sidecars:
        task = meta.get("task")
        row = {column: meta.get(column, "") for column in PROVENANCE_COLUMNS}
        row["task"] = task.get("name", "") if isinstance(task, dict) else (task or "")
        row["versions"] = json.dumps(meta.get("versions", {}), sort_keys=True)
        rows.append({k: ("" if v is None else v) for k, v in row.items()})
    table = pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)
    for column in PROVENANCE_COLUMNS:
        if column in ("seed", "threads"):
            table[column] = pd.to_numeric(table[column], errors="coerce")
        else:
            table[column] = table[column].astype(str)
    return table


def steps_table(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate records into one row per step, with the derived per-seed diagnostics."""
    frames = [_record_steps(table) for table in tables]
    steps = pd.concat(frames, ignore_index=True)
    duplicated = steps.duplicated(KEYS + ["step"])
    if duplicated.any():
        first = steps.loc[duplicated, KEYS].iloc[0].to_dict()
        raise ValueError(f"more than one record for {first}")
    return _regret_of_unknown_optimum(steps.sort_values(KEYS + ["step"], ignore_index=True))


def _regret_of_unknown_optimum(steps: pd.DataFrame) -> pd.DataFrame:
    """Regret for tasks whose f* is unknown (Lunar Lander): against the best f seen on the
    task anywhere in the study (every experiment, method and seed).

    Adds ``f_star`` and ``f_star_known`` (False where f* is the best value seen) to every row.
    """
    steps = steps.copy()
    unknown = steps.groupby("task")["simple_regret"].transform(lambda regret: regret.isna().all())
    best_seen = steps.groupby("task")["f"].transform("max")
    steps["f_star_known"] = ~unknown
    steps["f_star"] = np.where(unknown, best_seen, steps["best_f"] + steps["simple_regret"])
    if unknown.any():
        bo = steps["phase"] == "bo"
        instant = np.where(bo, steps["f_star"] - steps["f"], 0.0)
        cumulative = pd.Series(instant, index=steps.index).groupby([steps[k] for k in KEYS]).cumsum()
        steps.loc[unknown, "simple_regret"] = (steps["f_star"] - steps["best_f"])[unknown]
        steps.loc[unknown, "cumulative_regret"] = cumulative[unknown]
    return steps


def _record_steps(table: pd.DataFrame) -> pd.DataFrame:
    """One record's rows with the lengthscale summary, wall-clock and running diagnostics."""
    runs = table[KEYS].drop_duplicates()
    if len(runs) != 1:
        raise ValueError(f"a record must hold exactly one run, found {len(runs)}: {runs.to_dict('records')}")
    table = table.sort_values("step", ignore_index=True)
    out = table[KEYS + RECORD_STEP_COLUMNS].copy()
    # Computed per record, before concatenation, because records differ in how many
    # lengthscale columns they have (isotropic vs ARD); the geometric mean is the summary
    # that does not depend on the input scaling of any one dimension.
    lengthscales = table.filter(regex=r"^lengthscale_\d+$").to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["lengthscale"] = np.exp(np.log(lengthscales).mean(axis=1)) if lengthscales.shape[1] else np.nan
    out["wallclock"] = table[records.SECONDS_COLUMNS].astype(float).fillna(0.0).sum(axis=1).cumsum()

    # The running diagnostics count BO rounds only (t = 1..T in eq. 3); expanding
    # statistics skip NaN, so a round without an interval does not reset the average.
    bo = out["phase"] == "bo"
    for column in ["coverage", "mean_halfwidth", "violation_positive", "cumulative_sharpness", "average_f"]:
        out[column] = np.nan
    # the mean value of the queries so far, a task with unknown f*'s cumulative-regret curve
    out.loc[bo, "average_f"] = out.loc[bo, "f"].astype(float).expanding().mean()
    out.loc[bo, "coverage"] = out.loc[bo, "covered"].astype(float).expanding().mean()
    out.loc[bo, "mean_halfwidth"] = out.loc[bo, "halfwidth"].astype(float).expanding().mean()
    out.loc[bo, "violation_positive"] = out.loc[bo, "violation"].astype(float).clip(lower=0.0)
    out.loc[bo, "cumulative_sharpness"] = out.loc[bo, "loss_sharpness"].astype(float).expanding().sum()
    # Per seed, before averaging: a seed over-covering and one under-covering are both off.
    out["coverage_gap"] = (out["coverage"] - TARGET_COVERAGE).abs()
    # lambda_{t-1} / lambda_0: how far the dual moved (the first BO round plays lambda_0).
    multiplier = out["lambda"].astype(float)
    first = multiplier[bo].dropna()
    out["lambda_relative"] = multiplier / first.iloc[0] if len(first) else np.nan
    return out


def curves_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard error and seed count of each metric per (experiment, task, method, step).

    The standard error is ``std(ddof=1) / sqrt(n)`` over the seeds with a value, NaN when
    ``n < 2``. Steps where no seed has a value (``lambda`` of a method without a dual
    variable, coverage on the initial design) have no row. ``phase`` is the step's phase,
    which all seeds share.
    """
    keys = GROUP_KEYS + ["step"]
    phases = steps.groupby(keys)["phase"].nunique()
    if (phases > 1).any():
        where = dict(zip(keys, phases[phases > 1].index[0]))
        raise ValueError(f"seeds disagree on the phase of {where}: initial designs differ in size")

    long = steps.melt(id_vars=keys + ["phase"], value_vars=CURVE_METRICS, var_name="metric")
    long["value"] = long["value"].astype(float)
    grouped = long.groupby(keys + ["phase", "metric"], sort=True)["value"]
    curves = grouped.agg(mean="mean", std="std", n="count").reset_index()
    curves = curves[curves["n"] > 0].copy()
    # pandas' std (ddof=1) of a single value is NaN, so se is NaN when n < 2.
    curves["se"] = curves["std"] / np.sqrt(curves["n"])
    curves["n"] = curves["n"].astype(int)
    return curves[keys + ["phase", "metric", "mean", "se", "n"]].reset_index(drop=True)


def final_table(steps: pd.DataFrame, tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each run's values after its last oracle call (``lengthscale``: the one that chose the
    last query), and how many calls it made per phase.

    ``reachable_regret`` is the task's reachable maximum (``tasks``, a tabular task's dense
    search) minus the best value found: NaN where there is none, negative where a run beat the
    search."""
    last = steps.groupby(KEYS, sort=True).tail(1).set_index(KEYS)
    counts = steps.groupby(KEYS)["phase"].value_counts().unstack(fill_value=0)
    final = pd.DataFrame(
        {
            "oracle_calls": last["step"] + 1,
            "n_init": counts.get("init", 0),
            "bo_rounds": counts.get("bo", 0),
            "best_f": last["best_f"],
            "lengthscale": last["lengthscale"],
            "simple_regret": last["simple_regret"],
            "cumulative_regret": last["cumulative_regret"],
            "f_star_known": last["f_star_known"],
            "wallclock": last["wallclock"],
        }
    )
    final = final.reset_index().sort_values(KEYS, ignore_index=True)
    reachable = pd.Series(dtype=float) if tasks is None else tasks.set_index("task")["reachable_value"]
    final["reachable_regret"] = final["task"].map(reachable).astype(float) - final["best_f"]
    return final


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
    """:func:`ranks_table` under each reading (:func:`oscbo.readings.apply`), one after the other,
    with the columns ``reading``, ``label`` (the method label that ran) and ``task_run``."""
    frames = []
    for reading in readings:
        applied = readings_.apply(final, reading, readings)
        ran = applied.drop_duplicates(GROUP_KEYS).set_index(GROUP_KEYS)[["label", "task_run"]]
        frames.append(ranks_table(applied).join(ran, on=GROUP_KEYS).assign(reading=reading.name))
    ranks = pd.concat(frames, ignore_index=True)
    return ranks[["reading", *GROUP_KEYS, "label", "task_run"]
                 + [c for c in ranks.columns if c not in ("reading", *GROUP_KEYS, "label", "task_run")]]


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


TRACKING_COLUMNS = ["reading", "experiment", "metric", "method", "reference", "n_tasks", "gap_mean", "gap_se",
                    "place"]


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
    metric, method) with ``gap``, the mean over BO rounds of ``|log10 m(t) - log10 m_ref(t)|``."""
    data = curves[(curves["phase"] == "bo") & curves["metric"].isin(TRACKED_METRICS)]
    gaps = []
    for (experiment, task, metric), panel in data.groupby(["experiment", "task", "metric"], sort=True):
        wide = np.log10(panel.pivot(index="step", columns="method", values="mean").clip(lower=TRACKING_FLOOR))
        if TRACKING_REFERENCE not in wide:
            continue
        distance = wide.drop(columns=TRACKING_REFERENCE).sub(wide[TRACKING_REFERENCE], axis=0).abs()
        for method, gap in distance.mean().dropna().items():  # mean skips rounds missing on either side
            gaps.append({"experiment": experiment, "task": task, "metric": metric, "method": method, "gap": gap})
    return pd.DataFrame(gaps, columns=["experiment", "task", "metric", "method", "gap"])


#: The run settings the ``dual`` table reads from each run's sidecar.
SETTINGS_COLUMNS = ["experiment", "method", "method_name", "lambda0", "omega", "calibration_power",
                    "mll_equivalent_lambda"]


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


DUAL_COLUMNS = SETTINGS_COLUMNS[:2] + ["task"] + SETTINGS_COLUMNS[2:] + [
    "n", "simple_regret_mean", "simple_regret_se", "cumulative_regret_mean", "cumulative_regret_se",
    "rank_simple", "rank_cumulative", "lengthscale_mean", "lengthscale_se", "lambda_low", "lambda_high",
    "simple_regret_ratio", "simple_regret_gap", "mean_halfwidth_gap", "lengthscale_gap",
]


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
    spread = pd.DataFrame({"lengthscale_mean": lengthscale.mean(),
                           "lengthscale_se": lengthscale.std() / np.sqrt(lengthscale.count())})
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


DUAL_RANK_COLUMNS = ["metric", "method", "replaces", "lambda0", "omega", "n_tasks", "n_seeds", "n_methods",
                     "rank_mean", "rank_se", "place", "replaced_rank_mean", "replaced_place"]


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
        on_shared = pd.concat([frame[(frame["task"] == task) & frame["seed"].isin(seeds)]
                               for task, seeds in shared.items() for frame in (main, runs)], ignore_index=True)
        in_main = on_shared[on_shared["experiment"] == MAIN]
        swapped = pd.concat([in_main[in_main["method"] != replaced],
                             on_shared[on_shared["experiment"] == DUAL].assign(experiment=MAIN)], ignore_index=True)
        placed = mean_ranks_table(ranks_table(swapped)).set_index(["metric", "method"])
        before = mean_ranks_table(ranks_table(in_main)).set_index(["metric", "method"])
        for metric in FINAL_METRICS:
            row = placed.loc[(metric, variant.method)]
            frames.append({
                "metric": metric, "method": variant.method, "replaces": replaced, "lambda0": variant.lambda0,
                "omega": variant.omega, "n_tasks": row["n_tasks"], "n_seeds": min(map(len, shared.values())),
                "n_methods": row["n_methods"],
                "rank_mean": row["rank_mean"], "rank_se": row["rank_se"], "place": row["place"],
                "replaced_rank_mean": before.loc[(metric, replaced), "rank_mean"],
                "replaced_place": before.loc[(metric, replaced), "place"],
            })
    return pd.DataFrame(frames, columns=DUAL_RANK_COLUMNS)


def _design(runs: pd.DataFrame) -> tuple:
    """What makes two methods' runs of a seed on a task comparable: initial design size and budget."""
    return tuple(sorted(set(runs["n_init"]))), tuple(sorted(set(runs["bo_rounds"])))
