"""Matplotlib figures of the summary tables written by :mod:`oscbo.aggregate`.

Every figure is drawn from ``curves`` or ``ranks`` as they are (nothing is recomputed here),
carries a provenance footer (config hash, git commit, date), and is described by a dict that
names the tables it read, so the report can say what produced it. One set of figures per
experiment: simple and cumulative regret curves (paper Fig. 2, S1), final-regret ranks
(Fig. 2 lower right), lengthscale trajectories, per-task diagnostics (Fig. S3) and cumulative
wall-clock (Fig. S4).
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
from matplotlib.ticker import MaxNLocator  # noqa: E402

from oscbo import aggregate, records  # noqa: E402

DPI = 110
PANEL_SIZE = (3.6, 2.7)  # inches per panel
MAX_COLUMNS = 4

#: Regret is drawn on a log scale; values below this (zero regret: the optimum was found)
#: are drawn at it.
REGRET_FLOOR = 1e-12
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

Described = tuple[Figure, str, str]  # a drawn figure, its title and its caption
#: Draws one experiment's figure from one summary table, given the method colours.
Drawer = Callable[[pd.DataFrame, str, dict[str, str]], Described]


@dataclass(frozen=True)
class CurveMetric:
    """How to draw one ``curves`` metric against the oracle call."""

    metric: str
    label: str
    log: bool = False
    floor: float | None = None
    bo_only: bool = False  # skip the initial design, where the metric is zero by definition


SIMPLE_REGRET = CurveMetric("simple_regret", "simple regret", log=True, floor=REGRET_FLOOR)
CUMULATIVE_REGRET = CurveMetric(
    "cumulative_regret", "cumulative regret", log=True, floor=REGRET_FLOOR, bo_only=True
)
LENGTHSCALE = CurveMetric("lengthscale", r"lengthscale $\hat\theta_t$ (geometric mean)", log=True)
WALLCLOCK = CurveMetric("wallclock", "cumulative wall-clock (s)")
VIOLATION = CurveMetric("violation_positive", r"$V_t^+$", log=True, floor=VIOLATION_FLOOR)
DIAGNOSTICS = [
    CurveMetric("coverage", r"coverage $\hat p_t$"),
    CurveMetric("mean_halfwidth", "mean interval half-width"),
    VIOLATION,
    CurveMetric("lambda", r"multiplier $\lambda_{t-1}$"),
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
        One dict per figure, in drawing order: ``id`` (``{experiment}-{kind}``, also the file
        stem), ``title``, ``caption``, ``path`` (of the PNG), ``experiment``, ``sources`` (the
        summary files read) and ``producer`` (the function that drew it).
    """
    summary_dir, out_dir = Path(summary_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = aggregate.load(summary_dir, sorted({table for _, table, _ in FIGURES}))
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
    for experiment in sorted(curves["experiment"].unique()):
        for kind, table, draw in FIGURES:
            figure, title, caption = draw(tables[table], experiment, colors)
            figure_id = f"{experiment}-{kind}"
            path = out_dir / f"{figure_id}.png"
            _save(figure, path, footer)
            described.append(
                {
                    "id": figure_id,
                    "title": f"{title} ({experiment})",
                    "caption": caption,
                    "path": str(path),
                    "experiment": experiment,
                    "sources": [str(aggregate.table_path(summary_dir, table))],
                    "producer": f"oscbo.figures.make_figures ({kind})",
                }
            )
    return described


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
        figsize=(panel_size[0] * columns, panel_size[1] * rows + 0.8),
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
    figure.legend(handles, methods, loc="outside lower center", ncol=min(len(methods), 5), frameon=False)


def _seed_note(data: pd.DataFrame) -> str:
    """Mean ± s.e. over how many seeds, said plainly (the s.e. needs two)."""
    n_max = int(data["n"].max()) if len(data) else 0
    if n_max < 2:
        return "A single seed: lines are that seed, with no error band."
    n_min = int(data["n"].min())
    seeds = f"{n_max} seeds" if n_min == n_max else f"{n_min}–{n_max} seeds"
    return f"Mean ± standard error over {seeds}."


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


def _floor_note(raised: int, floor: float | None) -> str:
    if not raised:
        return ""
    return f" On the log scale, means below {floor:g} ({raised} points, zeros included) are drawn at it."


def _curve_figure(
    curves: pd.DataFrame,
    experiment: str,
    colors: dict[str, str],
    *,
    spec: CurveMetric,
    title: str,
    about: str,
) -> Described:
    data = curves[(curves["experiment"] == experiment) & (curves["metric"] == spec.metric)]
    tasks = sorted(data["task"].unique())
    figure, axes = _grid(max(len(tasks), 1))
    raised = 0
    for ax, task in zip(axes.flat, tasks):
        raised += _draw_curves(ax, data[data["task"] == task], spec, colors)
        ax.set_title(task)
        ax.set_xlabel("oracle call")
        ax.set_ylabel(spec.label)
    figure.suptitle(f"{title}: {experiment}")
    _legend(figure, data["method"].unique(), colors)
    caption = (
        f"{about}, per task, against the oracle call. {_seed_note(data)} "
        + _bo_note(spec)
        + _floor_note(raised, spec.floor)
    )
    return figure, title, caption


def _rank_figure(ranks: pd.DataFrame, experiment: str, colors: dict[str, str]) -> Described:
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
    columns = [table[m].dropna().to_numpy() for m in table.columns]
    # No fliers: every task's rank is drawn as a point below.
    boxes = ax.boxplot(
        columns, patch_artist=True, widths=0.6, showfliers=False, medianprops={"color": "black"}
    )
    for position, (box, method) in enumerate(zip(boxes["boxes"], table.columns), start=1):
        box.set_facecolor(colors[method])
        box.set_alpha(0.35)
        # With a handful of tasks the points say more than the box; spread them evenly
        # (not randomly) so the figure is the same on every run.
        ranks = table[method].dropna().to_numpy()
        offsets = np.linspace(-0.18, 0.18, len(ranks)) if len(ranks) > 1 else np.zeros(len(ranks))
        ax.scatter(position + offsets, ranks, color=colors[method], edgecolor="black", lw=0.4, s=14, zorder=2)
    positions = range(1, table.shape[1] + 1)
    ax.scatter(positions, table.mean(), marker="D", color="white", edgecolor="black", zorder=3, s=18)
    ax.set_xticks(positions, table.columns, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("rank (lower is better)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)


def _diagnostics_figure(curves: pd.DataFrame, experiment: str, colors: dict[str, str]) -> Described:
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
            if row == 0:
                ax.set_title(spec.label)
            if column == 0:
                ax.set_ylabel(task, fontsize=11)
            if row == len(tasks) - 1:
                ax.set_xlabel("oracle call")
    figure.suptitle(f"Diagnostics: {experiment}")
    _legend(figure, data["method"].unique(), colors)
    caption = (
        "Per task (rows): empirical coverage p̂_t of the method's own intervals (eq. 3), running "
        "mean interval half-width, positive cumulative calibration violation V_t^+ = max(V_t, 0) "
        "(log scale), the dual multiplier λ_{t−1} (OSCBO variants only) and the lengthscale, "
        f"each over BO rounds (paper Fig. S3). {_seed_note(data)}" + _floor_note(raised, VIOLATION.floor)
    )
    return figure, "Diagnostics", caption


#: The figures drawn for each experiment, in report order: (kind, summary table read, drawer).
#: The figure's id and file stem is ``{experiment}-{kind}``.
FIGURES: list[tuple[str, str, Drawer]] = [
    (
        "simple-regret",
        "curves",
        partial(
            _curve_figure,
            spec=SIMPLE_REGRET,
            title="Simple regret",
            about="Simple regret f* − best f (paper Fig. 2)",
        ),
    ),
    (
        "cumulative-regret",
        "curves",
        partial(
            _curve_figure,
            spec=CUMULATIVE_REGRET,
            title="Cumulative regret",
            about="Cumulative regret over BO rounds (paper Fig. S1)",
        ),
    ),
    ("rank", "ranks", _rank_figure),
    (
        "lengthscale",
        "curves",
        partial(
            _curve_figure,
            spec=LENGTHSCALE,
            title="Lengthscale",
            about="Lengthscale of the posterior that chose each query",
        ),
    ),
    ("diagnostics", "curves", _diagnostics_figure),
    (
        "wallclock",
        "curves",
        partial(
            _curve_figure,
            spec=WALLCLOCK,
            title="Wall-clock",
            about="Cumulative fit + acquisition + oracle time (paper Fig. S4)",
        ),
    ),
]
