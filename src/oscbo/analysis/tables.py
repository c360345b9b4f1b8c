"""The analysis stage's summary tables: :func:`aggregate` writes them, :func:`load` reads them.

:func:`aggregate` reads the records of a study (see :mod:`oscbo.records`) and writes the
Parquet tables below; figures and the report only read them (:func:`load`), so every number they
show is computed here, once.

==================  =========================================================================
table               one row per
==================  =========================================================================
``steps``           (experiment, task, method, seed, step): the record's values plus the
                    running diagnostics over BO rounds (coverage p^_t of eq. 3, mean
                    half-width, V_t^+, cumulative sharpness, the sharpness gap G^_t against
                    the true lengthscale (eq. 8), coverage gap |p^_t - 0.9|, the
                    mean f of the queries so far, the interval multiplier's mean distance to
                    sqrt(beta) ``posthoc``), lambda relative to the run's first
                    multiplier lambda_0, and cumulative wall-clock;
                    for a task with unknown f* (Lunar Lander) the regret is taken against
                    the best value seen on it in the whole study (``f_star_known`` False)
``curves``          (experiment, task, method, step, metric): mean, s.e. and count over seeds
``trajectories``    (experiment, task, method, seed, step): the per-seed BO rounds the claims
                    resample (:data:`oscbo.analysis.summaries.TRAJECTORIES`: 'main''s tracked
                    methods, the known-truth tasks), a column per kept metric
``final``           (experiment, task, method, seed): the values after the last oracle call,
                    the first BO round's lengthscale and the running diagnostics at the last
``ranks``           (reading, experiment, task, method): mean and s.e. of final regret over
                    seeds, the rank of that mean among the methods of the task (1 = lowest
                    regret) and the mean divided by the task's largest mean over methods
                    (normalised), under each reading (:mod:`oscbo.analysis.readings`: ``method`` and
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
                    git commit, package versions, device, machine, threads, numerical code path, start
                    and end; ``run``, a hash of what it computes (a run two experiments share: one)
``tests``           (experiment, task, metric, method_a, method_b): paired comparison of final
                    regret over common seeds (Wilcoxon signed-rank with the smallest p the
                    seeds allow and Holm's adjustment, bootstrap CI; :mod:`oscbo.analysis.statistics`)
``tasks``           (task): dimension, f*, and a known-truth task's true lengthscale
``dual``            (experiment, task, method) of the ``dual`` experiment: the run settings
                    lambda_0, omega and p (from the sidecars), final regret and lengthscale,
                    the range of lambda / lambda_0, and the distance to GP-UCB-MLL
``dual_ranks``      (metric, method) for each multiplier variant of ``dual``: the place it
                    would take among ``main``'s methods in place of the method it varies
``not_run``         (experiment, task, method): jobs that could not run, and what the config
                    leaves out of the paper's protocol (its ``not_run`` entries), and why
``failed``          (experiment, task, method, seed): runs that ended at an objective fault
                    (the task raised, or returned NaN or inf), the oracle call and why; they
                    are in no other table, so no curve averages a NaN
==================  =========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from oscbo import records
from oscbo.analysis import readings as readings_
from oscbo.analysis.dual import dual_ranks_table, dual_table, run_settings
from oscbo.analysis.ranks import TRACKING_COLUMNS, mean_ranks_table, per_reading, reading_ranks, tracking_table
from oscbo.analysis.statistics import tests_table
from oscbo.analysis.summaries import (
    FAILED_COLUMNS,
    FINITE_COLUMNS,
    NOT_RUN_COLUMNS,
    curves_table,
    final_table,
    lengthscales_table,
    provenance_table,
    steps_table,
    tasks_table,
    trajectories_table,
)

TABLES = [
    "steps",
    "curves",
    "trajectories",
    "final",
    "ranks",
    "mean_ranks",
    "tracking",
    "tests",
    "tasks",
    "dual",
    "dual_ranks",
    "readings",
    "lengthscales",
    "provenance",
    "not_run",
    "failed",
]
#: The study's protocol as it ran, written beside these tables by the workflow's ``protocol`` rule
#: (:func:`oscbo.study.protocol.write_table`), not by :func:`aggregate`.
PROTOCOL = "protocol"
#: The tables findings, figures and the report read, and a published study keeps (reference/summary):
#: every one but ``steps``, one row per step of every run, the records again (too big to publish).
PUBLISHED = [name for name in TABLES if name != "steps"] + [PROTOCOL]
#: Tables a study may add beside those, which the report shows when they are there and a
#: publication keeps: ``crosscheck``, the baselines beside independent code
#: (``benchmarks/crosscheck.py --table SUMMARY/crosscheck.parquet``).
OPTIONAL = ["crosscheck"]


def table_path(out_dir: str | Path, name: str) -> Path:
    """``OUT_DIR/{name}.parquet``, the file of summary table ``name``."""
    return Path(out_dir) / f"{name}.parquet"


def aggregate(
    record_paths: Sequence[str | Path],
    out_dir: str | Path,
    not_run: Sequence[dict[str, Any]] = (),
    failed: Sequence[dict[str, Any]] = (),
    readings: Sequence[readings_.Reading] = (),
    asked: Mapping[str | Path, Sequence[tuple[str, str]]] | None = None,
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
        readings: the study's readings (:func:`oscbo.analysis.readings.from_config`); the default
            reading is added first when missing.
        asked: a record -> the ``(experiment, method label)`` pairs it stands for: a run shared by
            experiments (:func:`oscbo.study.jobs.owners`) is read once for each, under its
            experiment and label. A record not listed stands for its own.

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
    asked = {Path(path): pairs for path, pairs in (asked or {}).items()}
    runs = []
    for path in paths:
        table, meta = records.read_record(path)
        finite = np.isfinite(table[FINITE_COLUMNS].to_numpy(dtype=float)).all(axis=1)
        if not finite.all():
            steps = table.loc[~finite, "step"].tolist()
            raise ValueError(f"record {path}: NaN or inf in {FINITE_COLUMNS} at step(s) {steps}")
        for experiment, label in asked.get(path, [(meta["experiment"], meta["method"])]):
            runs.append(
                (table.assign(experiment=experiment, method=label), {**meta, "experiment": experiment, "method": label})
            )
    readings = list(readings)
    if not any(reading.name == readings_.DEFAULT for reading in readings):
        readings.insert(0, readings_.Reading(readings_.DEFAULT, readings_.DEFAULT_DESCRIPTION))
    default_reading = next(reading for reading in readings if reading.name == readings_.DEFAULT)
    steps = steps_table([table for table, _ in runs], [meta.get("settings") or {} for _, meta in runs])
    tasks = tasks_table([meta for _, meta in runs])
    final = final_table(steps, tasks)
    curves = curves_table(steps)
    ranks = reading_ranks(final, readings)
    default = ranks[ranks["reading"] == readings_.DEFAULT]
    settings = run_settings([meta for _, meta in runs])
    dual = dual_table(steps, final, default, curves, settings)
    method_names = {(row.experiment, row.method): row.method_name for row in settings.itertuples()}
    tables = {
        "steps": steps,
        "curves": curves,
        "trajectories": trajectories_table(steps, method_names),
        "final": final,
        "ranks": ranks,
        "mean_ranks": per_reading(ranks, mean_ranks_table),
        "tracking": pd.concat(
            [
                tracking_table(readings_.apply(curves, reading, readings)).assign(reading=reading.name)
                for reading in readings
            ],
            ignore_index=True,
        )[TRACKING_COLUMNS],
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


def add_part(published: str | Path, part: str | Path, experiments: Sequence[str]) -> dict[str, Path]:
    """Publish a part of a study into an earlier publication (``oscbo publish --experiments``): the
    rows of ``experiments`` of each published table of ``part`` replace those of ``published``.

    The summary tables are computed within an experiment (ranks, mean ranks, tracking, the paired
    tests' Holm families), so a part aggregated alone gives the rows it would have in the whole.
    Tables without an experiment: ``tasks`` and ``protocol`` gain the part's new rows (a task, a
    setting), keeping the publication's (what ran); ``readings`` and ``dual_ranks`` stay as published.
    """
    written = {}
    for name in PUBLISHED:
        old, new = (pd.read_parquet(table_path(folder, name)) for folder in (published, part))
        if "experiment" in old.columns:
            kept = old[~old["experiment"].isin(experiments)]
            added = new[new["experiment"].isin(experiments)]
            frames = [frame for frame in (kept, added) if len(frame)]
            table = pd.concat(frames, ignore_index=True) if frames else old.iloc[:0]
        elif name in ("tasks", PROTOCOL):
            key = "task" if name == "tasks" else "setting"
            table = pd.concat([old, new[~new[key].isin(old[key])]], ignore_index=True)
        else:
            continue
        path = table_path(published, name)
        with records.atomic_path(path) as tmp:
            table.to_parquet(tmp, index=False)
        written[name] = path
    return written


def missing(out_dir: str | Path, names: Sequence[str] = TABLES) -> list[str]:
    """The summary tables of ``names`` that are not in ``out_dir``."""
    return [name for name in names if not table_path(out_dir, name).is_file()]


def present(out_dir: str | Path, names: Sequence[str] = OPTIONAL) -> list[str]:
    """The summary tables of ``names`` (default: :data:`OPTIONAL`) that are in ``out_dir``."""
    absent = missing(out_dir, names)
    return [name for name in names if name not in absent]


def load(out_dir: str | Path, names: Sequence[str] = TABLES, optional: bool = False) -> dict[str, pd.DataFrame]:
    """Read the summary tables ``names`` (default: those :func:`aggregate` writes) from ``out_dir``;
    ``optional``: those of them that are there (e.g. :data:`OPTIONAL`), no error for the others.

    Raises:
        FileNotFoundError: a table is not there, naming it and the folder.
    """
    absent = missing(out_dir, names)
    if optional:
        names = present(out_dir, names)
    elif absent:
        raise FileNotFoundError(
            f"summary table(s) {absent} not in {out_dir}; {TABLES} are written by oscbo.analysis.aggregate, "
            "protocol by the workflow's protocol rule, claims and findings by oscbo.findings.write"
        )
    return {name: pd.read_parquet(table_path(out_dir, name)) for name in names}
