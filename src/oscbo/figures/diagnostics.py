"""Diagnostics of one task (paper Fig. 3 bottom for Levy 5-D, Fig. S3 for every task), and the ARD
lengthscales per dimension.

A figure per task of ``main``, its panels in the order of Fig. S3's columns: simple and
cumulative regret, empirical coverage p^_t (eq. 3), mean interval half-width, the positive
cumulative violation V_t^+, the sharpness-calibration trajectory, the lengthscale; then the dual
multiplier where a method has one (not in the paper). V_t^+ is zero while the intervals cover:
on a log axis (the paper's log10 V_t^+) those rounds would sit on an arbitrary floor, so it is
drawn on a symmetric-log axis, linear below 1.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes

from oscbo.figures import style
from oscbo.figures.curves import LABELS, UNKNOWN_OPTIMUM, draw_lines, seeds_note, thin, unknown_optimum
from oscbo.figures.plan import Figure
from oscbo.paper import REGRET_METRICS, TARGET_COVERAGE, task_name

#: (metric, axis label, log axis) of the curve panels after the two regrets.
PANELS = [
    ("coverage", "coverage p̂ₜ", False),
    ("mean_halfwidth", "mean interval half-width", False),
    ("violation_positive", "Vₜ⁺ (symlog)", False),
    ("lengthscale", "lengthscale (geometric mean)", True),
    ("lambda", "multiplier λₜ₋₁", False),
]


def diagnostics(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    curves = tables["curves"]
    data = curves[(curves["experiment"] == figure.experiment) & (curves["task"] == figure.task)]
    unknown = figure.task in unknown_optimum(tables)
    panels = [p for p in PANELS if (data["metric"] == p[0]).any()]
    # Fig. S3's columns: the sharpness-calibration trajectory after V_t^+, before the lengthscale
    at = 2 + next((i + 1 for i, p in enumerate(panels) if p[0] == "violation_positive"), len(panels))
    fig, axes = style.grid(3 + len(panels))
    curve_axes = axes[:at] + axes[at + 1 :]
    floored = 0
    for ax, metric in zip(curve_axes[:2], REGRET_METRICS):
        name, label = UNKNOWN_OPTIMUM[metric] if unknown else (metric, LABELS[metric])
        floored += draw_lines(
            ax, data[data["metric"] == name], styles, log=not unknown, bo_only=metric == "cumulative_regret"
        )
        ax.set_ylabel(label)
    for ax, (metric, label, log) in zip(curve_axes[2:], panels):
        draw_lines(ax, data[data["metric"] == metric], styles, log=log, bo_only=True)
        if metric == "coverage":
            ax.axhline(TARGET_COVERAGE, color="black", ls="--", lw=1, label=style.GUIDE)
        if metric == "violation_positive":
            style.log_axis(ax, linthresh=1.0)
            # at least up to the linear part's end, so that its ticks are 0 and 1, never the data's maximum
            ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1.0))
        ax.set_ylabel(label)
    for ax in curve_axes:
        ax.set_xlabel("oracle call")
    _sharpness_calibration(axes[at], data, styles)
    fig.suptitle(task_name(figure.task))
    style.legend(fig, *styles.handles(data["method"]))
    caption = (
        f"{task_name(figure.task)} in '{figure.experiment}' (paper Fig. S3; Fig. 3 bottom shows Levy 5D): "
        + (
            "best reward found and mean reward of the queries (f* unknown), "
            if unknown
            else "simple and cumulative regret (log axes), "
        )
        + f"empirical coverage p̂_t of each method's own intervals (eq. 3; dashed: the nominal {TARGET_COVERAGE:g}), "
        "the running mean half-width of those intervals (y standardised with the data before each round), the "
        "positive cumulative calibration violation Vₜ⁺ = max(V_t, 0) on a symmetric-log axis (linear below 1, "
        "where most rounds sit at 0), the lengthscale (log axis)"
        + (", the dual multiplier λₜ₋₁ (OSCBO variants)" if any(p[0] == "lambda" for p in panels) else "")
        + f"; mean ± one standard error over {seeds_note(data['n'])}. Last panel: the sharpness–calibration "
        f"trajectory (paper Fig. 1 C): running mean half-width against the coverage gap |p̂_t − {TARGET_COVERAGE:g}| "
        "per round, from "
        "an open circle (first BO round) to a filled one (last), seed means without error bars."
        + (f" {floored} seed-mean regrets are exactly zero: hollow markers on the panel's floor." if floored else "")
        + " "
        + style.StandIns.of(tables["readings"]).note(data["method"], [figure.task])
    ).strip()
    return fig, f"Diagnostics: {figure.task} ({figure.experiment})", caption


def _sharpness_calibration(ax: Axes, data: pd.DataFrame, styles: style.Styles) -> None:
    wide = data[(data["phase"] == "bo") & data["metric"].isin(["mean_halfwidth", "coverage_gap"])]
    wide = wide.pivot(index=["method", "step"], columns="metric", values="mean")
    wide = wide.reindex(columns=["mean_halfwidth", "coverage_gap"]).dropna().reset_index()
    for method, line in wide.groupby("method", sort=True):
        look = styles[method]
        x, y = thin(line["mean_halfwidth"].to_numpy()), thin(line["coverage_gap"].to_numpy())
        ax.plot(x, y, color=look.color, lw=1.0, alpha=0.8, ls=look.line)
        ax.scatter(x[:1], y[:1], facecolor="white", edgecolor=look.color, s=16, zorder=2)
        ax.scatter(x[-1:], y[-1:], color=look.color, marker=look.marker, edgecolor="black", lw=0.5, s=36, zorder=3)
    positive = wide["mean_halfwidth"][wide["mean_halfwidth"] > 0]
    if len(positive) and positive.max() >= 10 * positive.min():
        style.log_axis(ax, "x")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("mean half-width (sharper: left)")
    ax.set_ylabel(f"coverage gap |p̂ₜ − {TARGET_COVERAGE:g}|")
    ax.set_title("sharpness–calibration")


def ard_lengthscales(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """The final lengthscale of each input dimension, per task and method (ARD experiment)."""
    table = tables["lengthscales"]
    data = table[table["experiment"] == figure.experiment]
    tasks = figure.tasks(data["task"])
    fig, axes = style.grid(max(len(tasks), 1))
    methods = sorted(data["method"].unique())
    for ax, task in zip(axes, tasks):
        rows = data[data["task"] == task]
        for k, method in enumerate(methods):
            line = rows[rows["method"] == method]
            look = styles[method]
            shift = (k - (len(methods) - 1) / 2) * 0.08
            ax.errorbar(
                line["dimension"] + shift,
                10 ** line["log10_mean"],
                yerr=[
                    10 ** line["log10_mean"] - 10 ** (line["log10_mean"] - line["log10_se"].fillna(0)),
                    10 ** (line["log10_mean"] + line["log10_se"].fillna(0)) - 10 ** line["log10_mean"],
                ],
                fmt=look.marker,
                color=look.color,
                ms=4,
                capsize=2,
                lw=1,
            )
        style.log_axis(ax)
        dims = sorted(rows["dimension"].unique())
        ax.set_xticks(dims, [str(int(d)) for d in dims])
        ax.set_xlabel("input dimension")
        ax.set_ylabel("final lengthscale")
        ax.set_title(task_name(task))
    style.legend(fig, *styles.handles(methods))
    caption = (
        f"The final lengthscale of each input dimension (the one that chose the last query), per task and "
        f"method of '{figure.experiment}': geometric mean over {seeds_note(data['n'])} with ± one standard "
        "error of log10 (not in the paper, whose lengthscale figures average the dimensions away). "
        "VanillaBO's Theta reaches 1e2, the other methods' 10."
    )
    return fig, f"ARD lengthscales per dimension ({figure.experiment})", caption
