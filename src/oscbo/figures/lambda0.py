"""The λ₀ study's figures (not in the paper): for which initial multiplier the paper's claims hold,
and how OSCBO's and OSCBO-L1's regret against GP-UCB-MLL moves with it.

λ₀'s values are the headline reading's curve (:func:`oscbo.analysis.readings.curve`: its readings of
λ₀ and the default at λ₀ = 1), on a log axis that marks the MLL-equivalent 0.433 and the default 1.
Both figures read every reading at once (``every_reading``), not one reading's selection.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from oscbo.analysis import readings as readings_
from oscbo.figures import style
from oscbo.figures.plan import Figure
from oscbo.paper import GP_UCB_MLL, MAIN, name, task_name
from oscbo.verdicts import HELD, NOT_APPLICABLE, NOT_HELD, PREMISE_FAILS, TESTED, UNDECIDED

#: A verdict's colour, as the report's verdict cells have it.
VERDICT_COLOURS = {
    HELD: "#dcefd9",
    NOT_HELD: "#f6d5d5",
    UNDECIDED: "#fbf1d0",
    PREMISE_FAILS: "#e8eef6",
}
OTHER_COLOUR = "#eeeeee"
#: The λ₀ values every panel marks: the MLL-equivalent value and the default.
MARKED = (0.433, 1.0)
METRICS = {"simple_regret": "final simple regret", "cumulative_regret": "final cumulative regret"}


def points(tables: dict[str, pd.DataFrame]) -> list[tuple[float, str]]:
    """λ₀'s values and their readings, by value."""
    return readings_.curve(readings_.from_table(tables["readings"]))


def _log_lambda_axis(ax, values: list[float]) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    for value in MARKED:
        if min(values) <= value <= max(values):
            ax.axvline(value, color="0.45", ls=":", lw=1, label=style.GUIDE)
    ax.set_xlabel("λ₀ (dotted: 0.433 and 1)")


