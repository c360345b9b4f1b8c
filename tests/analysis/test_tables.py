"""Summary tables from hand-built records with known numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import run_table, write_run, write_study
from scipy import stats

from oscbo import analysis as aggregate
from oscbo import records
from oscbo.analysis import ranks, readings


def summarise(tmp_path: Path, tables: list[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    paths = [write_run(tmp_path / "runs", table) for table in tables]
    aggregate.aggregate(paths, tmp_path / "summary")
    return aggregate.load(tmp_path / "summary")


def test_writes_every_table_and_load_reads_them(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs")
    written = aggregate.aggregate(paths, tmp_path / "summary")
    assert sorted(written) == sorted(aggregate.TABLES)
    assert all(path.is_file() for path in written.values())
    loaded = aggregate.load(tmp_path / "summary")
    assert len(loaded["steps"]) == 2 * 2 * 2 * 9
    assert len(loaded["final"]) == 8
    assert not list((tmp_path / "summary").glob(".*.tmp"))


def test_curve_mean_and_standard_error_over_seeds(tmp_path: Path) -> None:
    tables = [
        run_table(seed=0, simple_regret=[5.0, 4.0, 3.0, 2.0, 1.0]),
        run_table(seed=1, simple_regret=[5.0, 4.0, 3.0, 3.0, 3.0]),
    ]
    curves = summarise(tmp_path, tables)["curves"]
    last = curves[(curves["metric"] == "simple_regret") & (curves["step"] == 4)].iloc[0]
    assert last["mean"] == pytest.approx(2.0)
    assert last["se"] == pytest.approx(np.std([1.0, 3.0], ddof=1) / math.sqrt(2))  # = 1.0
    assert last["n"] == 2
    assert last["phase"] == "bo"
    first = curves[(curves["metric"] == "simple_regret") & (curves["step"] == 0)].iloc[0]
    assert first["se"] == pytest.approx(0.0)
    assert first["phase"] == "init"


def test_single_seed_has_no_standard_error(tmp_path: Path) -> None:
    summary = summarise(tmp_path, [run_table()])
    assert summary["curves"]["se"].isna().all()
    assert summary["ranks"]["simple_regret_se"].isna().all()


def test_lengthscale_is_geometric_mean_of_columns_and_mixes_iso_with_ard(tmp_path: Path) -> None:
    ard = run_table(method="ard", lengthscale_0=1.0, lengthscale_1=4.0, lengthscale_2=16.0)
    iso = run_table(method="iso", lengthscale_0=0.25)
    steps = summarise(tmp_path, [ard, iso])["steps"]
    assert steps.loc[steps["method"] == "ard", "lengthscale"].to_numpy() == pytest.approx(np.full(5, 4.0))
    assert steps.loc[steps["method"] == "iso", "lengthscale"].to_numpy() == pytest.approx(np.full(5, 0.25))


def test_running_diagnostics_count_bo_rounds_only(tmp_path: Path) -> None:
    table = run_table(
        covered=[np.nan, np.nan, 1.0, 0.0, 1.0],
        halfwidth=[np.nan, np.nan, 3.0, 1.0, 2.0],
        violation=[np.nan, np.nan, -0.5, 0.2, 1.5],
        loss_sharpness=[np.nan, np.nan, 0.1, 0.2, 0.3],
    )
    steps = summarise(tmp_path, [table])["steps"]
    bo = steps["phase"] == "bo"
    assert steps.loc[bo, "coverage"].to_numpy() == pytest.approx([1.0, 0.5, 2.0 / 3.0])
    assert steps.loc[bo, "mean_halfwidth"].to_numpy() == pytest.approx([3.0, 2.0, 2.0])
    assert steps.loc[bo, "violation_positive"].to_numpy() == pytest.approx([0.0, 0.2, 1.5])
    assert steps.loc[bo, "cumulative_sharpness"].to_numpy() == pytest.approx([0.1, 0.3, 0.6])
    diagnostics = ["coverage", "mean_halfwidth", "violation_positive", "cumulative_sharpness"]
    assert steps.loc[~bo, diagnostics].isna().all().all()


def test_wallclock_is_cumulative_with_missing_times_as_zero(tmp_path: Path) -> None:
    table = run_table(
        fit_seconds=[np.nan, np.nan, 1.0, 2.0, np.nan],
        acq_seconds=[np.nan, np.nan, 0.5, 0.5, 0.5],
        oracle_seconds=[0.1, 0.1, 0.1, 0.1, 0.1],
    )
    summary = summarise(tmp_path, [table])
    assert summary["steps"]["wallclock"].to_numpy() == pytest.approx([0.1, 0.2, 1.8, 4.4, 5.0])
    assert summary["final"]["wallclock"].iloc[0] == pytest.approx(5.0)
    curve = summary["curves"].query("metric == 'wallclock'")
    assert curve["mean"].to_numpy() == pytest.approx([0.1, 0.2, 1.8, 4.4, 5.0])


def test_final_takes_the_last_step_and_counts_phases(tmp_path: Path) -> None:
    table = run_table(simple_regret=[9.0, 8.0, 7.0, 6.0, 0.5], cumulative_regret=[0, 0, 1, 2, 3.5])
    final = summarise(tmp_path, [table])["final"].iloc[0]
    assert (final["simple_regret"], final["cumulative_regret"]) == (0.5, 3.5)
    assert (final["oracle_calls"], final["n_init"], final["bo_rounds"]) == (5, 2, 3)


def test_ranks_order_methods_by_mean_and_average_ties(tmp_path: Path) -> None:
    finals = {"a": (1.0, 3.0), "b": (2.0, 2.0), "c": (0.5, 0.7)}  # means 2, 2, 0.6
    tables = [
        run_table(
            method=method, seed=seed, simple_regret=[9, 9, 9, 9, value], cumulative_regret=[0, 0, 1, 2, 10 * value]
        )
        for method, values in finals.items()
        for seed, value in enumerate(values)
    ]
    ranks = summarise(tmp_path, tables)["ranks"].set_index("method")
    assert ranks.loc["c", "rank_simple"] == 1.0
    assert ranks.loc["a", "rank_simple"] == ranks.loc["b", "rank_simple"] == 2.5
    assert ranks.loc["a", "simple_regret_mean"] == pytest.approx(2.0)
    assert ranks.loc["a", "simple_regret_se"] == pytest.approx(1.0)
    assert ranks.loc["b", "simple_regret_se"] == pytest.approx(0.0)
    assert ranks["rank_cumulative"].to_dict() == {"a": 2.5, "b": 2.5, "c": 1.0}


def test_paired_tests_match_scipy_and_are_deterministic(tmp_path: Path) -> None:
    a = [0.9, 0.4, 1.3, 0.2, 0.8, 0.6, 1.1, 0.5, 0.3, 0.7]
    b = [1.0, 0.9, 1.2, 0.7, 1.5, 0.65, 1.9, 0.8, 0.45, 1.0]
    tables = [
        run_table(method=method, seed=seed, simple_regret=[2, 2, 2, 2, value])
        for method, values in {"a": a, "b": b}.items()
        for seed, value in enumerate(values)
    ]
    tests = summarise(tmp_path, tables)["tests"]
    row = tests.iloc[0]
    diff = np.array(a) - np.array(b)
    assert (row["method_a"], row["method_b"], row["metric"], row["n"]) == ("a", "b", "simple_regret", 10)
    assert row["p_value"] == pytest.approx(stats.wilcoxon(diff).pvalue)
    assert row["min_p"] == 2.0**-9 and row["testable"]
    # one comparison per (experiment, metric) family: Holm leaves its p as it is
    assert row["p_holm"] == row["p_value"] and row["significant"] == (row["p_value"] < 0.05)
    assert row["median_diff"] == pytest.approx(np.median(diff))
    assert row["mean_diff"] == pytest.approx(np.mean(diff))
    assert row["ci_low"] < row["mean_diff"] < row["ci_high"] < 0

    again = aggregate.aggregate(sorted((tmp_path / "runs").rglob("*.parquet")), tmp_path / "again")
    assert pd.read_parquet(again["tests"]).equals(tests)


def test_paired_tests_pair_on_common_seeds_and_leave_undefined_tests_empty(tmp_path: Path) -> None:
    tables = [
        run_table(method="a", seed=0, simple_regret=[2, 2, 2, 2, 1.0]),
        run_table(method="a", seed=1, simple_regret=[2, 2, 2, 2, 1.0]),
        run_table(method="b", seed=0, simple_regret=[2, 2, 2, 2, 1.0]),
        run_table(method="b", seed=1, simple_regret=[2, 2, 2, 2, 1.0]),
        run_table(method="c", seed=1, simple_regret=[2, 2, 2, 2, 0.5]),
        run_table(method="c", seed=2, simple_regret=[2, 2, 2, 2, 0.1]),
    ]
    every = summarise(tmp_path, tables)["tests"]
    assert set(every["metric"]) == {"simple_regret", "cumulative_regret"}  # both finals are compared
    tests = every[every["metric"] == "simple_regret"].set_index(["method_a", "method_b"])
    assert tests.loc[("a", "b"), "n"] == 2
    assert math.isnan(tests.loc[("a", "b"), "p_value"])  # all differences zero
    assert tests.loc[("a", "b"), ["ci_low", "ci_high", "p_holm"]].isna().all()  # two pairs: no interval
    assert tests.loc[("a", "b"), "min_p"] == 1.0 and not tests.loc[("a", "b"), "testable"]
    assert tests.loc[("a", "c"), "n"] == 1  # only seed 1 is common
    assert tests.loc[("a", "c"), "median_diff"] == pytest.approx(0.5)
    assert tests.loc[("a", "c"), ["p_value", "ci_low", "ci_high"]].isna().all()


def test_too_few_seeds_and_holm_by_hand() -> None:
    """With n non-zero paired differences the exact two-sided Wilcoxon p is at least 2 / 2^n: five
    seeds (0.0625) can never reach 0.05, six (0.03125) can. Holm by hand: p = (0.01, 0.04, 0.03)
    sorted 0.01, 0.03, 0.04, times 3, 2, 1 = 0.03, 0.06, 0.04, then running maxima 0.03, 0.06, 0.06."""
    from oscbo.analysis import statistics

    five = statistics.paired_difference(-np.arange(1.0, 6.0))
    six = statistics.paired_difference(-np.arange(1.0, 7.0))
    assert (five["min_p"], five["testable"], six["min_p"], six["testable"]) == (0.0625, False, 0.03125, True)
    assert five["p_value"] == pytest.approx(0.0625) and six["p_value"] == pytest.approx(0.03125)
    assert math.isnan(six["ci_low"])  # a bootstrap interval needs 10 pairs
    adjusted = statistics.holm(pd.Series([0.01, 0.04, 0.03, np.nan], index=list("abcd")))
    assert adjusted.round(12).to_dict() == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": np.nan}, nan_ok=True)


def test_record_without_sidecar_is_refused(tmp_path: Path) -> None:
    complete = write_run(tmp_path / "runs", run_table(seed=0))
    interrupted = records.record_path(tmp_path / "runs" / "interrupted", 1)
    interrupted.parent.mkdir(parents=True)
    run_table(seed=1).to_parquet(interrupted, index=False)
    with pytest.raises(FileNotFoundError, match="incomplete"):
        aggregate.aggregate([complete, interrupted], tmp_path / "summary")
    assert not (tmp_path / "summary" / "steps.parquet").exists()


def test_unfinished_record_is_refused(tmp_path: Path) -> None:
    path = write_run(tmp_path / "runs", run_table(), status="running")
    with pytest.raises(ValueError, match="'running'"):
        aggregate.aggregate([path], tmp_path / "summary")


def test_two_records_of_one_run_are_refused(tmp_path: Path) -> None:
    paths = [write_run(tmp_path / "runs", run_table(seed=3)) for _ in range(2)]
    with pytest.raises(ValueError, match="more than one record"):
        aggregate.aggregate(paths, tmp_path / "summary")


def test_a_shared_record_is_read_once_for_each_experiment_asking_for_it(tmp_path: Path) -> None:
    """A run two experiments ask for (oscbo.study.jobs.owners) is one record; read under each
    experiment and label it gives the rows a copy of it written under those names would give."""
    shared = write_study(tmp_path / "runs")  # experiment 'exp', methods m1, m2
    asked = {path: [("exp", pd.read_parquet(path)["method"][0]), ("other", "copy")] for path in shared[:2]}
    aggregate.aggregate(shared, tmp_path / "summary", asked=asked)
    copies = [
        write_run(tmp_path / "copies", pd.read_parquet(path).assign(experiment="other", method="copy"))
        for path in shared[:2]
    ]
    aggregate.aggregate([*shared, *copies], tmp_path / "expected")
    for name in ("final", "curves", "ranks", "steps"):
        got, want = (pd.read_parquet(aggregate.table_path(tmp_path / d, name)) for d in ("summary", "expected"))
        pd.testing.assert_frame_equal(got, want, check_like=True)
    assert set(pd.read_parquet(aggregate.table_path(tmp_path / "summary", "final"))["experiment"]) == {"exp", "other"}


def test_no_records_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one record"):
        aggregate.aggregate([], tmp_path / "summary")


def test_unknown_optimum_uses_the_best_value_seen_in_the_study(tmp_path):
    from oscbo import analysis as aggregate
    from oscbo import run as engine

    paths = []
    for method in ("gp-ucb-mll", "oscbo"):
        result = engine.run("lunar12", method, [0], budget=2, n_init=3, task_options={"episodes": 2, "max_steps": 150})
        paths += engine.write(result, tmp_path / method)
    summary = aggregate.load(aggregate.aggregate(paths, tmp_path / "summary")["steps"].parent)
    steps = summary["steps"]
    best = steps["f"].max()
    ranks = summary["ranks"].set_index("method")
    assert not ranks["f_star_known"].any()
    for method, run in steps.groupby("method"):  # one seed each: the best value as found
        assert ranks.loc[method, "best_f_mean"] == run["best_f"].iloc[-1]
    assert (steps["f_star"] == best).all() and not steps["f_star_known"].any()
    assert np.allclose(steps["simple_regret"], best - steps["best_f"])
    assert steps["simple_regret"].min() == 0.0  # the best run reaches the study's best
    for _, run in steps.groupby(["method", "seed"]):
        bo = run[run.phase == "bo"]
        assert np.allclose(bo["cumulative_regret"], np.cumsum(best - bo["f"]))


def test_mean_ranks_average_tied_ranks_over_tasks(tmp_path: Path) -> None:
    finals = {  # final simple regret per task and method; 'd' ran on t1 only
        "t1": {"a": 1.0, "b": 1.0, "c": 2.0, "d": 0.5},  # ranks 2.5, 2.5, 4, 1
        "t2": {"a": 1.0, "b": 2.0, "c": 3.0},  # 1, 2, 3
        "t3": {"a": 3.0, "b": 2.0, "c": 1.0},  # 3, 2, 1
    }
    tables = [
        run_table(task=task, method=method, simple_regret=[9, 9, 9, 9, value])
        for task, values in finals.items()
        for method, value in values.items()
    ]
    mean_ranks = summarise(tmp_path, tables)["mean_ranks"]
    simple = mean_ranks[mean_ranks["metric"] == "simple_regret"].set_index("method")
    assert simple["rank_mean"].to_dict() == pytest.approx({"a": 6.5 / 3, "b": 6.5 / 3, "c": 8 / 3, "d": 1.0})
    assert simple.loc["a", "rank_se"] == pytest.approx(np.std([2.5, 1, 3], ddof=1) / math.sqrt(3))
    assert math.isnan(simple.loc["d", "rank_se"])  # one task
    assert simple["n_tasks"].to_dict() == {"a": 3, "b": 3, "c": 3, "d": 1}
    assert (simple["n_methods"] == 4).all()
    assert simple["place"].to_dict() == {"a": 2, "b": 2, "c": 4, "d": 1}  # a and b tie for second
    # Normalised by each task's largest mean: t1 / 2, t2 / 3, t3 / 3.
    assert simple.loc["a", "normalised_mean"] == pytest.approx((0.5 + 1 / 3 + 1) / 3)
    assert simple.loc["d", "normalised_mean"] == pytest.approx(0.25)
    ranks = summarise(tmp_path / "again", tables)["ranks"]
    assert ranks["simple_regret_normalised"].max() == 1.0
    assert set(mean_ranks["metric"]) == {"simple_regret", "cumulative_regret"}


def test_normalised_regret_is_zero_when_every_method_reaches_the_optimum(tmp_path: Path) -> None:
    tables = [run_table(method=method, simple_regret=[9, 9, 9, 9, 0.0]) for method in ("a", "b")]
    ranks = summarise(tmp_path, tables)["ranks"]
    assert (ranks["simple_regret_normalised"] == 0.0).all()
    assert (ranks["rank_simple"] == 1.5).all()


def test_tracking_measures_log10_distance_to_gp_ucb_mll_over_bo_rounds(tmp_path: Path) -> None:
    reference = np.array([1.0, 1.0, 1e-1, 1e-2, 1e-3])
    tables = [
        run_table(method="gp-ucb-mll", simple_regret=reference, lengthscale_0=np.full(5, 0.5)),
        run_table(method="same", simple_regret=reference, lengthscale_0=np.full(5, 0.5)),
        # a decade above in every BO round; before them (initial design) it differs more, unseen
        run_table(method="tenfold", simple_regret=10 * reference + [5, 5, 0, 0, 0], lengthscale_0=np.full(5, 0.05)),
        # zero regret at the end is raised to the floor, 1e-8: 5 decades below 1e-3
        run_table(method="zero", simple_regret=[1, 1, 1e-1, 1e-2, 0.0], lengthscale_0=np.full(5, np.nan)),
    ]
    tracking = summarise(tmp_path, tables)["tracking"]
    regret = tracking[tracking["metric"] == "simple_regret"].set_index("method")
    assert regret["gap_mean"].to_dict() == pytest.approx({"same": 0.0, "tenfold": 1.0, "zero": 5 / 3})
    assert regret["place"].to_dict() == {"same": 1, "tenfold": 2, "zero": 3}
    assert (regret["reference"] == "gp-ucb-mll").all() and (regret["n_tasks"] == 1).all()
    lengthscale = tracking[tracking["metric"] == "lengthscale"].set_index("method")
    assert lengthscale["gap_mean"].to_dict() == pytest.approx({"same": 0.0, "tenfold": 1.0})  # 'zero' has none


def test_tracking_is_empty_without_the_reference(tmp_path: Path) -> None:
    tracking = summarise(tmp_path, [run_table(method="a"), run_table(method="b")])["tracking"]
    assert tracking.empty and list(tracking.columns) == ranks.TRACKING_COLUMNS


def test_coverage_gap_is_taken_per_seed_before_averaging(tmp_path: Path) -> None:
    tables = [
        run_table(seed=0, covered=[np.nan, np.nan, 1.0, 1.0, 1.0]),  # coverage 1: gap 0.1
        run_table(seed=1, covered=[np.nan, np.nan, 0.0, 1.0, 1.0]),  # 0, 1/2, 2/3
    ]
    summary = summarise(tmp_path, tables)
    steps = summary["steps"]
    bo = steps[(steps["seed"] == 1) & (steps["phase"] == "bo")]
    assert bo["coverage_gap"].to_numpy() == pytest.approx([0.9, 0.4, 0.9 - 2 / 3])
    curve = summary["curves"].query("metric == 'coverage_gap'")
    assert curve["mean"].to_numpy() == pytest.approx([0.5, 0.25, (0.1 + 0.9 - 2 / 3) / 2])


def test_known_truth_tasks_carry_their_lengthscale(tmp_path):
    from oscbo import run as engine

    result = engine.run("gp2", "gp-ucb-mll", [0], budget=1, n_init=4, task_options={"features": 256})
    paths = engine.write(result, tmp_path / "gp2")
    result = engine.run("hartmann3", "gp-ucb-mll", [0], budget=1, n_init=4)
    paths += engine.write(result, tmp_path / "h3")
    tasks = aggregate.load(aggregate.aggregate(paths, tmp_path / "summary")["tasks"].parent, ["tasks"])["tasks"]
    rows = tasks.set_index("task")
    assert rows.loc["gp2", "true_lengthscale"] == 0.2 and 0 < rows.loc["gp2", "true_lengthscale_standardised"]
    assert np.isnan(rows.loc["hartmann3", "true_lengthscale"]) and rows.loc["hartmann3", "optimal_value"] == 3.86278


def test_known_truth_trajectories_keep_the_cumulative_sharpness_gap(tmp_path):
    """G^_t (eq. 8) per seed: the running sum over BO rounds of L^s at the played lengthscale minus
    L^s at the true one, summed here from the engine's records by hand, kept in the known-truth
    trajectories beside the regret; NaN on a task without a true lengthscale."""
    from oscbo import run as engine

    result = engine.run(
        "gp2", "gp-ucb-mll", [0, 1], budget=5, n_init=4, task_options={"features": 256}, experiment="known-truth"
    )
    paths = engine.write(result, tmp_path / "gp2")
    paths += engine.write(
        engine.run("hartmann3", "gp-ucb-mll", [0], budget=2, n_init=4, experiment="known-truth"), tmp_path / "h3"
    )
    trajectories = aggregate.load(aggregate.aggregate(paths, tmp_path / "summary")["trajectories"].parent)[
        "trajectories"
    ]
    assert {"cumulative_regret", "violation_positive", "sharpness_gap"} <= set(trajectories.columns)
    for seed, record in result.tables.items():
        bo = record[record["phase"] == "bo"]
        expected = np.cumsum(bo["loss_sharpness"].to_numpy() - bo["loss_sharpness_true"].to_numpy())
        kept = trajectories[(trajectories["task"] == "gp2") & (trajectories["seed"] == seed)]
        assert kept["step"].tolist() == bo["step"].tolist()
        np.testing.assert_allclose(kept["sharpness_gap"].to_numpy(), expected, rtol=1e-12, atol=1e-15)
        assert np.abs(expected).max() > 1e-3  # GP-UCB-MLL plays another lengthscale: the gap is not 0
    assert trajectories.loc[trajectories["task"] == "hartmann3", "sharpness_gap"].isna().all()


def test_a_part_published_into_an_earlier_publication_gives_the_whole_study_s_rows(tmp_path: Path) -> None:
    """Two experiments aggregated apart, the second added to the first's publication
    (``oscbo publish --experiments``), give the rows of both aggregated at once: every table is
    computed within an experiment."""
    first = write_study(tmp_path / "runs", experiment="main")
    second = write_study(tmp_path / "runs", experiment="known-truth", methods=("oscbo", "gp-ucb-mll"))
    for name, paths in (("whole", first + second), ("first", first), ("second", second)):
        aggregate.aggregate(paths, tmp_path / name)
        protocol_rows = [{"setting": f"{name} row", "value": "", "paper": "", "kind": "as stated", "note": ""}]
        pd.DataFrame(protocol_rows).to_parquet(aggregate.table_path(tmp_path / name, "protocol"), index=False)
    written = aggregate.add_part(tmp_path / "first", tmp_path / "second", ["known-truth"])
    assert "readings" not in written and "final" in written
    for table in ("final", "curves", "trajectories", "ranks", "mean_ranks", "tracking", "tests", "provenance"):
        together, added = (aggregate.load(tmp_path / name, [table])[table] for name in ("whole", "first"))
        keys = [
            c
            for c in ("experiment", "task", "method", "seed", "step", "metric", "method_a", "method_b", "reading")
            if c in together.columns
        ]
        sort = [c for c in keys if c in added.columns]
        pd.testing.assert_frame_equal(
            added.sort_values(sort, ignore_index=True),
            together.sort_values(sort, ignore_index=True),
            check_exact=True,
            check_dtype=False,
            obj=table,
        )
    protocol = aggregate.load(tmp_path / "first", ["protocol"])["protocol"]
    assert protocol["setting"].tolist() == ["first row", "second row"]  # the publication's rows first


def test_a_reading_stands_in_where_its_stand_in_ran_and_nowhere_else() -> None:
    """A method stand-in replaces its method per (experiment, task) it ran on, a task stand-in its
    task per experiment it ran in; another reading's stand-ins are dropped. Held to a row-by-row
    reading of those rules."""
    rows = [
        (experiment, task, method, seed)
        for experiment in ("main", "ard")
        for task in ("a", "b", "a-max")
        for method in ("oscbo", "oscbo-x", "gp", "scgp-y")
        for seed in range(2)
        if not (method == "oscbo-x" and (experiment, task) != ("main", "b"))  # oscbo-x ran on main's b alone
        and not (task == "a-max" and experiment == "ard")  # a-max ran in main alone
    ]
    table = pd.DataFrame(rows, columns=["experiment", "task", "method", "seed"])
    reading = readings.Reading("x", "", {"oscbo-x": "oscbo"}, {"a-max": "a"})
    other = readings.Reading("y", "", {"scgp-y": "scgp"})
    applied = readings.apply(table, reading, [reading, other])

    expected = []
    for experiment, task, method, seed in rows:
        if method == "scgp-y" or (method == "oscbo" and (experiment, task) == ("main", "b")):
            continue  # the other reading's stand-in; the method oscbo-x stands in for, where it ran
        if task == "a" and experiment == "main":
            continue  # the task a-max stands in for, in the experiment it ran in
        named = ("a" if task == "a-max" else task, "oscbo" if method == "oscbo-x" else method)
        expected.append((experiment, *named, seed, method, task))
    found = applied[["experiment", "task", "method", "seed", "label", "task_run"]]
    assert list(found.itertuples(index=False, name=None)) == expected
    assert (applied["task_run"] == "a").sum() == 4  # ard's a (oscbo and gp, 2 seeds): no a-max there


def test_a_run_two_experiments_ask_for_is_counted_once() -> None:
    """The dual study's OSCBO at λ₀ = 1 is main's OSCBO: its record is one row per experiment and one
    run (the same computation, whatever its label); another seed, or another method, is another run."""
    from oscbo.analysis import summaries

    main = {"experiment": "main", "task": {"name": "t1"}, "method": "oscbo", "method_name": "oscbo", "seed": 0}
    main |= {"settings": {"lambda0": 1.0}, "n_init": 10, "budget": 100, "started": "2026-01-01T00:00:00+00:00"}
    dual = main | {"experiment": "dual", "method": "oscbo-lambda0=1-omega=0.001"}
    other = [main | {"seed": 1}, main | {"method": "oscbo-l1", "method_name": "oscbo-l1"}]
    table = summaries.provenance_table([main, dual, *other])
    assert table["run"].nunique() == 3 and table["run"].iloc[0] == table["run"].iloc[1]
    assert len(summaries.distinct_runs(table)) == 3
    assert summaries.runs_counted(table) == "3 runs (4 experiments' records)"
    assert summaries.runs_counted(table.iloc[[0, 2]]) == "2 runs"
    assert len(summaries.distinct_runs(table.drop(columns="run"))) == 4  # a table from before the column


def test_a_replicate_on_other_seeds_keeps_the_trajectories_its_experiment_keeps() -> None:
    """main-seeds20-39 (main's arms on seeds 20-39) keeps main's tracked metrics per seed and round,
    so the seed sets can judge the tracking claims on the unseen seeds alone; an experiment that
    keeps none (an ablation) is left out."""
    from oscbo.analysis import summaries

    rows = []
    for experiment, seed in (("main", 0), ("main-seeds20-39", 20), ("ard", 0)):
        for step in (10, 11):
            rows.append(
                {"experiment": experiment, "task": "levy5", "method": "oscbo", "seed": seed, "step": step,
                 "phase": "bo", "simple_regret": 1.0, "mean_halfwidth": 0.5, "coverage": 0.9, "lengthscale": 0.2,
                 "cumulative_regret": 2.0, "violation_positive": 0.0, "sharpness_gap": 0.1}
            )  # fmt: skip
    table = summaries.trajectories_table(pd.DataFrame(rows), {})
    assert table.groupby("experiment")["step"].size().to_dict() == {"main": 2, "main-seeds20-39": 2}
    assert table.loc[table["experiment"] == "main-seeds20-39", "lengthscale"].eq(0.2).all()
