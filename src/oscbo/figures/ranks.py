"""Final-regret distributions and ranks (Fig. 2 right and lower right, Fig. S1, Fig. 3 top).

Ranks are those of the default reading (every stand-in left out; :mod:`oscbo.analysis.readings`): the
``ranks`` and ``mean_ranks`` tables as the figures receive them. A task whose optimum is unknown
is ranked by its regret against the best value seen, the same order as by the best reward found,
which its panels show.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from oscbo.figures import style
from oscbo.figures.curves import UNKNOWN_OPTIMUM, seeds_note, unknown_optimum
from oscbo.figures.plan import CALIBRATION_PAIR, TOP, Figure
from oscbo.paper import REGRET_METRICS, task_name

RANK_COLUMNS = {"simple_regret": "rank_simple", "cumulative_regret": "rank_cumulative"}
#: A box needs this many values to say more than the points themselves.
MIN_BOX = 5


def strip(ax: Axes, values: list[np.ndarray], labels: list[str], styles: style.Styles) -> None:
    """Every value as a point (spread evenly, so the figure is the same on every run), the mean as
    a white diamond, and a quartile box where there are at least :data:`MIN_BOX` values."""
    for position, (points, label) in enumerate(zip(values, labels), start=1):
        look = styles[label]
        if len(points) >= MIN_BOX:
            box = ax.boxplot(
                [points],
                positions=[position],
                widths=0.6,
                patch_artist=True,
                showfliers=False,
                medianprops={"color": "black"},
            )
            box["boxes"][0].set(facecolor=look.color, alpha=0.3)
        offsets = np.linspace(-0.18, 0.18, len(points)) if len(points) > 1 else np.zeros(len(points))
        ax.scatter(
            position + offsets,
            points,
            facecolor=look.face,
            marker=look.marker,
            edgecolor=look.color if look.stand_in else "black",
            lw=0.6 if look.stand_in else 0.3,
            s=16,
            zorder=2,
        )
        if len(points):
            ax.scatter([position], [np.mean(points)], marker="D", color="white", edgecolor="black", s=20, zorder=3)
    ax.set_xticks(range(1, len(labels) + 1), [style.shown_name(label) for label in labels], rotation=35, ha="right")
    ax.set_xlim(0.4, len(labels) + 0.6)


def _titled(figure: Figure) -> str:
    """``main``, or ``main, λ₀ = 0.433`` for a figure of a reading."""
    words = figure.options.get("reading_shown", "")
    return f"{figure.experiment}, {words}" if words else str(figure.experiment)


def lunar_value(runs: pd.DataFrame, final: pd.DataFrame, metric: str, unknown: bool) -> np.ndarray:
    """Per seed, what a final-regret figure shows: the regret; for a task whose optimum is unknown,
    what its curves show (the best reward found; the mean reward of the BO queries, which is the
    study's best value less the cumulative regret over the BO rounds, divided by them)."""
    if not unknown:
        return runs[metric].to_numpy(float)
    if metric == "simple_regret":
        return runs["best_f"].to_numpy(float)
    best = final.loc[final["task"].isin(runs["task"]), "best_f"].max()
    return (best - runs["cumulative_regret"] / runs["bo_rounds"]).to_numpy(float)


def final_top(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Each task's final regret, one point per seed, of its :data:`TOP` best methods (Fig. 2, right)."""
    metric = figure.options["metric"]
    ranks = tables["ranks"][tables["ranks"]["experiment"] == figure.experiment]
    final = tables["final"][tables["final"]["experiment"] == figure.experiment]
    tasks = figure.tasks(ranks["task"])
    unknown = unknown_optimum(tables)
    fig, axes = style.grid(max(len(tasks), 1))
    counts = []
    for ax, task in zip(axes, tasks):
        top = ranks[ranks["task"] == task].sort_values([RANK_COLUMNS[metric], "label"]).head(TOP)
        runs = final[final["task"] == task]
        values = [
            lunar_value(runs[runs["method"] == label], tables["final"], metric, task in unknown)
            for label in top["label"]
        ]
        counts += [len(v) for v in values]
        strip(ax, values, list(top["label"]), styles)
        flat = np.concatenate(values) if values else np.array([])
        if task not in unknown and len(flat) and flat.min() > 0 and flat.max() >= 10 * flat.min():
            style.log_axis(ax)
        ax.set_title(task_name(task))
        ax.set_ylabel(UNKNOWN_OPTIMUM[metric][1] if task in unknown else f"final {metric.replace('_', ' ')}")
    what = metric.replace("_", " ")
    caption = (
        f"Final {what} of the {TOP} methods with the lowest seed-mean on each task (the default reading's ranks; "
        f"paper Fig. {'2' if metric == 'simple_regret' else 'S1'}, right of each panel): one point per seed "
        f"({seeds_note(pd.Series(counts))}), white diamond = mean"
        + (
            f", box = quartiles (from {MIN_BOX} seeds on)"
            if max(counts, default=0) >= MIN_BOX
            else f" (no box below {MIN_BOX} seeds)"
        )
        + ". Log axis where a panel's values span a factor of 10 or more."
        + (
            f" {', '.join(sorted(unknown & set(tasks)))}: the {UNKNOWN_OPTIMUM[metric][1]} (f* unknown; higher is "
            "better), as in the curves."
            if unknown & set(tasks)
            else ""
        )
    )
    return fig, f"Final {what}, top {TOP} per task ({_titled(figure)})", caption


def rank_distribution(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Each method's rank on each task (left) and their distribution across tasks (right)."""
    metric = figure.options["metric"]
    ranks = tables["ranks"][tables["ranks"]["experiment"] == figure.experiment]
    table = ranks.pivot(index="task", columns="label", values=RANK_COLUMNS[metric])
    table = table[table.mean().sort_values(kind="stable").index]  # best mean rank first
    fig, (left, right) = style.grid(2, columns=2, row_height=max(style.ROW_HEIGHT, 1.3 + 0.32 * len(table)))
    values = table.to_numpy(float)
    image = left.imshow(values, cmap="viridis_r", aspect="auto", vmin=1, vmax=max(table.shape[1], 2))
    shown = [style.shown_name(label) for label in table.columns]
    left.set_xticks(range(table.shape[1]), shown, rotation=35, ha="right")
    left.set_yticks(range(table.shape[0]), table.index)
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            left.text(
                j,
                i,
                f"{value:g}",
                ha="center",
                va="center",
                fontsize=style.MIN_FONT,
                color="white" if value > table.shape[1] / 2 else "black",
            )
    fig.colorbar(image, ax=left, label="rank", shrink=0.8)
    left.set_title("rank per task")
    strip(right, [table[m].dropna().to_numpy() for m in table.columns], list(table.columns), styles)
    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_ylabel("rank (1 = lowest regret)")
    right.set_title(f"across {len(table)} tasks")
    what = metric.replace("_", " ")
    n = ranks["n"]
    caption = (
        f"Rank of each method's seed-mean final {what} within each task ({seeds_note(n)} per mean; 1 = lowest, ties "
        f"share the average rank; {style.reading_phrase(figure.options.get('reading_shown'))}): per task (left) and "
        "across "
        "tasks (right: one point per task, "
        "white diamond = mean rank"
        + (", box = quartiles" if len(table) >= MIN_BOX else "")
        + "). Methods ordered by mean rank "
        f"(paper Fig. {'2' if metric == 'simple_regret' else 'S1'}, lower right)."
        + (
            f" {', '.join(sorted(unknown_optimum(tables) & set(table.index)))} is ranked by the "
            f"{UNKNOWN_OPTIMUM[metric][1]} (f* unknown; the same order as its regret against the study's best run)."
            if unknown_optimum(tables) & set(table.index)
            else ""
        )
        + " "
        + style.StandIns.of(tables["readings"]).note(table.columns)
    ).strip()
    return fig, f"Final {what} ranks ({_titled(figure)})", caption


def mean_rank(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """Mean rank ± s.e. over tasks, one panel per experiment, and OSCBO vs OSCBO-L1 (Fig. 3 top)."""
    mean_ranks = tables["mean_ranks"]
    simple = mean_ranks[mean_ranks["metric"] == "simple_regret"]
    present = set(simple["experiment"])
    panels = [
        e
        for e in figure.options["experiments"]
        if e in present and int(simple.loc[simple["experiment"] == e, "n_tasks"].max()) > 1
    ]
    skipped = [e for e in figure.options["experiments"] if e in present and e not in panels]
    main = figure.options["experiments"][0] if figure.options["experiments"] else None
    pair = main in panels and set(CALIBRATION_PAIR) <= set(simple.loc[simple["experiment"] == main, "method"])
    n_methods = int(simple["n_methods"].max()) if len(simple) else 1
    fig, axes = style.grid(len(panels) + pair, columns=3, row_height=max(style.ROW_HEIGHT, 1.0 + 0.3 * n_methods))
    for ax, name in zip(axes, panels):
        data = simple[simple["experiment"] == name].sort_values(["rank_mean", "method"])
        for y, row in enumerate(data.itertuples()):
            look = styles[row.method]
            ax.errorbar(
                row.rank_mean,
                y,
                xerr=row.rank_se if np.isfinite(row.rank_se) else None,
                fmt=look.marker,
                color=look.color,
                capsize=3,
                ms=5,
            )
        ax.set_yticks(range(len(data)), [style.shown_name(label) for label in data["method"]])
        ax.set_ylim(len(data) - 0.5, -0.5)
        ax.set_xlim(0.5, max(int(data["n_methods"].max()), 2) + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("mean rank over tasks (1 = best)")
        ax.set_title(f"{name} ({int(data['n_tasks'].max())} tasks)")
    caption = (
        "Paper Fig. 3, top. Per experiment: final simple regret averaged over seeds per task and method, methods "
        "ranked within each task (1 = lowest; ties share the average rank), ranks averaged over tasks: mean ± one "
        f"standard error over tasks ({style.reading_phrase(figure.options.get('reading_shown'))}). Best on top."
        + (f" Not drawn: {', '.join(skipped)} (one task: a mean rank over one task is its rank)." if skipped else "")
    )
    if pair:
        ax = axes[len(panels)]
        data = mean_ranks[mean_ranks["experiment"] == main].set_index(["metric", "method"])
        bars = [(m, method) for m in REGRET_METRICS for method in CALIBRATION_PAIR]
        rows = data.loc[bars]
        positions = np.arange(len(bars)) + np.repeat([0.0, 0.5], len(CALIBRATION_PAIR))
        ax.barh(
            positions,
            rows["normalised_mean"],
            xerr=rows["normalised_se"].fillna(0.0),
            color=[styles[method].color for _, method in bars],
            alpha=0.8,
            capsize=3,
        )
        ax.set_yticks(positions, [f"{style.shown_name(method)}: {m.split('_')[0]}" for m, method in bars])
        ax.set_ylim(positions[-1] + 0.6, -0.6)
        ax.set_xlim(left=0)
        ax.set_xlabel("mean normalised final regret")
        ax.set_title(f"{' vs '.join(map(style.shown_name, CALIBRATION_PAIR))} ({main})")
        caption += (
            f" Last panel: {' vs '.join(CALIBRATION_PAIR)} in '{main}', final regret normalised per task (the "
            "seed-mean divided by the largest seed-mean of the task's methods; 1 = the task's worst), averaged "
            "over tasks ± s.e.; lower is better."
        )
    words = figure.options.get("reading_shown", "")
    return fig, "Mean rank across tasks" + (f" ({words})" if words else ""), caption
