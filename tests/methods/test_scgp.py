"""SCGP: the random split, the calibrated multiplier, the calibration lengthscale, and runs."""

import numpy as np
import pytest
import torch

from oscbo import run as engine
from oscbo.methods.base import Observations
from oscbo.methods.scgp import (
    SCGP,
    calibration_distances,
    calibration_objective,
    empirical_quantile,
    random_split,
    split_sizes,
)
from oscbo.seeding import generator
from oscbo.settings import Settings

NOISE = Settings().noise_var


def constructed_data(S=2, n=60, d=2, seed=0):
    """A smooth function plus heteroscedastic noise: residuals of distinct sizes."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(S, n, d, generator=g, dtype=torch.float64)
    noise = (0.05 + 0.4 * X[..., 0]) * torch.randn(S, n, generator=g, dtype=torch.float64)
    return Observations(X, torch.sin(6 * X).sum(-1) + noise)


def fitted_scgp(data, seeds=(0, 1)):
    method = SCGP(Settings(), budget=10, seeds=list(seeds))
    method.start(data)
    theta = method.lengthscale(1, data)
    return method, method.posterior(data, theta)


def test_split_sizes():
    # n_cal = max(2, round(0.2 n)), n_reg = n - n_cal >= 3
    expected = {5: (3, 2), 10: (8, 2), 12: (10, 2), 13: (10, 3), 50: (40, 10), 109: (87, 22), 110: (88, 22)}
    assert {n: split_sizes(n) for n in expected} == expected
    with pytest.raises(ValueError, match="at least 5 observations"):
        split_sizes(4)
    with pytest.raises(ValueError, match="n_init >= 5"):
        SCGP(Settings(), 3, [0]).start(constructed_data(S=1, n=4))


def test_random_split_is_a_seeded_partition_that_changes_every_round():
    stream = generator("scgp-split", 0)
    rounds = [random_split(n, stream) for n in (20, 20, 21)]
    for (regression, calibration), n in zip(rounds, (20, 20, 21)):
        assert (len(regression), len(calibration)) == split_sizes(n)
        assert sorted(regression.tolist() + calibration.tolist()) == list(range(n))  # disjoint and covering
        assert torch.equal(regression, regression.sort().values)  # query order kept
    assert not torch.equal(rounds[0][1], rounds[1][1])  # a fresh split each round
    again = generator("scgp-split", 0)
    assert all(torch.equal(a, b) for a, b in zip(rounds[0], random_split(20, again)))  # reproducible
    other = random_split(20, generator("scgp-split", 1))
    assert not torch.equal(rounds[0][1], other[1])
    # the method draws each seed's split from that seed's own stream
    data = constructed_data(S=2, n=20)
    method = SCGP(Settings(), 3, [0, 1])
    method.start(data)
    method.lengthscale(1, data)
    assert torch.equal(method.calibration[0], rounds[0][1]) and torch.equal(method.calibration[1], other[1])


def test_empirical_quantile_is_the_smallest_value_covering_the_level():
    g = torch.Generator().manual_seed(3)
    for m in range(1, 31):
        values = torch.rand(m, generator=g, dtype=torch.float64)
        covering = [v for v in values if (values <= v).double().mean() >= 0.9]
        assert empirical_quantile(values, 0.9) == min(covering)
    # with two values the 0.9-quantile is the larger one (linear interpolation would cover one of two)
    assert empirical_quantile(torch.tensor([1.0, 3.0]), 0.9) == 3.0


def test_calibrated_interval_covers_90_percent_with_the_smallest_multiplier():
    data = constructed_data()  # n = 60: 12 calibration points, beta is the 11th ratio of 12
    method, model = fitted_scgp(data)
    y = data.standardized()
    for i in range(2):
        calibration = method.calibration[i]
        mu, variance = model.seed(i).predict(data.X[i, calibration])
        residual = (y[i, calibration] - mu).abs()
        sigma_c = (variance + NOISE).sqrt()
        beta = method.multiplier[i]
        assert (residual <= beta * sigma_c).double().mean() >= 0.9
        assert (residual <= beta * (1 - 1e-9) * sigma_c).double().mean() < 0.9
        assert (residual <= beta * sigma_c).sum() == 11  # not simply the largest ratio
        # the recorded interval is beta sigma_c ...
        assert torch.allclose(method.halfwidth(variance, beta), beta * sigma_c)
    # ... and the acquisition is mu + beta sigma_c (the latent s2_c plus the noise)
    x = torch.rand(2, 7, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    width = method.width(model)
    ucb = method.score(model, width)(x, None)
    assert torch.equal(method.score(model, width)(x[1:], torch.tensor([1]))[0], ucb[1])
    for i in range(2):
        mu, variance = model.seed(i).predict(x[i])
        assert torch.allclose(ucb[i], mu + width[i] * (variance + NOISE).sqrt())
    state = method.state()
    assert torch.equal(state["calibration_multiplier"], method.multiplier)
    assert torch.equal(state["calibration_lengthscale"], method.calibration_theta[:, 0])


def test_calibration_lengthscale_minimises_the_objective_on_a_grid():
    data = constructed_data(S=2, n=40, d=2, seed=5)
    method, model = fitted_scgp(data)
    settings = Settings()
    y = data.standardized()
    grid = torch.logspace(-2, 1, 600, dtype=torch.float64).unsqueeze(-1)
    for i in range(2):
        regression, calibration = method.regression[i], method.calibration[i]
        X_regression, X_calibration = data.X[i, regression], data.X[i, calibration]
        residual = y[i, calibration] - model.mean_model.seed(i).predict(X_calibration)[0]
        distances = calibration_distances(X_regression, X_calibration)
        values = calibration_objective(grid, distances, residual, settings)
        assert values.max() > 1.2 * values.min()  # the objective does depend on theta_c
        learned = calibration_objective(method.calibration_theta[i : i + 1], distances, residual, settings)
        # the minimum sits at a kink (the quantile switches points there): Adam at lr 0.05 on
        # log theta_c ends within a step of it
        assert learned.item() <= values.min().item() * 1.01
        assert abs(torch.log(method.calibration_theta[i] / grid[values.argmin()]).item()) < 0.05


@pytest.mark.parametrize("task", ["hartmann3", "levy5", "hartmann6"])
def test_batched_run_records_every_column(task):
    result = engine.run(task, "scgp", [0, 1], budget=4, n_init=5)
    for table in result.tables.values():
        bo = table[table.phase == "bo"]
        must_be_set = [
            "y",
            "f",
            "simple_regret",
            "lengthscale_0",
            "mu",
            "sigma",
            "halfwidth",
            "covered",
            "loss_sharpness",
            "loss_calibration",
            "violation",
            "calibration_multiplier",
            "calibration_lengthscale",
        ]
        assert not bo[must_be_set].isna().any().any()
        assert list(table.columns[-2:]) == ["calibration_multiplier", "calibration_lengthscale"]
        # halfwidth = beta sigma_c with sigma_c = sqrt(s2_c + sigma^2), s2_c the recorded latent variance
        assert np.allclose(bo["halfwidth"], bo["calibration_multiplier"] * np.sqrt(bo["sigma"] ** 2 + NOISE))
        # in Theta, up to the rounding of exp(log theta) at its bounds
        for column in ("lengthscale_0", "calibration_lengthscale"):
            assert bo[column].between(1e-2 - 1e-12, 1e1 + 1e-12).all()


def test_a_seed_does_not_depend_on_its_batch():
    alone = engine.run("hartmann3", "scgp", [1], budget=6, n_init=10).tables[1]
    together = engine.run("hartmann3", "scgp", [0, 1, 2], budget=6, n_init=10).tables[1]
    columns = ["x_0", "x_1", "x_2", "lengthscale_0", "calibration_multiplier", "calibration_lengthscale"]
    np.testing.assert_array_equal(alone[columns].to_numpy(), together[columns].to_numpy())
