"""Matplotlib figures of the summary tables written by :mod:`oscbo.aggregate`.

Every figure is drawn from the summary tables as they are (nothing is recomputed here),
carries a provenance footer (config hash, git commit, date), and is described by a dict that
names the tables it read, so the report can say what produced it. Per experiment: simple and
cumulative regret curves (paper Fig. 2, S1), the final simple regret of each task's top three
methods (Fig. 2), final-regret ranks (Fig. 2 lower right), lengthscale trajectories, per-task
diagnostics (Fig. S3) and the sharpness-calibration plane (Fig. 1 C, S3); cumulative
wall-clock (Fig. S4) for the ``timing`` experiment when there is one, else per experiment.
For the ``dual`` experiment, when there is one: the multiplier's trajectories, and the final
lengthscale and regret against lambda_0 and omega beside GP-UCB-MLL (the report shows these in
its section :data:`DUAL_SECTION`). Once for the study: mean rank across tasks per experiment and
OSCBO vs OSCBO-L1 (Fig. 3 top).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never open a window, even where a display exists

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from oscbo import aggregate, readings, records  # noqa: E402

DPI = 110
PANEL_SIZE = (3.6, 2.7)  # inches per panel
MAX_COLUMNS = 4
#: Figures are at least this wide (inches), so that a one-panel figure still fits its title.
MIN_WIDTH = 5.0
#: Inches per character of a legend label, to fit legend rows to the figure's width.
LEGEND_CHAR_WIDTH = 0.09

#: Regret is drawn on a log scale; values below this (zero regret: the optimum was found)
#: are drawn at it.
REGRET_FLOOR = 1e-12
#: The final-regret and sharpness-calibration panels use a log axis only for values spanning at
#: least LOG_SPAN (a linear axis shows a narrower spread legibly), with ticks at 1, 2 and 5
#: times powers of ten below FEW_DECADES decades, where matplotlib's minor labels collide.
LOG_SPAN = 10.0
FEW_DECADES = 3
#: V_t^+ is a sum of per-round losses clipped to [-1, 1]; below this it is no violation to
#: speak of, and drawing it lower would only stretch the axis.
VIOLATION_FLOOR = 1e-2

#: The paper's method and its main baseline keep the same colours in every figure.
FIXED_COLORS = {"oscbo": "#d62728", "gp-ucb-mll": "#1f77b4"}
PALETTE = [
    color
    for color in matplotlib.colormaps["tab10"].colors + matplotlib.colormaps["tab20"].colors[1::2]
    if matplotlib.colors.to_hex(color) not in FIXED_COLORS.values()
]

#: Fig. S4's experiment: when the study has it, the wall-clock figure is drawn for it alone.
TIMING = "timing"
#: The order of the experiments' figures and of the Fig. 3 mean-rank panels (the paper's);
#: other experiments follow in name order.
EXPERIMENT_ORDER = ["main", "smoothness-nu0.5", "smoothness-nu1.5", "logei", "ard", "dual", "timing"]
#: Experiments without a mean-rank panel: ``timing`` repeats ``main``'s setting on fewer tasks
#: and seeds, to time it.
RANK_PANEL_SKIP = {TIMING}
#: The pair compared in Fig. 3's last panel (normalised simple vs cumulative regret).
CALIBRATION_PAIR = ("oscbo", "oscbo-l1")
#: Final-regret distributions are drawn for this many methods per task (Fig. 2).
TOP_METHODS = 3

Described = tuple[Figure, str, str]  # a drawn figure, its title and its caption
#: Draws a figure from the summary tables it names, for one experiment (None: the whole
#: study), given the method colours.
Drawer = Callable[[dict[str, pd.DataFrame], str | None, dict[str, str]], Described]
#: Which of the study's experiments a figure is drawn for; None stands for the whole study.
Scope = Callable[[list[str]], list[str | None]]


def each_experiment(experiments: list[str]) -> list[str | None]:
    return list(experiments)


def whole_study(experiments: list[str]) -> list[str | None]:
    return [None]


def timing_or_each(experiments: list[str]) -> list[str | None]:
    """:data:`TIMING` alone when the study has it (Fig. S4), else every experiment."""
    return [TIMING] if TIMING in experiments else list(experiments)


def dual_only(experiments: list[str]) -> list[str | None]:
    """The ``dual`` experiment when the study has it, else nothing."""
    return [aggregate.DUAL] if aggregate.DUAL in experiments else []


#: The report section (its id) that shows the dual study's own figures.
DUAL_SECTION = "what-sets-the-lengthscale"


@dataclass(frozen=True)
class FigureSpec:
    """One kind of figure: its id suffix, the summary tables it reads, how and for what, and
    the report section that shows it (None: a section of its own)."""

    kind: str
    tables: tuple[str, ...]
    draw: Drawer
    scope: Scope = each_experiment
    section: str | None = None


@dataclass(frozen=True)
class CurveMetric:
    """How to draw one ``curves`` metric against the oracle call."""

    metric: str
    label: str
    log: bool = False
    log_if_wide: bool = False  # a log axis only where a panel's means span a factor LOG_SPAN
    floor: float | None = None
    bo_only: bool = False  # skip the initial design, where the metric is zero by definition


SIMPLE_REGRET = CurveMetric("simple_regret", "simple regret", log=True, floor=REGRET_FLOOR)
CUMULATIVE_REGRET = CurveMetric(
    "cumulative_regret", "cumulative regret", log=True, floor=REGRET_FLOOR, bo_only=True
)
LENGTHSCALE = CurveMetric("lengthscale", r"lengthscale $\hat\theta_t$ (geometric mean)", log=True)
WALLCLOCK = CurveMetric("wallclock", "cumulative wall-clock (s)")
VIOLATION = CurveMetric("violation_positive", r"$V_t^+$", log=True, floor=VIOLATION_FLOOR)
LAMBDA = CurveMetric("lambda", r"multiplier $\lambda_{t-1}$", log_if_wide=True)
LAMBDA_RELATIVE = CurveMetric("lambda_relative", r"$\lambda_{t-1} / \lambda_0$", log_if_wide=True)
DIAGNOSTICS = [
    CurveMetric("coverage", r"coverage $\hat p_t$"),
    CurveMetric("mean_halfwidth", "mean interval half-width"),
    VIOLATION,
    LAMBDA,
    LENGTHSCALE,
]


def method_colors(methods: Iterable[str]) -> dict[str, str]:
    """A colour per method label: fixed for :data:`FIXED_COLORS`, else by sorted position."""
    others = sorted(set(methods) - set(FIXED_COLORS))
    colors = {method: matplotlib.colors.to_hex(PALETTE[i % len(PALETTE)]) for i, method in enumerate(others)}
    return {**colors, **FIXED_COLORS}


def make_figures(
    summary_dir: str | Path, out_dir: str | Path, provenance: dict[str, Any]
) -> list[dict[str, Any]]:
    """Draw every figure of every experiment in the summaries and save them as PNG.

    Args:
        summary_dir: Folder holding the tables written by :func:`oscbo.aggregate.aggregate`.
        out_dir: Folder for the PNG files; created if missing.
        provenance: The output of :func:`oscbo.provenance.collect` for the study's config;
            its ``config_hash``, ``git_commit`` and ``date`` go in each figure's footer.

    Returns:
        One dict per figure, in drawing order (each experiment's figures, experiments in
        :data:`EXPERIMENT_ORDER`, then the study's): ``id`` (``{experiment}-{kind}``, or
        ``study-{kind}`` for a figure of the whole study; also the file stem), ``title``,
        ``caption``, ``path`` (of the PNG), ``experiment`` (None for the whole study),
        ``sources`` (the summary files read), ``producer`` (the function that drew it) and
        ``section`` (the report section that shows it; None: a section of its own).
    """
    summary_dir, out_dir = Path(summary_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # ranks under the default reading (every stand-in left out); curves show every arm that ran
    tables = readings.select(aggregate.load(summary_dir, sorted({"curves", *(t for spec in FIGURES for t in spec.tables)})))
    curves = tables["curves"]
    colors = method_colors(curves["method"])
    footer = " · ".join(
        [
            f"config {provenance.get('config_hash', 'unknown')}",
            f"commit {provenance.get('git_commit', 'unknown')}",
            str(provenance.get("date", "unknown")),
        ]
    )
    described = []
    for spec, experiment in _plan(curves["experiment"]):
        figure, title, caption = spec.draw(tables, experiment, colors)
        figure_id = _figure_id(spec, experiment)
        path = out_dir / f"{figure_id}.png"
        _save(figure, path, footer)
        described.append(
            {
                "id": figure_id,
                "title": title if experiment is None else f"{title} ({experiment})",
                "caption": caption,
                "path": str(path),
                "experiment": experiment,
                "sources": [str(aggregate.table_path(summary_dir, table)) for table in spec.tables],
                "producer": f"oscbo.figures.make_figures ({spec.kind})",
                "section": spec.section,
            }
        )
    return described


def figure_ids(experiments: Iterable[str]) -> list[str]:
    """The ids of the figures :func:`make_figures` draws for a study of ``experiments``, in order."""
    return [_figure_id(spec, experiment) for spec, experiment in _plan(experiments)]


def _plan(experiments: Iterable[str]) -> list[tuple[FigureSpec, str | None]]:
    """Each figure to draw and its experiment (None: the whole study), in drawing order."""
    ordered = _in_order(experiments)
    plan = [(spec, e) for e in ordered for spec in FIGURES if e in spec.scope(ordered)]
    return plan + [(spec, None) for spec in FIGURES if None in spec.scope(ordered)]


def _figure_id(spec: FigureSpec, experiment: str | None) -> str:
    return f"{'study' if experiment is None else experiment}-{spec.kind}"


def _save(figure: Figure, path: Path, footer: str) -> None:
    figure.text(0.005, 0.005, footer, fontsize=6, color="0.45", ha="left", va="bottom")
    with records.atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=DPI, format="png")
    plt.close(figure)


def _grid(
    count: int, columns: int | None = None, panel_size: tuple[float, float] = PANEL_SIZE
) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure with ``count`` panels; a strip at the bottom stays free
    for the footer and the legend."""
    columns = columns or min(count, MAX_COLUMNS)
    rows = -(-count // columns)
    figure, axes = plt.subplots(
        rows,
        columns,
        figsize=(max(panel_size[0] * columns, MIN_WIDTH), panel_size[1] * rows + 0.8),
        squeeze=False,
        layout="constrained",
    )
    figure.get_layout_engine().set(rect=(0, 0.025, 1, 0.975))
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return figure, axes


def _legend(figure: Figure, methods: Iterable[str], colors: dict[str, str]) -> None:
    methods = sorted(methods)
    if not methods:
        return
    handles = [Line2D([], [], color=colors[m], lw=2) for m in methods]
    # As many entries per row as fit the figure's width (a line, a gap and the label).
    fits = int(figure.get_figwidth() / (0.6 + LEGEND_CHAR_WIDTH * max(map(len, methods))))
    columns = max(1, min(len(methods), 5, fits))
    figure.legend(handles, methods, loc="outside lower center", ncol=columns, frameon=False)


def _seed_note(data: pd.DataFrame) -> str:
    """Mean ± s.e. over how many seeds, said plainly (the s.e. needs two)."""
    n_max = int(data["n"].max()) if len(data) else 0
    if n_max < 2:
        return "A single seed: lines are that seed, with no error band."
    return f"Mean ± standard error over {_seeds(data['n'])}."


def _seeds(counts: pd.Series) -> str:
    """``"2 seeds"``, or ``"1–2 seeds"`` when the counts differ."""
    low, high = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    return f"{high} seed{'s' * (high != 1)}" if low == high else f"{low}–{high} seeds"


def _draw_curves(ax: Axes, data: pd.DataFrame, spec: CurveMetric, colors: dict[str, str]) -> int:
    """Draw one panel's mean ± s.e. lines; return how many means were raised to the floor."""
    raised = 0
    bo = data.loc[data["phase"] == "bo", "step"]
    if spec.bo_only:
        data = data[data["phase"] == "bo"]
    for method, line in data.groupby("method", sort=True):
        step, mean, se = line["step"].to_numpy(), line["mean"].to_numpy(), line["se"].to_numpy()
        low, high = mean - se, mean + se
        if spec.floor is not None:
            raised += int(np.sum(mean < spec.floor))
            mean, low, high = (np.maximum(v, spec.floor) for v in (mean, low, high))
        ax.plot(step, mean, color=colors[method], lw=1.4, label=method)
        if np.isfinite(se).any():
            ax.fill_between(step, low, high, color=colors[method], alpha=0.2, lw=0)
    if spec.log:
        ax.set_yscale("log")
    elif spec.log_if_wide:
        _log_if_wide(ax, "y", data["mean"])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # oracle calls are counts
    if len(bo):
        ax.axvline(bo.min(), color="0.4", ls=":", lw=1)
    return raised


def _bo_note(spec: CurveMetric) -> str:
    if spec.bo_only:
        return (
            "The dotted line marks the first BO round; the initial design, where the value is zero, "
            "is not drawn."
        )
    return "The dotted line marks the first BO round (before it: the shared initial design)."


def _floor_note(raised: int, floor: float | None, what: str = "means") -> str:
    if not raised:
        return ""
    return f" On the log scale, {what} below {floor:g} ({raised} points, zeros included) are drawn at it."


def _curve_figure(
    tables: dict[str, pd.DataFrame],
    experiment: str,
    colors: dict[str, str],
    *,
    spec: CurveMetric,
    title: str,
    about: str,
) -> Described:
    curves = tables["curves"]
    data = curves[(curves["experiment"] == experiment) & (curves["metric"] == spec.metric)]
    tasks = sorted(data["task"].unique())
    figure, axes = _grid(max(len(tasks), 1))
    truth = (
        tables["tasks"].set_index("task")["true_lengthscale_standardised"].dropna()
        if spec is LENGTHSCALE else pd.Series(dtype=float)
    )
    raised, truths = 0, 0
    for ax, task in zip(axes.flat, tasks):
        raised += _draw_curves(ax, data[data["task"] == task], spec, colors)
        if task in truth.index:
            ax.axhline(truth[task], color="black", ls="--", lw=1)
            truths += 1
        ax.set_title(task)
        ax.set_xlabel("oracle call")
        ax.set_ylabel(spec.label)
    figure.suptitle(f"{title}: {experiment}")
    _legend(figure, data["method"].unique(), colors)
    caption = (
        f"{about}, per task, against the oracle call. {_seed_note(data)} "
        + _bo_note(spec)
        + _floor_note(raised, spec.floor)
        + (" The dashed line on a known-truth task (a GP sample path) is its true lengthscale, rescaled "
           "to y standardised over the domain, the value a well-specified fit should find." if truths else "")
    )
    return figure, title, caption


def _rank_figure(tables: dict[str, pd.DataFrame], experiment: str, colors: dict[str, str]) -> Described:
    ranks = tables["ranks"]
    data = ranks[ranks["experiment"] == experiment]
    methods, tasks = data["method"].nunique(), data["task"].nunique()
    # Wide enough for rotated method labels, tall enough for one heatmap row per task.
    panel = (max(PANEL_SIZE[0], 1.5 + 0.5 * methods), max(PANEL_SIZE[1], 1.2 + 0.3 * tasks))
    figure, axes = _grid(4, columns=2, panel_size=panel)
    for row, (column, label) in enumerate([("rank_simple", "simple"), ("rank_cumulative", "cumulative")]):
        table = data.pivot(index="task", columns="method", values=column)
        table = table[table.mean().sort_values(kind="stable").index]  # best mean rank first
        _rank_heatmap(axes[row, 0], table, f"final {label} regret: rank per task")
        _rank_boxplot(axes[row, 1], table, colors, f"final {label} regret: across tasks")
    figure.suptitle(f"Final-regret ranks: {experiment}")
    caption = (
        "Rank of each method's mean final regret within each task (1 = lowest regret, ties share "
        "the average rank): per task (left) and across tasks (right; one point per task, box = "
        "quartiles, white diamond = mean rank). Methods are ordered by mean rank. Top: simple "
        "regret (paper Fig. 2, lower right); bottom: cumulative regret (Fig. S1)."
    )
    return figure, "Final-regret ranks", caption


def _rank_heatmap(ax: Axes, table: pd.DataFrame, title: str) -> None:
    values = table.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="viridis_r", aspect="auto", vmin=1, vmax=max(table.shape[1], 2))
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(table.shape[0]), table.index, fontsize=8)
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            shade = "white" if value > table.shape[1] / 2 else "black"  # legible on viridis_r
            ax.text(j, i, f"{value:g}", ha="center", va="center", fontsize=7, color=shade)
    ax.figure.colorbar(image, ax=ax, label="rank", shrink=0.8)
    ax.set_title(title, fontsize=10)


