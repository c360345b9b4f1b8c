"""TabICLv2: quantile moments, the differentiable path against tabicl's wrapper, the Adam
optimiser, the missing checkpoint, and short runs on a tiny random checkpoint (no download)."""

import math
import time

import numpy as np
import pytest
import torch
from scipy import stats
from tabicl_checkpoint import tiny_settings, write_tiny_checkpoint

from oscbo import run as engine
from oscbo.methods.base import MethodUnavailableError, Observations, build_method
from oscbo.methods.tabicl.acquisition import adam_maximize
from oscbo.methods.tabicl.checkpoint import CHECKPOINT_FILE, CheckpointMissingError, checkpoint_path
from oscbo.methods.tabicl.posterior import quantile_moments
from oscbo.settings import Settings


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("checkpoints") / "tiny.ckpt")


def data():
    """One seed's 12 points in [0, 1]^3."""
    X = torch.rand(1, 12, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    return Observations(X, torch.sin(5 * X).sum(-1))


def fitted(checkpoint, observations):
    """The method (seed 0) and its round-1 posterior on ``observations``."""
    method = build_method("tabicl", Settings(tabicl_checkpoint=str(checkpoint)), 3, [0])
    method.start(observations)
    theta = method.lengthscale(1, observations)
    return method, method.posterior(observations, theta)


KNOWN = {"normal": stats.norm(1.0, 2.0), "expon": stats.expon(scale=0.5), "uniform": stats.uniform(-1.0, 3.0)}


@pytest.mark.parametrize("distribution", KNOWN.values(), ids=KNOWN.keys())
def test_quantile_moments_recover_known_mean_and_variance(distribution):
    levels = np.arange(1, 1000) / 1000  # TabICL's 999 levels k / (K + 1)
    quantiles = torch.tensor(distribution.ppf(levels), dtype=torch.float64)
    mean, variance = quantile_moments(torch.stack([quantiles, 3 * quantiles - 2]))  # batched; affine image
    assert mean.tolist() == pytest.approx([distribution.mean(), 3 * distribution.mean() - 2], rel=2e-3, abs=1e-4)
    assert variance.tolist() == pytest.approx([distribution.var(), 9 * distribution.var()], rel=2e-3)


def test_a_relative_checkpoint_is_taken_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checkpoint_path(Settings()) == tmp_path / "data" / "checkpoints" / CHECKPOINT_FILE
    assert checkpoint_path(Settings(tabicl_checkpoint=str(tmp_path / "x.ckpt"))) == tmp_path / "x.ckpt"


def test_missing_checkpoint_fails_at_once_naming_file_and_source(tmp_path):
    absent = tmp_path / "absent.ckpt"
    tic = time.perf_counter()
    with pytest.raises(CheckpointMissingError) as caught:
        engine.run("hartmann3", "tabicl", [0], 2, 5, Settings(tabicl_checkpoint=str(absent)))
    assert time.perf_counter() - tic < 2
    message = str(caught.value)
    assert str(absent) in message and "jingang/TabICL" in message and CHECKPOINT_FILE in message
    assert f"hf download jingang/TabICL {CHECKPOINT_FILE} --local-dir {tmp_path}" in message
    assert isinstance(caught.value, FileNotFoundError) and isinstance(caught.value, MethodUnavailableError)


def test_differentiable_path_equals_the_wrapper(tiny_checkpoint):
    observations = data()
    _, posterior = fitted(tiny_checkpoint, observations)
    regressor = posterior.regressors[0]
    assert set(regressor.ensemble_generator_.ensemble_configs_) == {"none", "power"}  # Yeo-Johnson replayed
    corners_and_outliers = torch.tensor([[0.0, 1.0, 0.5], [3.0, -2.0, 0.5], [50.0, 0.5, -40.0]], dtype=torch.float64)
    x = torch.cat(
        [
            torch.rand(6, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64),
            observations.X[0, :2],
            corners_and_outliers,
        ]
    )  # outliers: the wrapper's clipping
    expected = regressor.predict(x.numpy(), output_type="raw_quantiles")
    quantiles = posterior.quantiles(0, x)
    np.testing.assert_allclose(quantiles.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    # a point's prediction does not depend on the other candidates (the restarts share a batch)
    alone = posterior.quantiles(0, x[3:4])
    torch.testing.assert_close(alone, quantiles[3:4], rtol=1e-5, atol=1e-6)


def test_ucb_gradient_matches_finite_differences(tiny_checkpoint):
    method, posterior = fitted(tiny_checkpoint, data())
    width = method.width(posterior)
    assert torch.equal(width, torch.tensor([math.sqrt(2.0)], dtype=torch.float64))
    ucb = method.acquisition(posterior, width, 0)
    x = torch.tensor([[0.3, 0.6, 0.4]], dtype=torch.float64, requires_grad=True)
    ucb(x).sum().backward()
    direction = torch.tensor([[0.6, -0.8, 0.0]], dtype=torch.float64)
    h = 1e-3
    with torch.no_grad():
        numeric = (ucb(x + h * direction) - ucb(x - h * direction)).item() / (2 * h)
    assert (x.grad * direction).sum().item() == pytest.approx(numeric, rel=2e-2, abs=1e-3)


def test_adam_maximize_climbs_and_stays_in_the_box():
    target = torch.tensor([0.3, 1.4], dtype=torch.float64)  # the second coordinate's optimum is outside

    def concave(x):
        return -(x - target).pow(2).sum(-1)

    raw = torch.rand(20, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x, value = adam_maximize(concave, raw, restarts=5, lr=0.05, steps=50, batch_size=3)
    assert x.tolist() == pytest.approx([0.3, 1.0], abs=2e-2)
    assert value.item() == pytest.approx(concave(x.unsqueeze(0)).item())
    assert value >= concave(raw).max()


def test_short_run_has_a_positive_spread_and_no_lengthscale(tiny_checkpoint):
    """TabICLv2's predictive spread is positive, its acquisition timed, and it has no lengthscale
    (every column set, batch independence: tests/methods/test_contract.py)."""
    settings = tiny_settings(tiny_checkpoint)
    result = engine.run("hartmann3", "tabicl", [0, 1], budget=2, n_init=5, settings=settings, device="cpu")
    for table in result.tables.values():
        rounds = table[table.phase == "bo"]
        assert (rounds.sigma > 0).all() and (rounds.acq_seconds > 0).all()
        assert rounds.lengthscale_0.isna().all()


def test_the_ensemble_s_seed_is_the_run_s(tiny_checkpoint):
    """Levy 5-D: 5 feature shuffles x 2 normalisations > 8 views, so the ensemble's seed matters:
    two seeds of one batch query different points."""
    settings = tiny_settings(tiny_checkpoint)
    x_columns = [f"x_{i}" for i in range(5)]
    both = engine.run("levy5", "tabicl", [0, 1], budget=2, n_init=5, settings=settings, device="cpu")
    assert not np.array_equal(both.tables[0][x_columns], both.tables[1][x_columns])
