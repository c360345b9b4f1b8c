"""Curves over oracle calls: regret (Figs. 2, S1, S2), wall-clock (S4), lengthscale and growth (known truth).

A panel per task, mean ± one standard error over seeds (the ``curves`` table). Regret is drawn
on a log axis. A task whose optimum is unknown (Lunar Lander) has no regret to draw: its panel
shows the best reward found (simple) or the mean reward of the queries so far (cumulative), on a
linear axis, and the caption says so. Where a seed-mean regret is exactly zero (the optimum
found) the log axis has no place for it: the panel gets a floor a decade below its smallest
positive value, the zeros are drawn on it as hollow markers, and the caption counts them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from oscbo.figures import style
from oscbo.figures.plan import Figure
from oscbo.paper import ablation_change, task_name

#: What a regret metric becomes on a task whose optimum is unknown: (curve metric, axis label).
UNKNOWN_OPTIMUM = {
    "simple_regret": ("best_f", "best reward found"),
    "cumulative_regret": ("average_f", "mean reward of the queries"),
}
LABELS = {"simple_regret": "simple regret", "cumulative_regret": "cumulative regret"}
#: Markers on a line: about this many per curve.
MARKS = 5


def _every(step: int) -> str:
    """Which rounds a thinned curve goes through, in words: "every other round", "every 3rd round"."""
    if step == 2:
        return "every other round"
    suffix = "th" if 10 <= step % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(step % 10, "th")
    return f"every {step}{suffix} round"


def seeds_note(counts: pd.Series) -> str:
    """``"2 seeds"``, or ``"1-2 seeds"`` when the counts differ."""
    low, high = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    return f"{high} seed{'s' * (high != 1)}" if low == high else f"{low}–{high} seeds"


def unknown_optimum(tables: dict[str, pd.DataFrame]) -> set[str]:
    """The tasks whose f* is unknown (their regret is against the best value seen: ``ranks``)."""
    ranks = tables["ranks"]
    return set(ranks.loc[~ranks["f_star_known"].astype(bool), "task"])


#: A curve is drawn through at most this many of its rounds (evenly spaced, the last kept): at the
#: report's width 100 rounds are 10 px apart, and halving them halves the figure's weight.
MAX_POINTS = 55


def thin(values: np.ndarray) -> np.ndarray:
    """Every k-th value (k the smallest stride that keeps at most MAX_POINTS), and the last."""
    stride = -(-len(values) // MAX_POINTS)
    if stride <= 1:
        return values
    keep = np.unique(np.r_[np.arange(0, len(values), stride), len(values) - 1])
    return values[keep]


def draw_lines(ax: Axes, data: pd.DataFrame, styles: style.Styles, *, log: bool, bo_only: bool = False) -> int:
    """Mean ± s.e. of every method of one panel (``curves`` rows of one task and metric); returns
    how many means sat at zero and were drawn on the floor (log axes only)."""
    if bo_only:
        data = data[data["phase"] == "bo"]
    floor, floored = None, 0
    if log:
        positive = data.loc[data["mean"] > 0, "mean"]
        floor = 10 ** (np.floor(np.log10(positive.min())) - 1) if len(positive) else 1e-8
    for method, line in data.groupby("method", sort=True):
        step, mean, se = (thin(line[c].to_numpy(float)) for c in ("step", "mean", "se"))
        look = styles[method]
        style.plotted(line.iloc[0], method=method, step=step, mean=mean, se=se)
        low, high = mean - np.nan_to_num(se), mean + np.nan_to_num(se)
        if log:
            at_floor = mean <= floor
            floored += int(at_floor.sum())
            mean, low, high = (np.maximum(v, floor) for v in (mean, low, high))
            if at_floor.any():
                ax.scatter(step[at_floor], mean[at_floor], facecolor="none", edgecolor=look.color, s=14, zorder=3)
        every = max(1, len(step) // MARKS)
        ax.plot(
            step,
            mean,
            color=look.color,
            marker=look.marker,
            markevery=every,
            ms=4,
            lw=1.3,
            ls=look.line,
            markerfacecolor=look.face,
            label=method,
        )
        if np.isfinite(se).any():
            ax.fill_between(step, low, high, color=look.color, alpha=0.15, lw=0)
    if log:
        style.log_axis(ax)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    bo = data.loc[data["phase"] == "bo", "step"]
    if len(bo) and not bo_only:
        ax.axvline(bo.min(), color="0.5", ls=":", lw=1, label=style.GUIDE)
    return floored


def regret_curves(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Simple or cumulative regret per task (Figs. 2, S1, S2; known truth)."""
    metric = figure.options["metric"]
    curves = tables["curves"]
    data = curves[curves["experiment"] == figure.experiment]
    if "methods" in figure.options:
        data = data[data["method"].isin(figure.options["methods"])]
    tasks = figure.tasks(data["task"])
    unknown = unknown_optimum(tables)
    fig, axes = style.grid(max(len(tasks), 1))
    floored, shown, seeds = 0, set(), []
    for ax, task in zip(axes, tasks):
        if task in unknown:
            name, label = UNKNOWN_OPTIMUM[metric]
            panel = data[(data["task"] == task) & (data["metric"] == name)]
            draw_lines(ax, panel, styles, log=False, bo_only=metric == "cumulative_regret")
            ax.set_ylabel(f"{label} (f* unknown)")
        else:
            panel = data[(data["task"] == task) & (data["metric"] == metric)]
            floored += draw_lines(ax, panel, styles, log=True, bo_only=metric == "cumulative_regret")
            ax.set_ylabel(LABELS[metric])
        shown.update(panel["method"])
        seeds.append(panel["n"])
        ax.set_title(task_name(task))
        ax.set_xlabel("oracle call")
    style.legend(fig, *styles.handles(shown))
    what = LABELS[metric]
    change = ablation_change(figure.experiment)
    absent = tables["not_run"]
    absent = absent[(absent["experiment"] == figure.experiment) & absent["task"].isin(tasks)]
    if "methods" in figure.options:  # a figure of some methods notes only theirs
        absent = absent[absent["method"].isin(figure.options["methods"])]
    longest = int(data.groupby(["task", "method", "metric"])["step"].size().max()) if len(data) else 0
    caption = (
        (f"Ablation: {change}; everything else as in the main experiment. " if change else "")
        + f"{what.capitalize()} against the oracle call, per task: the seeds' mean {what} (the mean of the "
        f"regret, not of its logarithm) over {seeds_note(pd.concat(seeds) if seeds else pd.Series(dtype=int))}, "
        "its band one standard error of that mean (log axis). "
        + (
            "The dotted line marks the first BO round (before it: the shared initial design). "
            if metric == "simple_regret"
            else "BO rounds only (the initial design adds none). "
        )
        + (
            f"Tasks whose optimum is unknown ({', '.join(sorted(unknown & set(tasks)))}) show the "
            f"{UNKNOWN_OPTIMUM[metric][1]} instead, on a linear axis (higher is better): a regret against the best "
            "run of the study would put that run at zero. "
            if unknown & set(tasks)
            else ""
        )
        + (
            f"{floored} seed-mean values are exactly zero (the optimum found): hollow markers on the panel's floor, a "
            "decade below its smallest positive value. "
            if floored
            else ""
        )
    )
    if len(absent):
        caption += (
            "Not run here: "
            + "; ".join(
                f"{style.shown_name(method)} ({group['reason'].iloc[0]})"
                for method, group in absent.groupby("method", sort=True)
            )
            + ". "
        )
    if len(thin(np.arange(longest))) < longest:
        caption += (
            f"Each curve is drawn through {_every(-(-longest // MAX_POINTS))} and its last (its CSV: those "
            "points; the curves table: every round). "
        )
    caption += " " + style.StandIns.of(tables["readings"]).note(shown, tasks)
    title = {"simple_regret": "Simple regret", "cumulative_regret": "Cumulative regret"}[metric]
    if "methods" in figure.options:
        title += ": " + " vs ".join(figure.options["methods"])
    return fig, f"{title} ({figure.experiment})", caption.strip()