def _rank_boxplot(ax: Axes, table: pd.DataFrame, colors: dict[str, str], title: str) -> None:
    _box_strip(ax, [table[m].dropna().to_numpy() for m in table.columns], list(table.columns), table.mean(), colors)
    ax.set_ylabel("rank (lower is better)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)


def _box_strip(
    ax: Axes, values: list[np.ndarray], methods: list[str], means: Iterable[float], colors: dict[str, str]
) -> None:
    """A box per method (quartiles, no fliers) with every value drawn as a point and the mean as
    a white diamond."""
    boxes = ax.boxplot(values, patch_artist=True, widths=0.6, showfliers=False, medianprops={"color": "black"})
    for position, (box, method, points) in enumerate(zip(boxes["boxes"], methods, values), start=1):
        box.set_facecolor(colors[method])
        box.set_alpha(0.35)
        # With a handful of values the points say more than the box; spread them evenly
        # (not randomly) so the figure is the same on every run.
        offsets = np.linspace(-0.18, 0.18, len(points)) if len(points) > 1 else np.zeros(len(points))
        ax.scatter(position + offsets, points, color=colors[method], edgecolor="black", lw=0.4, s=14, zorder=2)
    positions = range(1, len(methods) + 1)
    ax.scatter(positions, list(means), marker="D", color="white", edgecolor="black", zorder=3, s=18)
    ax.set_xticks(positions, methods, rotation=40, ha="right", fontsize=8)


def _diagnostics_figure(tables: dict[str, pd.DataFrame], experiment: str, colors: dict[str, str]) -> Described:
    curves = tables["curves"]
    data = curves[curves["experiment"] == experiment]
    tasks = sorted(data["task"].unique())
    # A metric no method of this experiment records (lambda without OSCBO) gets no column.
    panels = [spec for spec in DIAGNOSTICS if (data["metric"] == spec.metric).any()]
    figure, axes = _grid(len(tasks) * len(panels), columns=len(panels))
    raised = 0
    for row, task in enumerate(tasks):
        for column, spec in enumerate(panels):
            ax = axes[row, column]
            panel = data[(data["task"] == task) & (data["metric"] == spec.metric)]
            raised += _draw_curves(ax, panel, spec, colors)
            if spec.metric == "coverage":  # the nominal level 1 - delta
                ax.axhline(aggregate.TARGET_COVERAGE, color="black", ls="--", lw=1)
            if row == 0:
                ax.set_title(spec.label)
            if column == 0:
                ax.set_ylabel(task, fontsize=11)
            if row == len(tasks) - 1:
                ax.set_xlabel("oracle call")
    figure.suptitle(f"Diagnostics: {experiment}")
    _legend(figure, data["method"].unique(), colors)
    caption = (
        "Per task (rows): empirical coverage p̂_t of the method's own intervals (eq. 3; dashed: the "
        f"nominal {aggregate.TARGET_COVERAGE:g}), running "
        "mean interval half-width, positive cumulative calibration violation V_t^+ = max(V_t, 0) "
        "(log scale), the dual multiplier λ_{t−1} (OSCBO variants only) and the lengthscale, "
        f"each over BO rounds (paper Fig. S3). {_seed_note(data)}" + _floor_note(raised, VIOLATION.floor)
    )
    return figure, "Diagnostics", caption




def _final_distribution_figure(tables: dict[str, pd.DataFrame], experiment: str, colors: dict[str, str]) -> Described:
    final = tables["final"][tables["final"]["experiment"] == experiment]
    ranks = tables["ranks"][tables["ranks"]["experiment"] == experiment]
    tasks = sorted(ranks["task"].unique())
    figure, axes = _grid(max(len(tasks), 1))
    raised, shown = 0, set()
    for ax, task in zip(axes.flat, tasks):
        top = ranks[ranks["task"] == task].sort_values(["rank_simple", "method"]).head(TOP_METHODS)
        methods = list(top["method"])
        runs = final[final["task"] == task]
        values = [runs.loc[runs["method"] == m, "simple_regret"].to_numpy(float) for m in methods]
        raised += sum(int(np.sum(v < REGRET_FLOOR)) for v in values)
        values = [np.maximum(v, REGRET_FLOOR) for v in values]
        _box_strip(ax, values, methods, np.maximum(top["simple_regret_mean"], REGRET_FLOOR), colors)
        _log_if_wide(ax, "y", np.concatenate([[], *values]))
        ax.set_title(task)
        ax.set_ylabel("final simple regret")
        shown.update(methods)
    figure.suptitle(f"Final simple regret of the top {TOP_METHODS} methods: {experiment}")
    _legend(figure, shown, colors)
    caption = (
        f"Final simple regret, one point per seed ({_seeds(final.groupby(['task', 'method']).size())}), of the "
        f"{TOP_METHODS} methods with the lowest seed-mean final simple regret on each task (paper Fig. 2, right of "
        "each panel; ties broken by name). Box = quartiles over seeds, white diamond = mean over seeds; log scale where a panel's values span a factor of "
        f"{LOG_SPAN:g} or more."
        + _floor_note(raised, REGRET_FLOOR, "values")
    )
    return figure, f"Final simple regret, top {TOP_METHODS}", caption


def _sharpness_calibration_figure(
    tables: dict[str, pd.DataFrame], experiment: str, colors: dict[str, str]
) -> Described:
    curves = tables["curves"]
    data = curves[
        (curves["experiment"] == experiment)
        & (curves["phase"] == "bo")
        & curves["metric"].isin(["mean_halfwidth", "coverage_gap"])
    ]
    wide = data.pivot(index=["task", "method", "step"], columns="metric", values="mean")
    wide = wide.reindex(columns=["mean_halfwidth", "coverage_gap"]).dropna().reset_index()
    tasks = sorted(curves.loc[curves["experiment"] == experiment, "task"].unique())
    figure, axes = _grid(max(len(tasks), 1))
    for ax, task in zip(axes.flat, tasks):
        for method, line in wide[wide["task"] == task].groupby("method", sort=True):
            x, y, color = line["mean_halfwidth"].to_numpy(), line["coverage_gap"].to_numpy(), colors[method]
            ax.plot(x, y, color=color, lw=1.1, alpha=0.8)
            ax.scatter(x[:1], y[:1], facecolor="white", edgecolor=color, s=16, zorder=2)
            ax.scatter(x[-1:], y[-1:], color=color, edgecolor="black", lw=0.6, s=42, zorder=3)
        _log_if_wide(ax, "x", wide.loc[wide["task"] == task, "mean_halfwidth"])
        ax.set_ylim(bottom=0)
        ax.set_title(task)
        ax.set_xlabel("mean interval half-width (std. y units)")
        ax.set_ylabel(rf"coverage gap $|\hat p_t - {aggregate.TARGET_COVERAGE:g}|$")
    figure.suptitle(f"Sharpness–calibration plane: {experiment}")
    _legend(figure, wide["method"].unique(), colors)
    caption = (
        "Sharpness against calibration over BO rounds (paper Fig. 1 C; the trajectory column of Fig. S3), per task. "
        "x: running mean half-width of the method's own intervals (sharper to the left; units of y standardised "
        f"with the data seen before each round; log scale where it spans a factor of {LOG_SPAN:g} or more). "
        "y: coverage gap |p̂_t − "
        f"{aggregate.TARGET_COVERAGE:g}| of the running empirical coverage (better calibrated lower), taken per "
        "seed and then averaged. Each line follows one method from an open circle (first BO round) to a filled "
        f"circle: its final position after the last round. Points are means over {_seeds(data['n'])}, without "
        "error bars."
    )
    return figure, "Sharpness–calibration plane", caption


#: Line styles of the dual study's omega values, smallest omega first.
OMEGA_STYLES = ["-", "--", ":", "-."]


def _versus_lambda0_figure(
    tables: dict[str, pd.DataFrame],
    experiment: str,
    colors: dict[str, str],
    *,
    metrics: list[tuple[str, str]],
    title: str,
    about: str,
) -> Described:
    """Final values of the multiplier variants against lambda_0, one line per (method, omega),
    beside the GP-UCB-MLL reference; a panel per task (one metric) or a row per task."""
    dual = tables["dual"]
    dual = dual[dual["experiment"] == experiment]
    tasks = sorted(dual["task"].unique())
    if len(metrics) == 1:
        figure, axes = _grid(max(len(tasks), 1))
        panels = [(ax, task, metrics[0]) for ax, task in zip(axes.flat, tasks)]
    else:
        figure, axes = _grid(max(len(tasks), 1) * len(metrics), columns=len(metrics))
        panels = [(axes[row, column], task, metric) for row, task in enumerate(tasks)
                  for column, metric in enumerate(metrics)]
    variants = dual.dropna(subset=["lambda0"])
    names = sorted(variants["method_name"].unique())
    line_colors = {**method_colors(names), **{name: colors[name] for name in names if name in colors}}
    omegas = sorted(variants["omega"].unique())
    styles = {omega: OMEGA_STYLES[i % len(OMEGA_STYLES)] for i, omega in enumerate(omegas)}
    mll_lambda = dual["mll_equivalent_lambda"].dropna().unique()
    raised, references = 0, 0
    for ax, task, (metric, label) in panels:
        rows = dual[dual["task"] == task]
        floor = REGRET_FLOOR if metric != "lengthscale" else None
        shown = []
        reference = rows[rows["method"] == aggregate.TRACKING_REFERENCE]
        if len(reference):
            mean, se = (float(reference[f"{metric}_{part}"].iloc[0]) for part in ("mean", "se"))
            if floor is not None:
                raised += int(mean < floor)
                mean = max(mean, floor)
            ax.axhline(mean, color=FIXED_COLORS[aggregate.TRACKING_REFERENCE], lw=1.2)
            if np.isfinite(se):
                ax.axhspan(max(mean - se, floor or 0), mean + se, color=FIXED_COLORS[aggregate.TRACKING_REFERENCE],
                           alpha=0.15, lw=0)
            shown.append(mean)
            references += 1
        for (name, omega), line in rows.dropna(subset=["lambda0"]).groupby(["method_name", "omega"], sort=True):
            line = line.sort_values("lambda0")
            mean, se = line[f"{metric}_mean"].to_numpy(float), line[f"{metric}_se"].to_numpy(float)
            if floor is not None:
                raised += int(np.sum(mean < floor))
                mean = np.maximum(mean, floor)
            ax.errorbar(line["lambda0"], mean, yerr=np.where(np.isfinite(se), se, 0.0), color=line_colors[name],
                        ls=styles[omega], marker="o", ms=4, lw=1.4, capsize=3)
            shown.extend(mean)
        for value in mll_lambda:
            ax.axvline(value, color="0.4", ls=":", lw=1)
        ax.set_xscale("log")
        ticks = sorted(set(variants["lambda0"]))
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        _log_if_wide(ax, "y", shown)
        ax.set_title(task)
        ax.set_xlabel(r"$\lambda_0$")
        ax.set_ylabel(label)
    figure.suptitle(f"{title}: {experiment}")
    lines = variants[["method_name", "omega"]].drop_duplicates().sort_values(["method_name", "omega"])
    handles = [Line2D([], [], color=line_colors[name], ls=styles[omega], marker="o", lw=1.4)
               for name, omega in lines.itertuples(index=False)]
    labels = [f"{name}, ω = {omega:g}" for name, omega in lines.itertuples(index=False)]
    if references:
        handles.append(Line2D([], [], color=FIXED_COLORS[aggregate.TRACKING_REFERENCE], lw=1.2))
        labels.append(f"{aggregate.TRACKING_REFERENCE} (reference)")
    if len(mll_lambda):
        handles.append(Line2D([], [], color="0.4", ls=":", lw=1))
        labels.append("MLL-equivalent λ")
    if handles:
        fits = int(figure.get_figwidth() / (0.6 + LEGEND_CHAR_WIDTH * max(map(len, labels))))
        columns = max(1, min(len(labels), 4, fits))
        figure.legend(handles, labels, loc="outside lower center", ncol=columns, frameon=False)
    seeds = _seeds(dual["n"]) if len(dual) else "no seeds"
    caption = (
        f"{about} against the initial multiplier λ0 (log axis), per task: mean ± standard error over {seeds} "
        "(no bar with one seed); one line per method and dual step ω (line style). "
        + (f"The horizontal line and band are {aggregate.TRACKING_REFERENCE}'s mean ± s.e. on the same seeds and "
           "initial designs (the dual experiment's reference arm). " if references else
           f"The dual experiment has no {aggregate.TRACKING_REFERENCE} arm, so no reference line is drawn. ")
        + ("The dotted vertical line is the MLL-equivalent λ = β / log(1 + σ⁻²), at which S5 with p = 2 is "
           "proportional to −2 × the marginal log likelihood. " if len(mll_lambda) else "")
        + f"Log y axis where a panel's values span a factor of {LOG_SPAN:g} or more."
        + _floor_note(raised, REGRET_FLOOR, "values")
    )
    return figure, title, caption


def _log_if_wide(ax: Axes, which: str, values: Iterable[float]) -> None:
    """Put axis ``which`` ("x" or "y") on a log scale when the finite ``values`` are positive and
    span at least :data:`LOG_SPAN`; over fewer than :data:`FEW_DECADES` decades, ticks at 1, 2
    and 5 times powers of ten, written plainly, instead of matplotlib's crowded minor labels."""
    values = np.asarray(list(values), dtype=float)
    values = values[np.isfinite(values)]
    if not (len(values) and values.min() > 0 and values.max() >= LOG_SPAN * values.min()):
        return
    getattr(ax, f"set_{which}scale")("log")
    if values.max() < 10**FEW_DECADES * values.min():
        axis = getattr(ax, f"{which}axis")
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())


