"""The λ₀ study's figures: the claims against λ₀, and OSCBO's regret over GP-UCB-MLL's against λ₀,
drawn from tables built by hand and checked against an independent computation."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from oscbo.analysis import readings
from oscbo.figures import colours, lambda0, lambda0_study, style
from oscbo.figures.plan import Figure, plan
from oscbo.study import config as study_config

REPO = Path(__file__).resolve().parents[2]
GRID = (0.1, 0.433, 3.5)
TASKS = ("t1", "t2")
SEEDS = 6


def tables() -> dict[str, pd.DataFrame]:
    found = [readings.Reading(readings.DEFAULT, readings.DEFAULT_DESCRIPTION)]
    for value in GRID:
        arms = {f"oscbo-lambda0={value:g}": "oscbo", f"oscbo-l1-lambda0={value:g}": "oscbo-l1"}
        found.append(readings.Reading(f"lambda0={value:g}", "λ₀", arms, {}, "lambda0", value, value == 0.433))
    rng = np.random.default_rng(0)
    rows = []
    # OSCBO's regret is λ₀ times GP-UCB-MLL's, seed by seed (plus noise); OSCBO-L1's twice GP-UCB-MLL's
    for task in TASKS:
        base = rng.uniform(1.0, 2.0, SEEDS)
        arms = {"gp-ucb-mll": 1.0, "oscbo": 1.0, "oscbo-l1": 2.0}
        arms |= {f"oscbo-lambda0={v:g}": v for v in GRID} | {f"oscbo-l1-lambda0={v:g}": 2.0 for v in GRID}
        for method, factor in arms.items():
            noise = 1 + 0.05 * rng.standard_normal(SEEDS) if method != "gp-ucb-mll" else np.ones(SEEDS)
            for seed in range(SEEDS):
                value = base[seed] * factor * noise[seed]
                rows.append(
                    {
                        "experiment": "main",
                        "task": task,
                        "method": method,
                        "seed": seed,
                        "simple_regret": value,
                        "cumulative_regret": 10 * value,
                    }
                )
    names = [readings.DEFAULT, *(f"lambda0={v:g}" for v in GRID)]
    claims = pd.DataFrame(
        [
            {"id": "main-strongest", "plain": "OSCBO is strong", "reading": name, "verdict": verdict, "share": share}
            for name, verdict, share in zip(names, ["held", "not held", "held", "undecided"], [0.95, 0.02, 0.97, 0.5])
        ]
        + [
            {"id": "theory", "plain": "theory", "reading": name, "verdict": "not applicable", "share": np.nan}
            for name in names[1:]
        ]
        + [{"id": "theory", "plain": "theory", "reading": names[0], "verdict": "held", "share": 1.0}]
    )
    return {"final": pd.DataFrame(rows), "readings": readings.to_table(found), "claims": claims}


def test_the_ratios_are_oscbo_s_mean_over_gp_ucb_mll_s_on_the_same_seeds() -> None:
    found = tables()
    curve = lambda0.points(found)
    assert [value for value, _ in curve] == [0.1, 0.433, 1.0, 3.5]
    ratios = lambda0.ratios(found["final"], readings.from_table(found["readings"]), curve)
    final = found["final"]
    for row in ratios.itertuples():
        label = row.method if row.lambda0 == 1.0 else f"{row.method}-lambda0={row.lambda0:g}"
        own = final[(final["task"] == row.task) & (final["method"] == label)][row.metric].mean()
        mll = final[(final["task"] == row.task) & (final["method"] == "gp-ucb-mll")][row.metric].mean()
        assert row.ratio == pytest.approx(own / mll, rel=1e-12) and row.n == SEEDS
    oscbo = ratios[(ratios["method"] == "oscbo") & (ratios["metric"] == "simple_regret")]
    # OSCBO's is λ₀ x GP-UCB-MLL's up to 5 % noise: the curve follows λ₀
    assert np.allclose(oscbo["ratio"], oscbo["lambda0"], rtol=0.06)
    assert (oscbo["se"] > 0).all() and (oscbo["se"] < 0.1 * oscbo["ratio"]).all()


def test_the_claims_figure_shows_each_claim_lambda0_bears_on_per_value() -> None:
    style.PLOTTED.clear()
    figure = Figure("lambda0-claims", "lambda0_claims", "lambda0-study", "main", options={"every_reading": True})
    drawn, title, caption = lambda0.lambda0_claims(tables(), figure, style.Styles(["oscbo", "gp-ucb-mll"]))
    plotted = pd.concat(style.PLOTTED, ignore_index=True)
    assert set(plotted["claim"]) == {"main-strongest"}  # theory: no λ₀ arm ran in its experiment
    assert plotted.set_index("lambda0")["verdict"].to_dict() == {
        0.1: "not held",
        0.433: "held",
        1.0: "held",
        3.5: "undecided",
    }
    assert "against λ₀" in title and "registered tests" in caption
    style.PLOTTED.clear()
    drawn, title, _ = lambda0.lambda0_regret(
        tables(), Figure("r", "lambda0_regret", "lambda0-study", "main"), style.Styles(["oscbo", "gp-ucb-mll"])
    )
    assert len(drawn.axes) >= 4 and "GP-UCB-MLL" in title


def test_the_figures_are_planned_only_for_a_curve_of_lambda0() -> None:
    """The reference config (shipped and published) measures λ₀'s curve; the same config with two
    values of λ₀ (the default and 0.433, as the reference first ran) does not."""
    shipped = study_config.load(REPO / "config" / "reference.yaml")
    assert lambda0_study(shipped) and lambda0_study(study_config.load(REPO / "reference" / "config.yaml"))
    assert {"lambda0-claims", "lambda0-regret"} <= {figure.id for figure in plan(shipped)[0]}
    two = copy.deepcopy(shipped)
    two["readings"] = {
        name: r for name, r in two["readings"].items() if not name.startswith("lambda0=") or name == "lambda0=0.433"
    }
    assert not lambda0_study(two)
    assert not {"lambda0-claims", "lambda0-regret"} & {figure.id for figure in plan(two)[0]}


def test_the_stamp_lies_whole_inside_the_figure_over_no_text() -> None:
    """A study whose runs come from 23 commits (the reference's): the stamp counts them, and on the
    drawn extents it lies inside the figure and overlaps no other text (titles, labels, ticks)."""
    from matplotlib.text import Text

    from oscbo.figures.draw import footer

    provenance = pd.DataFrame({"git_commit": [f"{i:040x}" + "+dirty" * (i % 2) for i in range(23)] * 2})
    text = footer(provenance, "5058ce86ac97")
    assert "46 runs from 23 commits" in text and "0000" not in text
    drawn, _, _ = lambda0.lambda0_regret(
        tables(), Figure("r", "lambda0_regret", "lambda0-study", "main"), style.Styles(["oscbo", "gp-ucb-mll"])
    )
    stamp = style.stamp(drawn, text)
    renderer = drawn.canvas.get_renderer()
    box, page = stamp.get_window_extent(renderer), drawn.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, (box, page)
    others = [t for t in drawn.findobj(Text) if t is not stamp and t.get_visible() and t.get_text().strip()]
    assert others
    for other in others:
        assert not box.overlaps(other.get_window_extent(renderer)), other.get_text()


def test_the_dual_regret_caption_says_lunar_lander_s_regret_is_against_the_best_run() -> None:
    """Lunar Lander's optimum is unknown: its 'final simple regret' against λ₀ is measured against
    the best value any run found, and the caption says so; a study of known optima says nothing."""
    from oscbo.figures import dual

    rows = []
    for task in ("levy5", "lunar12"):
        rows.append(
            {
                "experiment": "dual",
                "method": "gp-ucb-mll",
                "task": task,
                "method_name": "gp-ucb-mll",
                "lambda0": np.nan,
                "omega": np.nan,
                "n": 20,
            }
        )
        for value in (0.433, 1.0, 3.5):
            rows.append(
                {
                    "experiment": "dual",
                    "method": f"oscbo-lambda0={value:g}",
                    "task": task,
                    "method_name": "oscbo",
                    "lambda0": value,
                    "omega": 0.001,
                    "n": 20,
                }
            )
    table = pd.DataFrame(rows).assign(
        mll_equivalent_lambda=0.433,
        simple_regret_mean=1.0,
        simple_regret_se=0.1,
        cumulative_regret_mean=10.0,
        cumulative_regret_se=1.0,
    )
    tasks = pd.DataFrame({"task": ["levy5", "lunar12"], "optimal_value": [0.0, np.nan]})
    figure = Figure("dual-regret", "versus_lambda0", "x", "dual", options={"metrics": ["simple_regret"]})
    styles = style.Styles(["gp-ucb-mll", *dual.labels(table)])
    _, _, caption = dual.versus_lambda0({"dual": table, "tasks": tasks}, figure, styles)
    assert "On lunar12, whose optimum is unknown, the regret is measured against the best value" in caption
    _, _, known = dual.versus_lambda0({"dual": table[table["task"] == "levy5"], "tasks": tasks}, figure, styles)
    assert "optimum is unknown" not in known


def test_the_task_lines_and_gp_ucb_mll_s_are_apart_for_every_reader() -> None:
    """Eight task lines beside GP-UCB-MLL's line at 1, in each panel: every two at least colours.APART
    apart under the four visions (the palette's first eight put #aa4499 8.0 from GP-UCB-MLL's blue);
    asking for more colours than the palette holds apart says so."""
    found = tables()
    one = found["final"][found["final"]["task"] == TASKS[0]]
    found["final"] = pd.concat([one.assign(task=f"task{i}") for i in range(8)], ignore_index=True)
    drawn, _, _ = lambda0.lambda0_regret(
        found, Figure("r", "lambda0_regret", "lambda0-study", "main"), style.Styles(["oscbo", "gp-ucb-mll"])
    )
    for ax in drawn.axes:
        colors = sorted(
            {matplotlib.colors.to_hex(line.get_color()) for line in ax.lines if line.get_label() != style.GUIDE}
        )
        assert len(colors) == 9, colors
        for a, b in itertools.combinations(colors, 2):
            assert colours.gap(a, b) >= colours.APART, (a, b)
    assert colours.gap(style.PALETTE[7], style.FIXED["gp-ucb-mll"]) < colours.APART  # the test can fail
    with pytest.raises(ValueError, match="colours of the palette are apart, 30 asked for"):
        style.apart(30)