def _task_panels(
    data: pd.DataFrame,
    tasks: list[str],
    styles: style.Styles,
    ylabel: str,
    *,
    log: bool,
    bo_only: bool = False,
    reference: dict[str, float] | None = None,
):
    """One panel per task of a metric against the oracle call, a dashed line at `reference[task]` where given."""
    fig, axes = style.grid(max(len(tasks), 1), columns=3)
    for ax, task in zip(axes, tasks):
        draw_lines(ax, data[data["task"] == task], styles, log=log, bo_only=bo_only)
        if reference and task in reference:
            ax.axhline(reference[task], color="black", ls="--", lw=1, label=style.GUIDE)
        ax.set_title(task_name(task))
        ax.set_xlabel("oracle call")
        ax.set_ylabel(ylabel)
    style.legend(fig, *styles.handles(data["method"]))
    return fig


def wallclock(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Cumulative wall-clock per task (Fig. S4)."""
    curves = tables["curves"]
    data = curves[(curves["experiment"] == figure.experiment) & (curves["metric"] == "wallclock")]
    tasks = figure.tasks(data["task"])
    fig = _task_panels(data, tasks, styles, "cumulative wall-clock (s)", log=False)
    caption = (
        f"Cumulative fit + acquisition + oracle time against the oracle call, per task: mean ± one standard "
        f"error over {seeds_note(data['n'])}, each run alone on one thread (a batched job's time would be "
        f"divided by its seeds), on {machines(tables['provenance'], figure.experiment)}. The dotted line marks "
        "the first BO round."
    )
    return fig, f"Wall-clock ({figure.experiment})", caption


def machines(provenance: pd.DataFrame, experiment: str) -> str:
    """The machines an experiment's runs ran on, as their sidecars name them (``"a machine not
    recorded"`` where none does)."""
    named = sorted(set(provenance.loc[provenance["experiment"] == experiment, "hardware"]) - {""})
    return "; ".join(named) or "a machine not recorded"


def lengthscale_curves(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """The lengthscale that chose each query, per task, with a known-truth task's true value."""
    curves = tables["curves"]
    data = curves[
        (curves["experiment"] == figure.experiment) & (curves["metric"] == "lengthscale") & (curves["phase"] == "bo")
    ]
    tasks = sorted(data["task"].unique())
    truth = tables["tasks"].set_index("task")["true_lengthscale_standardised"].dropna()
    fig = _task_panels(
        data, tasks, styles, "lengthscale (geometric mean)", log=True, bo_only=True, reference=truth.to_dict()
    )
    caption = (
        f"The lengthscale of the posterior that chose each query (paper Fig. S3, last column), per task: mean "
        f"± one standard error over {seeds_note(data['n'])}, log axis. Dashed: the task's true lengthscale, "
        "rescaled to y standardised over the domain (l s^(2/5)), the value a well-specified fit should find."
    )
    return fig, f"Lengthscale against the truth ({figure.experiment})", caption


#: The theory's quantities (section 6) on the known-truth tasks: curve metric -> its value per BO round.
GROWTH = {"cumulative_regret": "R_t / t", "violation_positive": "Vₜ⁺ / t"}


def growth_curves(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Cumulative regret and positive calibration violation per BO round, R_t / t and Vₜ⁺ / t,
    against the round t on log-log axes, a panel per (task, quantity): the theory's claims."""
    curves = tables["curves"]
    data = curves[
        (curves["experiment"] == figure.experiment) & (curves["phase"] == "bo") & curves["metric"].isin(list(GROWTH))
    ]
    tasks = figure.tasks(data["task"])
    panels = [(task, metric) for task in tasks for metric in GROWTH]
    fig, axes = style.grid(max(len(panels), 1))
    floored, seeds = 0, []
    for ax, (task, metric) in zip(axes, panels):
        panel = data[(data["task"] == task) & (data["metric"] == metric)]
        rounds = panel["step"] - panel.groupby("method")["step"].transform("min") + 1  # t = 1 at the first BO round
        panel = panel.assign(step=rounds, mean=panel["mean"] / rounds, se=panel["se"] / rounds)
        # the rounds drawn evenly spaced on the log axis (thin() spaces them evenly on a linear one)
        spaced = np.unique(np.rint(np.geomspace(1, max(int(rounds.max()), 1), MAX_POINTS))) if len(panel) else []
        panel = panel[panel["step"].isin(spaced)]
        floored += draw_lines(ax, panel, styles, log=True, bo_only=True)
        style.log_axis(ax, "x")
        seeds.append(panel["n"])
        ax.set_title(f"{task_name(task)}: {GROWTH[metric]}")
        ax.set_xlabel("BO round t")
        ax.set_ylabel(GROWTH[metric])
    style.legend(fig, *styles.handles(data["method"]))
    caption = (
        "The theory's two quantities per BO round on the known-truth tasks (GP samples from the surrogate's own "
        "kernel, where the theorem's assumptions hold): the cumulative regret R_t / t and the cumulative positive "
        "calibration violation Vₜ⁺ / t against the round t, log-log, mean ± one standard error over "
        f"{seeds_note(pd.concat(seeds) if seeds else pd.Series(dtype=int))}, divided by t. A falling curve is "
        "sublinear growth (paper section 6: OSCBO's violation and regret grow sublinearly); a flat one is linear. "
        "GP-UCB at the true kernel is the bound's reference point. The theory's claims give each method's fitted "
        "slope of log R_t and log Vₜ⁺ against log t with its seed-resampling interval: a consistency check of the "
        "theorem's qualitative prediction, not of its constants."
        + (
            f" {floored} seed-mean values are exactly zero: hollow markers on the panel's floor, a decade below its "
            "smallest positive value."
            if floored
            else ""
        )
    )
    return fig, f"Growth of regret and calibration violation ({figure.experiment})", caption