def _in_order(experiments: Iterable[str]) -> list[str]:
    """The distinct ``experiments`` in :data:`EXPERIMENT_ORDER`, then by name."""
    order = {name: i for i, name in enumerate(EXPERIMENT_ORDER)}
    return sorted(set(experiments), key=lambda e: (order.get(e, len(order)), e))


def _rank_panels(experiments: Iterable[str]) -> list[str]:
    """The experiments with a Fig. 3 mean-rank panel, in order."""
    present = _in_order(experiments)
    return [e for e in present if e not in RANK_PANEL_SKIP] or present


def _mean_rank_figure(tables: dict[str, pd.DataFrame], experiment: None, colors: dict[str, str]) -> Described:
    mean_ranks = tables["mean_ranks"]
    simple = mean_ranks[mean_ranks["metric"] == "simple_regret"]
    panels = _rank_panels(simple["experiment"])
    pair_in = [e for e in panels if set(CALIBRATION_PAIR) <= set(simple.loc[simple["experiment"] == e, "method"])]
    n_methods = int(simple["n_methods"].max()) if len(simple) else 1
    height = max(PANEL_SIZE[1], 1.0 + 0.28 * n_methods)
    figure, axes = _grid(len(panels) + bool(pair_in), panel_size=(PANEL_SIZE[0], height))
    for ax, name in zip(axes.flat, panels):
        data = simple[simple["experiment"] == name].sort_values(["rank_mean", "method"])
        for y, row in enumerate(data.itertuples()):
            error = row.rank_se if np.isfinite(row.rank_se) else None
            ax.errorbar(row.rank_mean, y, xerr=error, fmt="o", color=colors[row.method], capsize=3, ms=5)
        ax.set_yticks(range(len(data)), data["method"], fontsize=8)
        ax.set_ylim(len(data) - 0.5, -0.5)  # best mean rank on top
        ax.set_xlim(0.5, max(int(data["n_methods"].max()), 2) + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("mean rank across tasks (1 = best)")
        tasks = int(data["n_tasks"].max())
        ax.set_title(f"{name} ({tasks} task{'s' * (tasks != 1)})", fontsize=10)
    caption = (
        "Paper Fig. 3, top. Per experiment: final simple regret averaged over seeds per task and method, methods "
        "ranked within each task (1 = lowest; ties share the average rank), ranks averaged over the tasks; "
        "mean ± one standard error over tasks (no bar with one task). Best mean rank on top."
    )
    skipped = sorted(set(simple["experiment"]) - set(panels))
    if skipped:
        caption += f" Not drawn: {', '.join(skipped)} (it repeats the main setting, to time it)."
    if pair_in:
        _pair_panel(axes.flat[len(panels)], mean_ranks, pair_in[0], colors)
        caption += (
            f" Last panel: {CALIBRATION_PAIR[0]} vs {CALIBRATION_PAIR[1]} in '{pair_in[0]}': final regret "
            "normalised per task (the seed-mean of each method divided by the largest seed-mean among all of that "
            "experiment's methods on the task, so 1 = the task's worst method), averaged over tasks ± s.e. over "
            "tasks; lower is better."
        )
    figure.suptitle("Mean rank across tasks")
    return figure, "Mean rank across tasks", caption


def _pair_panel(ax: Axes, mean_ranks: pd.DataFrame, experiment: str, colors: dict[str, str]) -> None:
    """Mean normalised final simple and cumulative regret of the pair, as labelled bars (no
    legend needed: each bar names its method)."""
    data = mean_ranks[mean_ranks["experiment"] == experiment].set_index(["metric", "method"])
    bars = [(metric, method) for metric in ["simple_regret", "cumulative_regret"] for method in CALIBRATION_PAIR]
    rows = data.loc[bars]
    positions = np.arange(len(bars)) + np.repeat([0.0, 0.5], len(CALIBRATION_PAIR))  # a gap between metrics
    ax.barh(
        positions,
        rows["normalised_mean"],
        xerr=rows["normalised_se"].fillna(0.0),  # one task: no error bar
        color=[colors[method] for _, method in bars],
        alpha=0.8,
        capsize=3,
    )
    ax.set_yticks(positions, [f"{method}: {metric.split('_')[0]}" for metric, method in bars], fontsize=8)
    ax.set_ylim(positions[-1] + 0.6, -0.6)
    ax.set_xlim(left=0)
    ax.set_xlabel("mean normalised final regret")
    ax.set_title(f"{' vs '.join(CALIBRATION_PAIR)} ({experiment})", fontsize=10)


#: The figures, in report order; see :class:`FigureSpec`. A figure's id and file stem is
#: ``{experiment}-{kind}`` (``study-{kind}`` for the whole study).
FIGURES: list[FigureSpec] = [
    FigureSpec(
        "simple-regret",
        ("curves",),
        partial(
            _curve_figure,
            spec=SIMPLE_REGRET,
            title="Simple regret",
            about="Simple regret f* − best f (paper Fig. 2)",
        ),
    ),
    FigureSpec("final-distribution", ("final", "ranks"), _final_distribution_figure),
    FigureSpec(
        "cumulative-regret",
        ("curves",),
        partial(
            _curve_figure,
            spec=CUMULATIVE_REGRET,
            title="Cumulative regret",
            about="Cumulative regret over BO rounds (paper Fig. S1)",
        ),
    ),
    FigureSpec("rank", ("ranks",), _rank_figure),
    FigureSpec(
        "lengthscale",
        ("curves", "tasks"),
        partial(
            _curve_figure,
            spec=LENGTHSCALE,
            title="Lengthscale",
            about="Lengthscale of the posterior that chose each query",
        ),
    ),
    FigureSpec("diagnostics", ("curves",), _diagnostics_figure),
    FigureSpec("sharpness-calibration", ("curves",), _sharpness_calibration_figure),
    FigureSpec(
        "wallclock",
        ("curves",),
        partial(
            _curve_figure,
            spec=WALLCLOCK,
            title="Wall-clock",
            about="Cumulative fit + acquisition + oracle time (paper Fig. S4)",
        ),
        scope=timing_or_each,
    ),
    FigureSpec(
        "lambda",
        ("curves",),
        partial(
            _curve_figure,
            spec=LAMBDA_RELATIVE,
            title="Multiplier relative to λ0",
            about="The multiplier λ_{t−1} in force when x_t was chosen, divided by the run's initial λ0 (methods "
                  "with a dual variable; OMD moves it by a factor of at most e^(±ω) per round)",
        ),
        scope=dual_only,
        section=DUAL_SECTION,
    ),
    FigureSpec(
        "lengthscale-vs-lambda0",
        ("dual",),
        partial(
            _versus_lambda0_figure,
            metrics=[("lengthscale", "final lengthscale")],
            title="Lengthscale against λ0",
            about="The lengthscale of the posterior that chose the last query",
        ),
        scope=dual_only,
        section=DUAL_SECTION,
    ),
    FigureSpec(
        "regret-vs-lambda0",
        ("dual",),
        partial(
            _versus_lambda0_figure,
            metrics=[("simple_regret", "final simple regret"), ("cumulative_regret", "final cumulative regret")],
            title="Final regret against λ0",
            about="Final simple regret (left) and cumulative regret (right)",
        ),
        scope=dual_only,
        section=DUAL_SECTION,
    ),
    FigureSpec("mean-rank", ("mean_ranks",), _mean_rank_figure, scope=whole_study),
]
