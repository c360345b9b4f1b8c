"""Two studies of one protocol compared (``oscbo compare``): the Mann-Whitney p and the paired
signed-rank p against exact permutation counts, Holm's adjustment, the metric a task of unknown
optimum is compared on, the rows of changed code, and whether a changed verdict lies within the
new study's resampling."""

from __future__ import annotations

from itertools import combinations, product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oscbo.api.cli import main
from oscbo.findings import compare


def final(experiment: str, task: str, method: str, values, known: bool = True) -> pd.DataFrame:
    """A ``final`` table's rows of one (experiment, task, method): one seed per value."""
    values = np.asarray(values, dtype=float)
    return pd.DataFrame(
        {
            "experiment": experiment,
            "task": task,
            "method": method,
            "seed": np.arange(len(values)),
            "simple_regret": values,
            "cumulative_regret": 10 * values,
            "best_f": -values,
            "f_star_known": known,
        }
    )


def exact_two_sided_p(a: np.ndarray, b: np.ndarray) -> float:
    """The exact two-sided Mann-Whitney p, by counting every split of the pooled values (no ties):
    twice the smaller tail of U_a's permutation distribution, at most 1."""
    pooled = np.concatenate([a, b])
    u = lambda x, y: sum(xi > yi for xi in x for yi in y)  # noqa: E731
    observed = u(a, b)
    null = []
    for chosen in combinations(range(len(pooled)), len(a)):
        mask = np.zeros(len(pooled), bool)
        mask[list(chosen)] = True
        null.append(u(pooled[mask], pooled[~mask]))
    null = np.array(null)
    return min(1.0, 2 * min((null <= observed).mean(), (null >= observed).mean()))


def test_the_p_value_is_the_exact_permutation_count_on_small_samples():
    a, b = np.array([0.3, 0.9, 1.4, 2.2]), np.array([0.1, 0.2, 0.5, 0.7])
    rows = compare.finals(final("main", "t", "m", a), final("main", "t", "m", b))
    p = rows.set_index("metric").loc["simple_regret", "p"]
    assert p == pytest.approx(exact_two_sided_p(a, b), abs=1e-12)
    assert rows.set_index("metric").loc["simple_regret", "mean_new"] == pytest.approx(a.mean())


def exact_signed_rank_p(differences: np.ndarray) -> float:
    """The exact two-sided Wilcoxon signed-rank p, by counting every assignment of signs to the
    ranks of |d| (no zeros or ties): twice the smaller tail of W+'s distribution, at most 1."""
    ranks = np.argsort(np.argsort(np.abs(differences))) + 1
    observed = ranks[differences > 0].sum()
    null = np.array([ranks[np.array(signs, bool)].sum() for signs in product([0, 1], repeat=len(ranks))])
    return min(1.0, 2 * min((null <= observed).mean(), (null >= observed).mean()))


def test_the_paired_p_is_the_exact_sign_flip_count_over_the_seeds_both_ran():
    a = np.array([0.3, 0.9, 1.4, 2.2, 0.8, 1.1, 0.05])
    b = np.array([0.1, 0.2, 0.5, 0.7, 1.0, 0.6, 0.0])
    new = final("main", "t", "m", a)
    old = pd.concat([final("main", "t", "m", b), final("main", "t", "m", [9.0]).assign(seed=99)])  # unpaired seed
    row = compare.finals(new, old).set_index("metric").loc["simple_regret"]
    assert row["pairs"] == len(a) and row["seeds_old"] == len(b) + 1
    assert row["p_paired"] == pytest.approx(exact_signed_rank_p(a - b), abs=1e-12)
    # the seeds paired see a shift that the two samples, pooled, hide
    assert row["p_paired"] < 0.05 < row["p"]
    same = compare.finals(new, new).set_index("metric").loc["simple_regret"]
    assert same["p_paired"] == 1.0 and not same["differ_paired"]


