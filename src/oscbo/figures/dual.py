"""The dual study's figures (not in the paper): the multiplier's path, and the final lengthscale and
regret against lambda_0, per dual step omega, beside GP-UCB-MLL.

A line per (method, omega) has a colour and marker of its own (:func:`line_label` names it), so
that no omega shares OSCBO's red; the GP-UCB-MLL reference arm is its blue line and band.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from oscbo.figures import style
from oscbo.figures.curves import draw_lines, seeds_note
from oscbo.figures.plan import Figure
from oscbo.paper import TRACKING_REFERENCE as REFERENCE
from oscbo.paper import task_name

LABELS = {
    "lengthscale": "final lengthscale",
    "simple_regret": "final simple regret",
    "cumulative_regret": "final cumulative regret",
}


def line_label(method_name: str, omega: float) -> str:
    """The legend entry and style key of a (method, omega) line: ``"oscbo, ω = 0.001"``."""
    return f"{method_name}, ω = {omega:g}"


def labels(dual: pd.DataFrame) -> list[str]:
    """Every (method, omega) line of the dual table."""
    variants = dual.dropna(subset=["lambda0"])
    return [
        line_label(name, omega)
        for name, omega in variants[["method_name", "omega"]].drop_duplicates().itertuples(index=False)
    ]


def dual_lambda(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """lambda_{t-1} / lambda_0 over BO rounds, one line per run label, a panel per task."""
    curves = tables["curves"]
    data = curves[(curves["experiment"] == figure.experiment) & (curves["metric"] == "lambda_relative")]
    tasks = sorted(data["task"].unique())
    fig, axes = style.grid(max(len(tasks), 1))
    for ax, task in zip(axes, tasks):
        draw_lines(ax, data[data["task"] == task], styles, log=False, bo_only=True)
        ax.set_title(task_name(task))
        ax.set_xlabel("oracle call")
        ax.set_ylabel("λₜ₋₁ / λ₀")
    style.legend(fig, *styles.handles(data["method"]), columns=3)
    caption = (
        "The multiplier λₜ₋₁ in force when x_t was chosen, divided by the run's λ₀, per task and run label: "
        f"mean ± one standard error over {seeds_note(data['n'])}. OMD moves it by a factor of at most e^(±ω) "
        "per round."
    )
    return fig, "Multiplier relative to λ₀", caption


def versus_lambda0(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Final values against lambda_0 (log axis), a line per (method, omega), a row per task."""
    metrics = figure.options["metrics"]
    known = tables["tasks"].dropna(subset=["optimal_value"])["task"]
    unknown = set(tables["dual"]["task"]) - set(known)
    dual = tables["dual"]
    dual = dual[dual["experiment"] == figure.experiment]
    tasks = sorted(dual["task"].unique())
    fig, axes = style.grid(max(len(tasks), 1) * len(metrics), columns=max(len(metrics), 4 if len(metrics) == 1 else 2))
    panels = (
        [(ax, task, metrics[0]) for ax, task in zip(axes, tasks)]
        if len(metrics) == 1
        else [
            (axes[row * len(metrics) + column], task, metric)
            for row, task in enumerate(tasks)
            for column, metric in enumerate(metrics)
        ]
    )
    variants = dual.dropna(subset=["lambda0"])
    ticks = sorted(set(variants["lambda0"]))
    mll_lambda = dual["mll_equivalent_lambda"].dropna().unique()
    references = 0
    for ax, task, metric in panels:
        rows = dual[dual["task"] == task]
        reference = rows[rows["method"] == REFERENCE]
        if len(reference):
            mean, se = (float(reference[f"{metric}_{part}"].iloc[0]) for part in ("mean", "se"))
            ax.axhline(mean, color=styles[REFERENCE].color, lw=1.2)
            if np.isfinite(se):
                ax.axhspan(mean - se, mean + se, color=styles[REFERENCE].color, alpha=0.15, lw=0)
            references += 1
        for (name, omega), line in rows.dropna(subset=["lambda0"]).groupby(["method_name", "omega"], sort=True):
            line = line.sort_values("lambda0")
            look = styles[line_label(name, omega)]
            se = line[f"{metric}_se"].to_numpy(float)
            ax.errorbar(
                line["lambda0"],
                line[f"{metric}_mean"],
                yerr=np.where(np.isfinite(se), se, 0.0),
                color=look.color,
                marker=look.marker,
                ms=4,
                lw=1.3,
                capsize=3,
            )
        for value in mll_lambda:
            ax.axvline(value, color="0.4", ls=":", lw=1, label=style.GUIDE)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        values = rows[f"{metric}_mean"].dropna()
        if len(values) and values.min() > 0 and values.max() >= 10 * values.min():
            style.log_axis(ax)
        ax.set_title(task_name(task))
        ax.set_xlabel("λ₀")
        ax.set_ylabel(LABELS[metric])
    handles, names = styles.handles(labels(dual))
    if references:
        handles.append(Line2D([], [], color=styles[REFERENCE].color, lw=1.2))
        names.append(f"{REFERENCE} (reference)")
    if len(mll_lambda):
        handles.append(Line2D([], [], color="0.4", ls=":", lw=1))
        names.append("MLL-equivalent λ")
    style.legend(fig, handles, names, columns=4)
    what = " and ".join(LABELS[m] for m in metrics)
    caption = (
        f"{what.capitalize()} against the initial multiplier λ₀ (log axis), per task: mean ± one standard error over "
        f"{seeds_note(dual['n'])}; a line, colour and marker per method and dual step ω. "
        + (
            f"The horizontal line and band: {REFERENCE}'s mean ± s.e. on the same seeds and initial designs. "
            if references
            else f"The dual experiment has no {REFERENCE} arm: no reference line. "
        )
        + (
            "Dotted: the MLL-equivalent λ = β / log(1 + σ⁻²), where S5 with p = 2 is proportional to −2 × the "
            "marginal log likelihood. "
            if len(mll_lambda)
            else ""
        )
        + (
            f"On {', '.join(sorted(unknown))}, whose optimum is unknown, the regret is measured against the best value "
            "any run of the study found. "
            if unknown and "regret" in what
            else ""
        )
        + "Log y axis where a panel's values span a factor of 10 or more."
    )
    return fig, f"{what.capitalize()} against λ₀", caption
