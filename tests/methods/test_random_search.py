"""Random search, the theory claims' negative control: uniform points in the domain, blind to the
data, its diagnostics under θ₀, and a regret that does not level off as GP-UCB's does."""

import numpy as np
import pytest
import torch
from scipy import stats

from oscbo import run as engine
from oscbo.methods.base import build_method
from oscbo.settings import Settings

X3 = [f"x_{i}" for i in range(3)]


def test_points_are_uniform_on_the_unit_cube_and_ignore_the_raw_points():
    """4000 rounds of two seeds in 3-D: every coordinate in [0, 1) and uniform by Kolmogorov-Smirnov,
    the coordinates uncorrelated, the seeds' streams different; the raw points set d alone."""
    method = build_method("random-search", Settings(), budget=4000, seeds=[0, 1])
    corner = torch.zeros(2, 20, 3, dtype=torch.float64)  # raw points an acquisition would start from
    points = torch.stack([method.propose(None, None, corner) for _ in range(4000)])  # rounds x S x d
    assert points.shape == (4000, 2, 3) and points.dtype == torch.float64
    assert ((points >= 0) & (points < 1)).all()
    for seed in range(2):
        for k in range(3):
            assert stats.kstest(points[:, seed, k].numpy(), "uniform").pvalue > 1e-3, (seed, k)
        correlation = np.corrcoef(points[:, seed].numpy().T)
        assert np.abs(correlation[np.triu_indices(3, 1)]).max() < 0.1
    assert not torch.equal(points[:, 0], points[:, 1])


def test_points_do_not_depend_on_the_data():
    """The same seed on noise-free and on very noisy observations: other data, the same queries."""
    clean = engine.run("hartmann3", "random-search", [0], budget=5, n_init=5).tables[0]
    noisy = engine.run("hartmann3", "random-search", [0], budget=5, n_init=5, noise_std=1.0).tables[0]
    assert not np.array_equal(clean["y"], noisy["y"])
    np.testing.assert_array_equal(clean[X3].to_numpy(), noisy[X3].to_numpy())


def test_its_diagnostics_are_the_shared_gp_s_under_theta_0_held_fixed():
    """Random search chooses no query by a model, yet records the shared GP's diagnostics under θ₀,
    which it never refits (its batch independence: tests/methods/test_contract.py)."""
    table = engine.run("hartmann3", "random-search", [1], budget=6, n_init=5).tables[1]
    assert table["mu"].notna().sum() == 6 and table["lengthscale_0"].notna().sum() == 6  # diagnostics recorded
    assert table["lengthscale_0"].dropna().nunique() == 1  # theta_0, held fixed


def third_means(method: str) -> tuple[float, float]:
    """The mean instantaneous regret f* - f(x_t) over the first and the last 10 of 30 BO rounds on
    gp2 (2 seeds), from the increments of the record's cumulative regret."""
    result = engine.run("gp2", method, [0, 1], budget=30, n_init=10)
    increments = np.stack([np.diff(table["cumulative_regret"].to_numpy()[9:]) for table in result.tables.values()])
    assert increments.shape == (2, 30)
    return increments[:, :10].mean(), increments[:, -10:].mean()


@pytest.mark.parametrize("method, within", [("random-search", (0.7, np.inf)), ("gp-ucb-true", (0.0, 0.5))])
def test_regret_increments_shrink_for_gp_ucb_and_not_for_random_search(method, within):
    """Random search's expected instantaneous regret is the same every round (its cumulative regret
    is linear in T): the last third's mean stays above 0.7 of the first third's. GP-UCB at the true
    kernel, on the same seeds, falls below half, so the criterion tells the two apart. (Measured:
    1.08 and 0.32; on seeds 2-5, 0.88 to 1.13 and 0.31 to 0.56.)"""
    first, last = third_means(method)
    assert within[0] < last / first < within[1], (first, last)
