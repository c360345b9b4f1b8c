"""The dual study (not in the paper): its tables, figures, computed paragraph and report section, on
real records of a tiny study run by the engine (2 seeds, 3 BO rounds)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import experiment, render
from markupsafe import escape

from oscbo import analysis as aggregate
from oscbo import records
from oscbo import run as engine
from oscbo.analysis import dual as dual_study
from oscbo.findings import claims
from oscbo.findings.dual import dual_reading
from oscbo.report.blocks import mean_se, number
from oscbo.report.outline import DUAL as DUAL_SECTION
from oscbo.settings import Settings

SEEDS = [0, 1]
BUDGET, N_INIT = 3, 5
#: The dual arms: label -> (method, settings). The lambda_0 = 1, omega = 0.001 arm is main's OSCBO.
ARMS = {
    "oscbo-lambda0=0.433": ("oscbo", {"lambda0": 0.433}),
    "oscbo-lambda0=1": ("oscbo", {}),
    "oscbo-lambda0=3.5": ("oscbo", {"lambda0": 3.5}),
    "oscbo-lambda0=1-omega=0.01": ("oscbo", {"omega": 0.01}),
    "oscbo-l1-lambda0=0.433": ("oscbo-l1", {"lambda0": 0.433}),
    "gp-ucb-mll": ("gp-ucb-mll", {}),
}
DUAL_TASKS = ["hartmann3", "levy5"]
#: 'main' ran one of the dual tasks, without OSCBO-L1.
MAIN_TASKS = ["hartmann3"]
MAIN_METHODS = ["oscbo", "gp-ucb-mll", "a-gp-ucb"]
CONFIG = {
    "readings": {},
    "experiments": {
        "main": experiment(MAIN_TASKS, MAIN_METHODS, seeds=2, budget=BUDGET, n_init=N_INIT),
        "dual": experiment(DUAL_TASKS, list(ARMS), seeds=2, budget=BUDGET, n_init=N_INIT),
    },
}


def run(root: Path, experiment: str, task: str, label: str, method: str, settings: dict[str, Any]) -> list[Path]:
    result = engine.run(task, method, SEEDS, BUDGET, N_INIT, Settings(**settings), experiment=experiment, label=label)
    return engine.write(result, root / experiment / task / label)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("dual")
    paths = [
        path
        for task in DUAL_TASKS
        for label, (method, settings) in ARMS.items()
        for path in run(root / "runs", "dual", task, label, method, settings)
    ]
    paths += [
        path
        for task in MAIN_TASKS
        for method in MAIN_METHODS
        for path in run(root / "runs", "main", task, method, method, {})
    ]
    made = render(root, paths, CONFIG)
    return {
        "root": root,
        "paths": paths,
        "tables": aggregate.load(root / "summary"),
        "figures": made["figures"]["figures"],
        "html": made["html"],
    }


def records_of(study: dict[str, Any], experiment: str, task: str, label: str) -> list[pd.DataFrame]:
    folder = study["root"] / "runs" / experiment / task / label
    return [records.read_record(records.record_path(folder, seed))[0] for seed in SEEDS]


def section(html: str) -> str:
    return html.split(f'<section id="{DUAL_SECTION}">')[1].split("</section>")[0]


def test_sidecars_record_the_effective_lambda0_and_omega(study: dict[str, Any]) -> None:
    folder = study["root"] / "runs" / "dual" / "levy5"
    meta = records.read_sidecar(records.record_path(folder / "oscbo-lambda0=0.433", 1))
    assert (meta["settings"]["lambda0"], meta["settings"]["omega"]) == (0.433, 0.001)
    meta = records.read_sidecar(records.record_path(folder / "oscbo-lambda0=1-omega=0.01", 0))
    assert (meta["settings"]["lambda0"], meta["settings"]["omega"]) == (1.0, 0.01)
    meta = records.read_sidecar(records.record_path(folder / "oscbo-l1-lambda0=0.433", 0))
    assert meta["settings"]["calibration_power"] == 1 and meta["method_name"] == "oscbo-l1"


def test_dual_table_reads_settings_and_summarises_the_records(study: dict[str, Any]) -> None:
    dual = study["tables"]["dual"].set_index(["task", "method"])
    assert len(dual) == len(DUAL_TASKS) * len(ARMS)
    assert set(study["tables"]["dual"]["experiment"]) == {"dual"}
    for task in DUAL_TASKS:
        for label, (method, settings) in ARMS.items():
            row = dual.loc[(task, label)]
            runs = records_of(study, "dual", task, label)
            assert row["method_name"] == method and row["n"] == len(SEEDS)
            assert row["simple_regret_mean"] == pytest.approx(np.mean([r["simple_regret"].iloc[-1] for r in runs]))
            assert row["lengthscale_mean"] == pytest.approx(np.mean([r["lengthscale_0"].iloc[-1] for r in runs]))
            assert row["mll_equivalent_lambda"] == pytest.approx(Settings().mll_equivalent_lambda)
            if method == "gp-ucb-mll":  # no multiplier: no lambda_0, and it is the reference
                assert math.isnan(row["lambda0"]) and math.isnan(row["omega"]) and math.isnan(row["lambda_low"])
                assert row["simple_regret_ratio"] == 1.0 and math.isnan(row["lengthscale_gap"])
                continue
            lambda0 = settings.get("lambda0", 1.0)
            assert row["lambda0"] == lambda0 and row["omega"] == settings.get("omega", 0.001)
            assert row["calibration_power"] == (1 if method == "oscbo-l1" else 2)
            multiplier = pd.concat([r["lambda"] for r in runs])
            assert row["lambda_low"] == pytest.approx(multiplier.min() / lambda0)
            assert row["lambda_high"] == pytest.approx(multiplier.max() / lambda0)
            # |L^c| <= 1 in the dual step: at most a factor e^(omega) per round, over BUDGET - 1 steps
            assert (
                math.exp(-row["omega"] * (BUDGET - 1)) - 1e-12 <= row["lambda_low"] <= row["lambda_high"] <= 1.0 + 1e-12
            )
            reference = dual.loc[(task, "gp-ucb-mll"), "simple_regret_mean"]
            assert row["simple_regret_ratio"] == pytest.approx(row["simple_regret_mean"] / reference)
    # the MLL-equivalent lambda_0 stays closest to GP-UCB-MLL's lengthscale on every task
    for task in DUAL_TASKS:
        gaps = dual.loc[task, "lengthscale_gap"]
        assert gaps["oscbo-lambda0=0.433"] < gaps["oscbo-lambda0=1"] < gaps["oscbo-lambda0=3.5"]


def test_dual_ranks_place_each_variant_among_main_methods(study: dict[str, Any]) -> None:
    tables = study["tables"]
    ranked = tables["dual_ranks"]
    # OSCBO-L1 varies a method 'main' did not run: it has no place there
    assert set(ranked["method"]) == {label for label, (method, _) in ARMS.items() if method == "oscbo"}
    assert (ranked["replaces"] == "oscbo").all() and (ranked["n_tasks"] == len(MAIN_TASKS)).all()
    assert (ranked["n_methods"] == len(MAIN_METHODS)).all()
    simple = ranked[ranked["metric"] == "simple_regret"].set_index("method")
    # The lambda_0 = 1, omega = 0.001 arm is main's OSCBO run again: the same records, the same place.
    for ours, theirs in zip(
        records_of(study, "dual", "hartmann3", "oscbo-lambda0=1"), records_of(study, "main", "hartmann3", "oscbo")
    ):
        assert np.array_equal(ours["simple_regret"], theirs["simple_regret"])
    main = tables["mean_ranks"].query("experiment == 'main' and metric == 'simple_regret'").set_index("method")
    default = simple.loc["oscbo-lambda0=1"]
    assert (default["rank_mean"], default["place"]) == (main.loc["oscbo", "rank_mean"], main.loc["oscbo", "place"])
    assert (default["replaced_rank_mean"], default["replaced_place"]) == (default["rank_mean"], default["place"])
    # lambda_0 = 3.5, by hand: its seed-mean against the other main methods' on the one shared task
    final = tables["final"].query("task == 'hartmann3'")
    means = final[final["experiment"] == "main"].groupby("method")["simple_regret"].mean().drop("oscbo")
    ours = final.query("method == 'oscbo-lambda0=3.5'")["simple_regret"].mean()
    assert simple.loc["oscbo-lambda0=3.5", "rank_mean"] == 1 + (means < ours).sum() + 0.5 * (means == ours).sum()


def test_dual_ranks_need_the_same_design_and_budget_and_use_the_shared_seeds(study: dict[str, Any]) -> None:
    final, dual = study["tables"]["final"], study["tables"]["dual"]
    placed = dual_study.dual_ranks_table(final, dual)
    assert len(placed) and (placed["n_seeds"] == 2).all()
    for column, value in [("bo_rounds", BUDGET + 1), ("n_init", N_INIT + 1)]:
        other = final.copy()
        other.loc[(other["experiment"] == "main") & (other["method"] == "oscbo"), column] = value
        assert dual_study.dual_ranks_table(other, dual).empty
    # 'main' without seed 1 of OSCBO (as a 'main' of 20 seeds beside a 'dual' of 10): ranked on seed 0 alone,
    # every method of 'main' restricted to it
    other = final[~((final["experiment"] == "main") & (final["seed"] == 1) & (final["method"] == "oscbo"))]
    on_seed_0 = dual_study.dual_ranks_table(other, dual)
    assert len(on_seed_0) == len(placed) and (on_seed_0["n_seeds"] == 1).all()
    alone = final[final["seed"] == 0]
    assert on_seed_0["rank_mean"].tolist() == dual_study.dual_ranks_table(alone, dual)["rank_mean"].tolist()
    assert dual_study.dual_ranks_table(final[final["experiment"] == "dual"], dual).empty  # no 'main'


def test_dual_figures_are_drawn_for_the_dual_experiment_only(study: dict[str, Any]) -> None:
    drawn = {item["id"]: item for item in study["figures"]}
    ours = [item for item in study["figures"] if item["section"] == DUAL_SECTION]
    assert [item["id"] for item in ours] == ["dual-lambda", "dual-lengthscale", "dual-regret"]
    for item in ours:
        svg = Path(item["path"]).read_text(encoding="utf-8")
        assert "<svg" in svg and "OSCBO-L1, ω = 0.001" in svg or item["id"] == "dual-lambda"
    assert [Path(source).name for source in drawn["dual-regret"]["sources"]] == ["dual.parquet", "tasks.parquet"]
    caption = drawn["dual-regret"]["caption"]
    assert "over 2 seeds" in caption and "gp-ucb-mll's mean ± s.e." in caption and "MLL-equivalent" in caption
    assert not any(item["id"].startswith("figS2-dual") for item in study["figures"])


def test_the_paragraph_is_computed_from_the_tables(study: dict[str, Any]) -> None:
    tables = study["tables"]
    reading = dual_reading(tables)
    dual = tables["dual"].dropna(subset=["lambda0"])
    at = dual[dual["omega"] == 0.001]
    assert f"λ₀ × [{at['lambda_low'].min():.3f}, {at['lambda_high'].max():.3f}] at ω = 0.001" in reading
    assert "comes with λ₀ = 0.433, the MLL-equivalent value" in reading
    on_levy = at[(at["method"] == "oscbo-lambda0=3.5") & (at["task"] == "levy5")].iloc[0]
    assert "lie this far from GP-UCB-MLL's on levy5" in reading  # Fig. 3 bottom's task, as the tracking claim
    assert (
        f"at λ₀ = 3.5, simple regret {on_levy['simple_regret_gap']:.3f}, half-width "
        f"{on_levy['mean_halfwidth_gap']:.3f}, coverage {on_levy['coverage_gap']:.3f}, lengthscale "
        f"{on_levy['lengthscale_gap']:.3f}"
    ) in reading
    simple = tables["dual_ranks"].query("metric == 'simple_regret' and omega == 0.001").set_index("lambda0")
    for lambda0, row in simple.iterrows():
        assert f"{int(row['place'])} at λ₀ = {lambda0:g} (mean rank {row['rank_mean']:.2f})" in reading
    spread = int(simple["place"].max() - simple["place"].min())
    assert f"λ₀ moves it by {spread} place" in reading
    assert (
        "By the test of claim main-tracks-mll (gaps within simple regret 0.2, half-width 0.1, coverage 0.05, "
        "lengthscale 0.1), OSCBO tracks GP-UCB-MLL at" in reading
    )
    assert "λ₀ = 0.433 is a reading of the paper, not a result" in reading
    assert "when ω goes from 0.001 to 0.01 (over 2 task and λ₀ pairs)" in reading

    # Without a comparable 'main': the ranking within the dual experiment instead.
    alone = {**tables, "dual_ranks": tables["dual_ranks"].iloc[:0]}
    assert "within 'dual', the mean final simple-regret ranks over tasks are: " in dual_reading(alone)
    without_reference = {**tables, "dual": tables["dual"].query("method != 'gp-ucb-mll'")}
    with pytest.raises(claims.NotEvaluated, match="no gp-ucb-mll runs"):
        dual_reading(without_reference)


def test_the_report_section_shows_the_reading_figures_and_table(study: dict[str, Any]) -> None:
    page = study["html"]
    ours = section(page)
    assert "What sets OSCBO&#39;s lengthscale" in ours
    assert str(escape(dual_reading(study["tables"]))) in ours
    assert ours.count("<svg ") == 3
    row = study["tables"]["dual"].set_index(["task", "method"]).loc[("levy5", "oscbo-lambda0=3.5")]
    shown = mean_se(row["simple_regret_mean"], row["simple_regret_se"])
    assert "<td>Levy 5D</td><td>OSCBO, λ₀ = 3.5</td><td>3.5</td><td>0.001</td><td>2</td>" in ours
    assert shown in ours and f"<td>{number(row['simple_regret_ratio'])}</td>" in ours


def test_a_study_without_the_dual_experiment_has_no_dual_section(study: dict[str, Any], tmp_path: Path) -> None:
    main = [path for path in study["paths"] if "/main/" in str(path)]
    config = {"readings": {}, "experiments": {"main": CONFIG["experiments"]["main"]}}
    made = render(tmp_path, main, config)
    assert aggregate.load(tmp_path / "summary", ["dual"])["dual"].empty
    assert aggregate.load(tmp_path / "summary", ["dual_ranks"])["dual_ranks"].empty
    assert f'<section id="{DUAL_SECTION}">' not in made["html"]
    findings = aggregate.load(tmp_path / "summary", ["findings"])["findings"].set_index("id")["text"]
    assert findings["dual"] == "No reading of the dual study: the 'dual' experiment has no OSCBO runs."


def test_one_seed_one_task_one_lambda0_still_reads(study: dict[str, Any], tmp_path: Path) -> None:
    """The smallest dual study: one OSCBO arm beside GP-UCB-MLL, one task, one seed, no main."""
    keep = [f"/dual/hartmann3/{label}/seed0." for label in ("oscbo-lambda0=0.433", "gp-ucb-mll")]
    config = {
        "readings": {},
        "experiments": {
            "dual": experiment(
                ["hartmann3"], ["oscbo-lambda0=0.433", "gp-ucb-mll"], seeds=1, budget=BUDGET, n_init=N_INIT
            )
        },
    }
    made = render(tmp_path, [p for p in study["paths"] if any(k in str(p) for k in keep)], config)
    assert sum(item["section"] == DUAL_SECTION for item in made["figures"]["figures"]) == 3
    ours = section(made["html"])
    assert "comes with λ₀ = 0.433" in ours and "within &#39;dual&#39;, the mean final simple-regret ranks" in ours
    assert "averaged over its tasks (it has no Levy 5D runs)" in ours
    assert "OSCBO tracks GP-UCB-MLL at λ₀ = 0.433" in ours or "at none of these" in ours  # no main needed
