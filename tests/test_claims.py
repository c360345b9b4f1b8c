"""The paper's claims, evaluated on hand-made studies that support or contradict them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_aggregate import run_table, write_run

from oscbo import aggregate, claims

METHODS = ["oscbo", "oscbo-l1", "gp-ucb-mll", "ocbo", "a-gp-ucb", "lb-gp-ucb"]
MAIN_TASKS = ["t1", "t2", "t3"]

# Per method of 'main': final simple regret, final cumulative regret, lengthscale. Every
# task and seed alike, so the ranks are the same on every task.
SUPPORTING = {
    # OSCBO ties GP-UCB-MLL in regret and lengthscale (it tracks it), OSCBO-L1 is a little
    # worse in simple regret, best in cumulative regret and has its own lengthscale.
    "oscbo": (0.10, 2.10, 0.5),
    "oscbo-l1": (0.12, 1.00, 0.1),
    "gp-ucb-mll": (0.10, 2.00, 0.5),
    "ocbo": (0.50, 2.05, 0.4),
    "a-gp-ucb": (0.80, 5.00, 0.01),
    "lb-gp-ucb": (0.60, 2.20, 0.05),
}
CONTRADICTING = {
    # OSCBO is the worst and far from GP-UCB-MLL; OSCBO-L1 is the worst in cumulative regret
    # and follows GP-UCB-MLL's lengthscale.
    "oscbo": (1.00, 2.10, 0.01),
    "oscbo-l1": (0.12, 10.0, 0.5),
    "gp-ucb-mll": (0.10, 2.00, 0.5),
    "ocbo": (0.50, 2.05, 0.4),
    "a-gp-ucb": (0.80, 5.00, 0.01),
    "lb-gp-ucb": (0.60, 2.20, 0.05),
}
# 'ard': final simple regret per (task, method).
ARD_SUPPORTING = {
    "t1": {"vanilla-bo": 0.05, "gp-ucb-mll": 0.1, "oscbo": 0.1},
    "lunar12": {"gp-ucb-mll": 0.1, "vanilla-bo": 0.2, "oscbo": 0.3},  # OSCBO's deficit is on Lunar
}
ARD_CONTRADICTING = {
    "t1": {"vanilla-bo": 0.05, "oscbo": 0.1, "gp-ucb-mll": 0.3},
    "lunar12": {"vanilla-bo": 0.05, "oscbo": 0.1, "gp-ucb-mll": 0.2},
}


def run(experiment: str, task: str, method: str, seed: int, simple: float, cumulative: float = 1.0,
        lengthscale: float = 0.5) -> pd.DataFrame:
    """A record whose simple regret falls geometrically from 1 to ``simple``; the seed
    scales every method's regret alike, so it never changes a rank."""
    scale = 1.0 + 0.1 * seed
    return run_table(
        experiment, task, method, seed,
        simple_regret=scale * np.geomspace(1.0, simple, 5),
        cumulative_regret=scale * np.array([0, 0, cumulative / 3, 2 * cumulative / 3, cumulative]),
        lengthscale_0=np.full(5, lengthscale),
    )


def summarise(root: Path, main: dict, ard: dict, not_run: list[dict] = ()) -> dict[str, pd.DataFrame]:
    tables = [
        run("main", task, method, seed, *values)
        for task in MAIN_TASKS for method, values in main.items() for seed in (0, 1)
    ]
    tables += [
        run("ard", task, method, seed, value)
        for task, regrets in ard.items() for method, value in regrets.items() for seed in (0, 1)
    ]
    paths = [write_run(root / "runs", table) for table in tables]
    aggregate.aggregate(paths, root / "summary", not_run)
    return aggregate.load(root / "summary", claims.TABLES)


@pytest.fixture(scope="module")
def supporting(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    not_run = [{"experiment": "main", "task": "t1", "method": "tabicl", "seeds": [0, 1],
                "reason": "checkpoint x.ckpt is missing"}]
    tables = summarise(tmp_path_factory.mktemp("supporting"), SUPPORTING, ARD_SUPPORTING, not_run)
    return claims.evaluate(tables).set_index("id")


@pytest.fixture(scope="module")
def contradicting(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    tables = summarise(tmp_path_factory.mktemp("contradicting"), CONTRADICTING, ARD_CONTRADICTING)
    return claims.evaluate(tables).set_index("id")


BOTH_WAYS = [
    "main-strongest",
    "main-matches-mll",
    "main-avoids-weaker",
    "main-l1-slightly-worse",
    "main-l1-best-cumulative",
    "main-l1-tradeoff",
    "main-tracks-mll",
    "main-l1-distinct-lengthscale",
    "ard-slightly-worse-than-mll",
    "ard-due-to-lunar",
    "ard-vanilla-not-stronger",
]


@pytest.mark.parametrize("claim", BOTH_WAYS)
def test_claim_is_held_when_the_records_support_it(supporting: pd.DataFrame, claim: str) -> None:
    assert supporting.loc[claim, "verdict"] == "held", supporting.loc[claim, "numbers"]


@pytest.mark.parametrize("claim", BOTH_WAYS)
def test_claim_is_not_held_when_the_records_contradict_it(contradicting: pd.DataFrame, claim: str) -> None:
    assert contradicting.loc[claim, "verdict"] == "not held", contradicting.loc[claim, "numbers"]


def test_gp_cluster_claim_measures_the_distance_to_the_baselines(supporting: pd.DataFrame) -> None:
    # Cumulative ranks: l1 1, mll 2, ocbo 3, oscbo 4, lb 5, a 6; baselines' median 4.
    row = supporting.loc["main-gp-cluster-cumulative"]
    assert row["verdict"] == "held"
    assert "median 4.00" in row["numbers"] and "distance 0.00" in row["numbers"]


def test_claims_without_their_experiment_or_method_are_not_evaluated(supporting: pd.DataFrame) -> None:
    for claim, missing in [("smoothness-top", "smoothness"), ("logei-competitive", "'logei'")]:
        assert supporting.loc[claim, "verdict"] == "not evaluated"
        assert missing in supporting.loc[claim, "numbers"]
    tabicl = supporting.loc["main-tabicl-competitive"]
    assert tabicl["verdict"] == "not evaluated"
    assert "'tabicl' has no runs in 'main'" in tabicl["numbers"] and "x.ckpt is missing" in tabicl["numbers"]


def test_no_experiment_at_all_leaves_every_claim_not_evaluated(tmp_path: Path) -> None:
    paths = [write_run(tmp_path / "runs", run("other", "t1", method, 0, 0.1)) for method in ("oscbo", "gp-ucb-mll")]
    aggregate.aggregate(paths, tmp_path / "summary")
    verdicts = claims.evaluate(aggregate.load(tmp_path / "summary", claims.TABLES))
    assert list(verdicts.columns) == claims.COLUMNS
    assert len(verdicts) == len(claims.CLAIMS) and verdicts["id"].is_unique
    assert (verdicts["verdict"] == "not evaluated").all()
    assert verdicts["numbers"].str.contains("in this study").all()


def test_every_claim_quotes_the_paper(supporting: pd.DataFrame) -> None:
    paper = Path(__file__).parents[1] / ".." / "shared" / "paper" / "oscbo-paper.txt"
    if not paper.exists():
        pytest.skip("the paper's text is not beside the repository")
    text = paper.read_text(encoding="utf-8")
    for claim in claims.CLAIMS:
        for part in claim.paper.split("[...]"):
            assert part.strip(" .") in text, claim.id