def lambda0_claims(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """One row per claim λ₀ bears on, one column per λ₀: its verdict's colour and its share."""
    curve = points(tables)
    claims = tables["claims"]
    names = [reading for _, reading in curve]
    on_curve = claims[claims["reading"].isin(names)]
    bears = [
        claim
        for claim, group in on_curve.groupby("id", sort=False)
        if group.loc[group["reading"] != readings_.DEFAULT, "verdict"].isin(TESTED).any()
    ]
    by = on_curve.set_index(["id", "reading"])
    height = 0.32 * max(len(bears), 1) + 1.3
    fig, (ax,) = style.grid(1, columns=1, row_height=height)
    for row, claim in enumerate(bears):
        for column, reading in enumerate(names):
            found = by.loc[(claim, reading)] if (claim, reading) in by.index else None
            verdict = found["verdict"] if found is not None else NOT_APPLICABLE
            ax.add_patch(
                Rectangle(
                    (column - 0.5, row - 0.5),
                    1,
                    1,
                    facecolor=VERDICT_COLOURS.get(verdict, OTHER_COLOUR),
                    edgecolor="white",
                    lw=1.5,
                )
            )
            shown = f"{found['share']:.0%}" if found is not None and verdict in (*TESTED, PREMISE_FAILS) else "–"
            ax.text(column, row, shown, ha="center", va="center", fontsize=style.MIN_FONT)
            style.plotted(
                pd.Series(dtype=object),
                claim=[claim],
                reading=[reading],
                lambda0=[curve[column][0]],
                verdict=[verdict],
                share=[found["share"] if found is not None else np.nan],
            )
    plain = claims.drop_duplicates("id").set_index("id")["plain"]
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_ylim(len(bears) - 0.5, -0.5)
    ax.set_xticks(range(len(names)), [f"{value:g}" for value, _ in curve])
    for label, (value, _) in zip(ax.get_xticklabels(), curve):
        if value in MARKED:
            label.set_fontweight("bold")
    ax.set_yticks(range(len(bears)), [plain[claim] for claim in bears])
    ax.set_xlabel("λ₀ (bold: 0.433, the MLL-equivalent value, and 1, the default)")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [Patch(facecolor=colour, edgecolor="0.6") for colour in VERDICT_COLOURS.values()]
    style.legend(fig, [*handles, Patch(facecolor=OTHER_COLOUR)], [*VERDICT_COLOURS, "not tested"], columns=5)
    caption = (
        "Each claim that λ₀ bears on (its experiment ran the λ₀ arms), tested at each λ₀ by the registered tests: "
        "its verdict (colour) and the share of 1,000 seed resamples in which it holds. λ₀ = 1 is the protocol's "
        "default; every other column is a reading in which OSCBO and OSCBO-L1 start from that λ₀ instead."
    )
    return fig, "The paper's claims against λ₀", caption


def ratios(final: pd.DataFrame, readings: list[readings_.Reading], curve: list[tuple[float, str]]) -> pd.DataFrame:
    """Per (method, λ₀, task, metric): OSCBO's (OSCBO-L1's) mean final regret over GP-UCB-MLL's on the
    same seeds, and one standard error by the delta method with the seeds paired (a seed's runs share
    their initial design): ``ratio``, ``se``, ``n``."""
    by_name = {reading.name: reading for reading in readings}
    main = final[final["experiment"] == MAIN]
    reference = main[main["method"] == GP_UCB_MLL].set_index(["task", "seed"])
    rows = []
    for value, reading in curve:
        arms = (
            {"oscbo": "oscbo", "oscbo-l1": "oscbo-l1"}
            if reading == readings_.DEFAULT
            else {replaced: stand_in for stand_in, replaced in by_name[reading].methods.items()}
        )
        for method, label in arms.items():
            own = main[main["method"] == label].set_index(["task", "seed"])
            for task in sorted(set(own.index.get_level_values("task"))):
                for metric in METRICS:
                    a = own.loc[task, metric]
                    b = reference.loc[task, metric].reindex(a.index)
                    paired = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
                    n = len(paired)
                    ma, mb = paired["a"].mean(), paired["b"].mean()
                    ratio = ma / mb if mb > 0 else np.nan
                    if n > 1 and ma > 0 and mb > 0:
                        va, vb = paired["a"].var(ddof=1) / n, paired["b"].var(ddof=1) / n
                        cov = paired["a"].cov(paired["b"]) / n
                        se = ratio * np.sqrt(max(va / ma**2 + vb / mb**2 - 2 * cov / (ma * mb), 0.0))
                    else:
                        se = np.nan
                    rows.append(
                        {
                            "method": method,
                            "lambda0": value,
                            "task": task,
                            "metric": metric,
                            "ratio": ratio,
                            "se": se,
                            "n": n,
                        }
                    )
    return pd.DataFrame(rows, columns=["method", "lambda0", "task", "metric", "ratio", "se", "n"])


def lambda0_regret(tables: dict[str, pd.DataFrame], figure: Figure, styles: style.Styles):
    """OSCBO's and OSCBO-L1's final simple and cumulative regret over GP-UCB-MLL's against λ₀, a line
    per task with its band (± one s.e.), a panel per (method, metric)."""
    curve = points(tables)
    found = ratios(tables["final"], readings_.from_table(tables["readings"]), curve)
    values = [value for value, _ in curve]
    tasks = sorted(found["task"].unique())
    colours = dict(zip(tasks, style.apart(len(tasks), taken=[styles[GP_UCB_MLL].color])))
    markers = {task: style.MARKERS[i % len(style.MARKERS)] for i, task in enumerate(tasks)}
    panels = [(method, metric) for method in ("oscbo", "oscbo-l1") for metric in METRICS]
    fig, axes = style.grid(len(panels), columns=2, row_height=3.0)
    for ax, (method, metric) in zip(axes, panels):
        rows = found[(found["method"] == method) & (found["metric"] == metric)]
        for task, line in rows.groupby("task"):
            line = line.sort_values("lambda0")
            x, y, se = line["lambda0"].to_numpy(float), line["ratio"].to_numpy(float), line["se"].to_numpy(float)
            ax.plot(x, y, color=colours[task], marker=markers[task], ms=3.5, lw=1.2)
            low, high = y - np.nan_to_num(se), y + np.nan_to_num(se)
            ax.fill_between(x, np.clip(low, 1e-6, None), high, color=colours[task], alpha=0.15, lw=0)
            style.plotted(pd.Series({"task": task, "metric": metric}), method=method, lambda0=x, ratio=y, se=se)
        ax.axhline(1.0, color=styles[GP_UCB_MLL].color, lw=1.2)
        style.log_axis(ax)
        _log_lambda_axis(ax, values)
        ax.set_title(f"{name(method)}: {METRICS[metric]}")
        ax.set_ylabel(f"÷ {name(GP_UCB_MLL)}'s")
    handles = [Line2D([], [], color=colours[task], marker=markers[task], ms=3.5, lw=1.2) for task in tasks]
    style.legend(fig, handles, [task_name(task) for task in tasks], columns=8)
    caption = (
        f"OSCBO's and OSCBO-L1's mean final simple and cumulative regret divided by {name(GP_UCB_MLL)}'s on the same "
        "seeds, per task (a line each, its band ± one standard error by the delta method, the seeds paired), "
        f"against λ₀ on a log axis (dotted: 0.433 and 1); below the {name(GP_UCB_MLL)} line (1) is better. "
        "λ₀ = 1 is the protocol's default; 0.433 the MLL-equivalent value."
    )
    return fig, "Regret relative to GP-UCB-MLL against λ₀", caption
