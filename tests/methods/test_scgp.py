"""SCGP: the random split, the calibrated multiplier, the calibration lengthscale, and runs."""

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import MaternKernel
from gpytorch.means import ZeroMean

from oscbo import run as engine
from oscbo.methods.base import Observations
from oscbo.methods.scgp import (
    SCGP,
    calibrated_multiplier,
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


def fitted_scgp(data, seeds=(0, 1), settings=None):
    method = SCGP(settings or Settings(), budget=10, seeds=list(seeds))
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


def test_the_multiplier_on_a_hand_made_residual_set():
    # ratios r / sigma_c, shuffled: -4, -3, -2, -1, 0, 0.5, 1, 1.5, 2, 2.5; beta is the 9th smallest of 10
    std = torch.tensor([2.0, 0.5, 1.0, 1.0, 4.0, 1.0, 2.0, 1.0, 0.5, 1.0], dtype=torch.float64)
    residual = torch.tensor([-8.0, 1.25, -1.0, 0.5, 8.0, -3.0, 3.0, 0.0, -1.0, 1.0], dtype=torch.float64)
    one_sided, two_sided = Settings(scgp_multiplier="one-sided"), Settings(scgp_multiplier="two-sided")
    assert calibrated_multiplier(residual, std, one_sided) == 2.0  # signed: 9th of -4 ... 2.5
    assert calibrated_multiplier(residual, std, two_sided) == 3.0  # |r|: 9th of 0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3, 4
    # the one-sided beta is below zero when 90 % of the residuals are: the 9th of -5, -4.5, ..., -0.5
    below = -torch.arange(10, 0, -1, dtype=torch.float64) / 2
    assert calibrated_multiplier(below, torch.ones(10, dtype=torch.float64), one_sided) == -1.0
    # batched over leading dimensions, row by row
    batch = torch.stack([residual, below * std])
    assert calibrated_multiplier(batch, std, one_sided).tolist() == [2.0, -1.0]


@pytest.mark.parametrize("multiplier", ["one-sided", "two-sided"])
def test_calibrated_interval_covers_90_percent_with_the_smallest_multiplier(multiplier):
    data = constructed_data()  # n = 60: 12 calibration points, beta is the 11th ratio of 12
    # on the regression set the model is the pair of GPs that calibrates beta
    settings = Settings(scgp_conditioning="regression", scgp_multiplier=multiplier)
    method, model = fitted_scgp(data, settings=settings)
    y = data.standardized()
    for i in range(2):
        calibration = method.calibration[i]
        mu, variance = model.seed(i).predict(data.X[i, calibration])
        residual = y[i, calibration] - mu
        if multiplier == "two-sided":
            residual = residual.abs()
        sigma_c = (variance + NOISE).sqrt()
        beta = method.multiplier[i]
        assert (residual <= beta * sigma_c).double().mean() >= 0.9
        assert (residual <= (beta - 1e-9) * sigma_c).double().mean() < 0.9
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


def botorch_posterior(X, y, lengthscale, x):
    """The latent posterior mean and variance at ``x`` of BoTorch's GP on (X, y): Matérn-5/2,
    output scale 1, zero mean, the fixed noise, the given lengthscale."""
    kernel = MaternKernel(nu=2.5).double()
    kernel.lengthscale = lengthscale
    noise = torch.full_like(y.unsqueeze(-1), NOISE)
    # no outcome transform: y is standardised already, as the engine's is
    gp = SingleTaskGP(X, y.unsqueeze(-1), noise, covar_module=kernel, mean_module=ZeroMean(), outcome_transform=None)
    posterior = gp.posterior(x)
    return posterior.mean.squeeze(-1).detach(), posterior.variance.squeeze(-1).detach()


def test_the_ucb_is_conditioned_on_all_data_or_on_the_regression_set():
    data = constructed_data(n=30)
    y = data.standardized()
    x = torch.rand(2, 7, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    fitted = {
        conditioning: fitted_scgp(data, settings=Settings(scgp_conditioning=conditioning))
        for conditioning in ("all", "regression")
    }
    (on_all, model_all), (on_regression, model_regression) = fitted["all"], fitted["regression"]
    # the split, the MLL lengthscale, theta_c and beta do not depend on the conditioning set ...
    for name in ("regression", "calibration", "theta", "calibration_theta", "multiplier"):
        assert torch.equal(getattr(on_all, name), getattr(on_regression, name)), name
    # ... the UCB's pair of GPs does: each is BoTorch's posterior on those points
    for i in range(2):
        for model, points in ((model_all, slice(None)), (model_regression, on_regression.regression[i])):
            mu, variance = model.seed(i).predict(x[i])
            X, targets = data.X[i, points], y[i, points]
            expected_mu = botorch_posterior(X, targets, on_all.theta[i], x[i])[0]
            expected_variance = botorch_posterior(X, targets, on_all.calibration_theta[i], x[i])[1]
            assert torch.allclose(mu, expected_mu, rtol=1e-8, atol=1e-10)
            assert torch.allclose(variance, expected_variance, rtol=1e-7, atol=1e-10)
        assert not torch.allclose(model_all.seed(i).predict(x[i])[0], model_regression.seed(i).predict(x[i])[0])


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
def test_the_recorded_interval_is_the_calibrated_one(task):
    """Each round's half-width is β σ_c with its recorded β and σ_c, and both lengthscales stay in Θ
    (every column set: tests/methods/test_contract.py)."""
    result = engine.run(task, "scgp", [0, 1], budget=4, n_init=5)
    for table in result.tables.values():
        bo = table[table.phase == "bo"]
        assert list(table.columns[-2:]) == ["calibration_multiplier", "calibration_lengthscale"]
        # halfwidth = beta sigma_c with sigma_c = sqrt(s2_c + sigma^2), s2_c the recorded latent variance
        assert np.allclose(bo["halfwidth"], bo["calibration_multiplier"] * np.sqrt(bo["sigma"] ** 2 + NOISE))
        # in Theta, up to the rounding of exp(log theta) at its bounds
        for column in ("lengthscale_0", "calibration_lengthscale"):
            assert bo[column].between(1e-2 - 1e-12, 1e1 + 1e-12).all()