def test_holm_adjusts_within_an_experiment_and_metric_and_decides_differ():
    rng = np.random.default_rng(0)
    same, shifted = rng.normal(size=20), rng.normal(size=20)
    new = pd.concat(
        [final("main", "t1", "m", same + 5), final("main", "t2", "m", same), final("logei", "t1", "m", same)]
    )
    old = pd.concat(
        [final("main", "t1", "m", shifted), final("main", "t2", "m", shifted), final("logei", "t1", "m", same)]
    )
    rows = compare.finals(new, old).set_index(["experiment", "task", "metric"])
    main = rows.loc["main"].xs("simple_regret", level="metric")
    # a family of two: the smaller p doubled, the larger kept, never below the smaller's adjusted p
    assert main.loc["t1", "p_holm"] == pytest.approx(min(1.0, 2 * main.loc["t1", "p"]))
    assert main.loc["t2", "p_holm"] == pytest.approx(max(main.loc["t1", "p_holm"], main.loc["t2", "p"]))
    assert main.loc["t1", "differ"] and not main.loc["t2", "differ"]
    assert rows.loc[("logei", "t1", "simple_regret"), "p_holm"] == pytest.approx(1.0)


def test_a_task_of_unknown_optimum_compares_the_best_value_found():
    new, old = final("main", "lunar12", "m", [1.0, 2.0], known=False), final("main", "lunar12", "m", [1.5, 2.5], False)
    assert compare.finals(new, old)["metric"].tolist() == ["best_f"]
    both = compare.finals(final("main", "t", "m", [1.0, 2.0]), final("main", "t", "m", [1.5, 2.5]))
    assert both["metric"].tolist() == ["simple_regret", "cumulative_regret"]


def test_rows_of_changed_code_are_named_and_others_are_not():
    labels = ["scgp", "scgp-conditioning=regression", "scgpx", "vanilla-bo", "oscbo"]
    new = pd.concat([final("main", "t", label, [1.0, 2.0]) for label in labels])
    rows = compare.finals(new, new, ["scgp", "vanilla-bo"]).drop_duplicates("method").set_index("method")
    assert rows["new_code"].to_dict() == {
        "oscbo": False,
        "scgp": True,
        "scgp-conditioning=regression": True,
        "scgpx": False,
        "vanilla-bo": True,
    }


def test_a_changed_verdict_lies_within_the_new_resampling_when_the_old_outcome_is_not_rare():
    """The earlier outcome as run is within the new study's resampling when at least 10 % of the
    new resamples give it (1 - the share that decides a verdict)."""
    new = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "e"],
            "reading": "default",
            "verdict": ["not held", "not held", "held", "undecided", "not evaluable"],
            "share": [0.05, 0.10, 0.95, 0.5, np.nan],
        }
    )
    old = new.assign(
        verdict=["held", "held", "not held", "undecided", "held"], as_run=["held"] * 2 + ["not held"] * 2 + ["held"]
    )
    rows = compare.verdicts(new, old).set_index("id")
    assert rows["changed"].tolist() == [True, True, True, False, True]
    assert rows["within"].tolist()[:4] == [False, True, False, True] and pd.isna(rows.loc["e", "within"])


def test_the_command_prints_markdown_and_writes_both_tables(tmp_path: Path, capsys):
    for name, shift in (("new", 0.0), ("old", 30.0)):
        folder = tmp_path / name
        folder.mkdir()
        final("main", "t", "scgp", np.arange(20) + shift).to_parquet(folder / "final.parquet")
        claims = pd.DataFrame(
            {"id": ["c"], "reading": ["default"], "verdict": ["held"], "share": [1.0], "as_run": ["held"]}
        )
        claims.to_parquet(folder / "claims.parquet")
    assert (
        main(["compare", str(tmp_path / "new"), str(tmp_path / "old"), "--new-code", "scgp", "--out", str(tmp_path)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "| main | simple_regret | 1 | 1 | 1 |" in printed and "0 of 1 (claim, reading) verdicts changed." in printed
    assert len(pd.read_parquet(tmp_path / "compare_finals.parquet")) == 2
    assert len(pd.read_parquet(tmp_path / "compare_verdicts.parquet")) == 1
