"""A run's picture (:meth:`oscbo.api.optimizer.Optimizer.plot`): the best value so far and, where
the optimum is known, the simple regret, against the evaluation; the lengthscale each round played;
and how often the band covered the value it was about to see."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from oscbo.analysis.summaries import steps_table
from oscbo.paper import TARGET_COVERAGE


def plot(history: pd.DataFrame, title: str) -> Figure:
    """The picture of a run's ``history`` (an optimiser's): a figure, not shown and not saved
    (``.savefig(path)`` writes it; a notebook shows it). Made without pyplot, so it leaves the
    user's backend and open figures as they are."""
    regret = history["simple_regret"].notna().any()
    figure = Figure(figsize=(4.0 * (3 + regret), 3.2), layout="constrained")
    axes = figure.subplots(1, 3 + regret)
    step = history["step"].to_numpy() + 1  # the evaluation, from 1
    bo = history["phase"].to_numpy() == "bo"
    panels = iter(axes)
    best = next(panels)
    best.plot(step, history["y"], ".", color="0.6", label="value")
    best.plot(step, history["best_f"], color="#d55e00", label="best so far")
    best.set_ylabel("objective")
    best.legend(frameon=False)
    if regret:
        ax = next(panels)
        ax.plot(step, history["simple_regret"].clip(lower=1e-12), color="#d55e00")
        ax.set_yscale("log")
        ax.set_ylabel("simple regret")
    lengthscale = next(panels)
    for column in [c for c in history.columns if c.startswith("lengthscale_")]:
        lengthscale.plot(step[bo], history.loc[bo, column], label=column.removeprefix("lengthscale_"))
    lengthscale.set_yscale("log")
    lengthscale.set_ylabel("lengthscale played")
    coverage = next(panels)
    running = steps_table([history])["coverage"].to_numpy()  # p̂_t (eq. 3), as the study's summaries have it
    coverage.plot(step[bo], running[bo], color="#0072b2")
    coverage.axhline(TARGET_COVERAGE, color="black", ls="--", lw=1)
    coverage.set_ylim(-0.02, 1.02)
    coverage.set_ylabel(f"coverage so far (dashed: {TARGET_COVERAGE:g})")
    for ax in axes:
        ax.set_xlabel("evaluation")
        if bo.any():
            ax.axvline(step[bo][0] - 0.5, color="0.5", ls=":", lw=1)  # the BO rounds start
    figure.suptitle(title)
    return figure
