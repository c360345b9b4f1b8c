"""Per-run summaries of finished records: their steps with running diagnostics, curves over
seeds, final values, the tasks, the final lengthscales and the runs' provenance (the tables of
:mod:`oscbo.analysis.tables`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from oscbo import records
from oscbo.paper import KNOWN_TRUTH, MAIN, REPLICATES, TARGET_COVERAGE

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
    "posthoc",
]

NOT_RUN_COLUMNS = ["experiment", "task", "method", "seeds", "reason"]
FAILED_COLUMNS = ["experiment", "task", "method", "seed", "step", "reason"]
#: Record columns that must be finite on every row of a finished run.
FINITE_COLUMNS = ["y", "f", "best_f"]


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
                rows.append(
                    {
                        **{k: last[k] for k in GROUP_KEYS},
                        "dimension": int(column.split("_")[1]),
                        "log10": np.log10(value),
                    }
                )
    if not rows:
        return pd.DataFrame(columns=LENGTHSCALE_COLUMNS)
    grouped = pd.DataFrame(rows).groupby([*GROUP_KEYS, "dimension"], sort=True)["log10"]
    table = grouped.agg(n="count", log10_mean="mean", log10_se="std").reset_index()
    table["log10_se"] /= np.sqrt(table["n"])
    return table[LENGTHSCALE_COLUMNS]


#: What the ``provenance`` table keeps of each run's sidecar (``versions`` as a JSON string).
PROVENANCE_COLUMNS = [
    "experiment",
    "task",
    "method",
    "seed",
    "git_commit",
    "versions",
    "device",
    "device_note",
    "hardware",
    "threads",
    "code_path",
    "started",
    "finished",
    "run",
]
#: What a run computes, as its sidecar states it: the ``run`` column of the provenance table hashes
#: it, so that a run two experiments ask for (the dual study's OSCBO at λ₀ = 1 is main's OSCBO),
#: one row per experiment, is one run.
COMPUTATION = ("task", "task_options", "method_name", "settings", "seed", "n_init", "budget", "noise_std")


def computation(meta: dict[str, Any]) -> str:
    """A short hash of what a run computes (:data:`COMPUTATION`; its label where a sidecar names no method)."""
    stated = {key: meta.get(key) for key in COMPUTATION}
    stated["method_name"] = stated["method_name"] or meta.get("method")
    return hashlib.sha256(json.dumps(stated, sort_keys=True, default=str).encode()).hexdigest()[:16]


def distinct_runs(provenance: pd.DataFrame) -> pd.DataFrame:
    """The ``provenance`` table with each run once (its ``run``): what a count of runs counts; a
    table from before the column, each row."""
    return provenance.drop_duplicates("run") if "run" in provenance.columns else provenance


def runs_counted(provenance: pd.DataFrame) -> str:
    """A study's runs, counted once each: ``5,770 runs``, and where some serve two experiments,
    ``(6,190 experiments' records)`` after it."""
    runs, records = len(distinct_runs(provenance)), len(provenance)
    return f"{runs:,} run{'s' * (runs != 1)}" + (f" ({records:,} experiments' records)" if records != runs else "")


def provenance_table(sidecars: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: the provenance its sidecar recorded (missing fields empty)."""

    rows = []
    for meta in sidecars:
        task = meta.get("task")
        row = {column: meta.get(column, "") for column in PROVENANCE_COLUMNS}
        row["task"] = task.get("name", "") if isinstance(task, dict) else (task or "")
        row["versions"] = json.dumps(meta.get("versions", {}), sort_keys=True)
        row["run"] = computation(meta)
        path = meta.get("code_path")
        if isinstance(path, dict):
            row["code_path"] = path.get("summary", "")
        elif "mkl_reproducibility" in meta:  # written before the code path was pinned
            row["code_path"] = f"not pinned (recorded before the pin): MKL {meta['mkl_reproducibility']}"
        rows.append({k: ("" if v is None else v) for k, v in row.items()})
    table = pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)
    for column in PROVENANCE_COLUMNS:
        if column in ("seed", "threads"):
            table[column] = pd.to_numeric(table[column], errors="coerce")
        else:
            table[column] = table[column].astype(str)
    return table


def steps_table(tables: Sequence[pd.DataFrame], settings: Sequence[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Concatenate records into one row per step, with the derived per-seed diagnostics.

    ``settings``: each record's run settings (its sidecar's), for the width multiplier's nominal
    value (``posthoc``); without them the Table S1 defaults (beta = 2, sigma^2 = 0.01)."""
    settings = settings or [{}] * len(tables)
    frames = [_record_steps(table, own) for table, own in zip(tables, settings)]
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


def _record_steps(table: pd.DataFrame, settings: dict[str, Any]) -> pd.DataFrame:
    """One record's rows with the lengthscale summary, wall-clock and running diagnostics."""
    if table.empty or any(table[key].nunique(dropna=False) != 1 for key in KEYS):
        runs = table[KEYS].drop_duplicates()
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
    bo = (out["phase"] == "bo").to_numpy()

    def on_bo_rounds(values: pd.Series | np.ndarray, statistic: str | None = None) -> np.ndarray:
        """Float ``values`` on the BO rounds (their running ``statistic``, pandas' expanding one,
        if given), NaN on the initial design: a column of ``out``."""
        column = np.full(len(out), np.nan)
        rounds = pd.Series(np.asarray(values)[bo])
        column[bo] = getattr(rounds.expanding(), statistic)() if statistic else rounds
        return column

    out["coverage"] = on_bo_rounds(out["covered"].astype(float), "mean")
    out["mean_halfwidth"] = on_bo_rounds(out["halfwidth"].astype(float), "mean")
    out["violation_positive"] = on_bo_rounds(out["violation"].astype(float).clip(lower=0.0))  # V_t^+
    out["cumulative_sharpness"] = on_bo_rounds(out["loss_sharpness"].astype(float), "sum")
    # \hat G_t, eq. 8 (Lemma 6.2's sharpness gap): the sum over BO rounds of L^s at the played
    # lengthscale minus L^s at the true one, on the same data and x_t; NaN without a true lengthscale.
    gap = out["loss_sharpness"].astype(float) - out["loss_sharpness_true"].astype(float)
    out["sharpness_gap"] = on_bo_rounds(gap, "sum")
    # the mean value of the queries so far, a task with unknown f*'s cumulative-regret curve
    out["average_f"] = on_bo_rounds(out["f"].astype(float), "mean")
    # How far the interval's multiplier (half-width / predictive std) lies from the nominal sqrt(beta),
    # |log10 of their ratio|, averaged over the rounds so far: 0 for a method that plays sqrt(beta)
    # (OSCBO, GP-UCB), the post-hoc share of a recalibrated quantile's (OCBO's; Fig. 1 C).
    beta, noise_var = float(settings.get("beta", 2.0)), float(settings.get("noise_var", 0.01))
    std = np.sqrt(table["sigma"].astype(float) ** 2 + noise_var)
    with np.errstate(divide="ignore", invalid="ignore"):
        drive = np.abs(np.log10(np.abs(table["halfwidth"].astype(float)) / std / np.sqrt(beta)))
    out["posthoc"] = on_bo_rounds(drive.to_numpy(), "mean")
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


#: The running diagnostics ``final`` keeps at a run's last BO round (per seed, so that the claims
#: resample them): coverage p^_T, mean half-width, V_T^+, mean f of the queries.
FINAL_DIAGNOSTICS = [
    "coverage",
    "coverage_gap",
    "mean_halfwidth",
    "violation_positive",
    "cumulative_sharpness",
    "average_f",
    "posthoc",
]


#: The per-seed trajectories the claims resample (``trajectories``): per experiment, the metrics
#: kept, for the methods whose registry name is among those given (None: every method). 'main':
#: the tracking claims' metrics of every method (each claim about OSCBO is tested for the others
#: too); the known-truth tasks: regret, calibration violation and sharpness gap of every method
#: (the theory's claims). An experiment's replicate on other seeds (:data:`oscbo.paper.REPLICATES`)
#: keeps what the experiment keeps: the seed sets judge its claims on them.
TRAJECTORIES = {
    MAIN: (("simple_regret", "mean_halfwidth", "coverage", "lengthscale"), None),
    KNOWN_TRUTH: (("simple_regret", "cumulative_regret", "violation_positive", "sharpness_gap"), None),
}
TRAJECTORY_KEYS = KEYS + ["step"]


def trajectories_table(steps: pd.DataFrame, method_names: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The BO rounds of the runs :data:`TRAJECTORIES` keeps, one row per (experiment, task, method,
    seed, step), a column per kept metric (NaN where an experiment does not keep it).

    Args:
        steps: the ``steps`` table.
        method_names: (experiment, method label) -> its registry name (a stand-in's too).
    """
    frames = []
    for experiment in sorted(set(steps["experiment"])):  # a replicate (seeds 20-39) keeps what its experiment keeps
        if REPLICATES.get(experiment, experiment) not in TRAJECTORIES:
            continue
        metrics, names = TRAJECTORIES[REPLICATES.get(experiment, experiment)]
        rows = steps[(steps["experiment"] == experiment) & (steps["phase"] == "bo")]
        if names is not None:
            keep = [method_names.get((experiment, label), label) in names for label in rows["method"]]
            rows = rows[np.asarray(keep, dtype=bool)]
        frames.append(rows[TRAJECTORY_KEYS + list(metrics)])
    columns = TRAJECTORY_KEYS + list(dict.fromkeys(m for metrics, _ in TRAJECTORIES.values() for m in metrics))
    found = [frame for frame in frames if len(frame)]
    table = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=columns)
    return table.reindex(columns=columns).sort_values(TRAJECTORY_KEYS, ignore_index=True)


def final_table(steps: pd.DataFrame, tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each run's values after its last oracle call (``lengthscale``: the one that chose the
    last query; ``lengthscale_first``: the one that chose the first BO query), its running
    diagnostics at its last BO round (:data:`FINAL_DIAGNOSTICS`), and how many calls it made per phase.

    ``reachable_regret`` is the task's reachable maximum (``tasks``, a tabular task's dense
    search) minus the best value found: NaN where there is none, negative where a run beat the
    search."""
    last = steps.groupby(KEYS, sort=True).tail(1).set_index(KEYS)
    bo = steps[steps["phase"] == "bo"].groupby(KEYS, sort=True)
    first_bo, last_bo = bo.head(1).set_index(KEYS), bo.tail(1).set_index(KEYS)
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
            "lengthscale_first": first_bo["lengthscale"],
            **{column: last_bo[column] for column in FINAL_DIAGNOSTICS},
        }
    )
    final = final.reset_index().sort_values(KEYS, ignore_index=True)
    reachable = pd.Series(dtype=float) if tasks is None else tasks.set_index("task")["reachable_value"]
    final["reachable_regret"] = final["task"].map(reachable).astype(float) - final["best_f"]
    return final
