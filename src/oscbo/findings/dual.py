"""The dual study's reading: what OSCBO's lambda_0 and omega do, in one paragraph from the ``dual`` tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings.claims import MATCH_TOLERANCE, TOLERANCES_TEXT, TRACKING_TOLERANCE, NotEvaluated, Tables
from oscbo.paper import DUAL, GP_UCB_MLL, MAIN, OMEGA, OSCBO

#: The summary tables :func:`dual_reading` reads.
TABLES = ["dual", "dual_ranks", "mean_ranks", "tracking"]


def dual_reading(tables: Tables) -> str:
    """A paragraph on what lambda_0 does, every number drawn from the ``dual`` tables.

    It says how far the multiplier moved, which lambda_0 makes OSCBO (p = 2) track GP-UCB-MLL
    (by the test of claim ``main-tracks-mll``: every trajectory gap within
    :data:`TRACKING_TOLERANCE`), how omega changes final regret,
    and how the place of OSCBO (and OSCBO-L1) among the methods of 'main' moves with lambda_0
    (``dual_ranks``; without it, the ranking within the dual experiment). lambda_0 is read at
    the paper's omega, :data:`oscbo.paper.OMEGA` (the smallest omega run, when that one was not).

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
    omega = OMEGA if (oscbo["omega"] == OMEGA).any() else float(oscbo["omega"].min())
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
