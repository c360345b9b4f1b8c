"""OSCBO: Proposition B.1, the FTPL oracle, the OMD dual, the play/recovery switch, and the
lambda at which OSCBO reproduces GP-UCB-MLL."""

import math

import numpy as np
import pytest
import torch

from oscbo import run as engine
from oscbo.methods.base import Feedback, Observations
from oscbo.methods.oscbo import (
    OSCBO,
    ftpl_objective,
    switch_threshold,
    violation_budget,
)
from oscbo.model.gp import GaussianProcess, minimize_lengthscale
from oscbo.model.losses import calibration_loss, sharpness_loss
from oscbo.settings import Settings

NOISE = 0.01
BETA = 2.0


def fixed_data(S=2, n=14, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(S, n, d, generator=g, dtype=torch.float64)
    y = torch.cos(5 * X).sum(-1) + 0.2 * torch.randn(S, n, generator=g, dtype=torch.float64)
    return X, (y - y.mean(-1, keepdim=True)) / y.std(-1, keepdim=True)


def s5_matrix_form(X, y, theta, lambdas, p):
    """S5 as printed (with lambda_{j-1}), from log det and L^-1 y, in numpy."""
    from oscbo.model.kernel import matern_covariance

    K = matern_covariance(X, X, torch.tensor([[theta]], dtype=torch.float64), 2.5).numpy()
    K = K + NOISE * np.eye(len(X))
    L = np.linalg.cholesky(K)
    _, logdet = np.linalg.slogdet(K)
    v = np.full(len(X), 1 / math.sqrt(BETA))
    whitened = np.linalg.solve(L, y.numpy())
    return (
        (logdet - len(X) * math.log(NOISE)) / math.log1p(1 / NOISE)
        + lambdas @ np.abs(v * whitened) ** p
        - lambdas.sum()
    )


@pytest.mark.parametrize("p", [1, 2])
def test_proposition_b1(p):
    """Sum over rounds of L^s_j + lambda_{j-1} L^c_j from sequential posteriors equals S5."""
    X, y = fixed_data(S=1)
    X, y = X[0], y[0]
    n = len(y)
    lambdas = np.linspace(0.5, 2.0, n)  # lambda_{j-1} of row j
    theta = 0.35
    sequential = 0.0
    for j in range(n):
        if j == 0:
            mean, variance = torch.zeros(1, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
        else:
            model = GaussianProcess(X[None, :j], y[None, :j], torch.tensor([[theta]], dtype=torch.float64), 2.5, NOISE)
            mean, variance = (v[0] for v in model.predict(X[None, j : j + 1]))
        predictive = variance + NOISE
        sequential += sharpness_loss(predictive, NOISE).item()
        sequential += lambdas[j] * calibration_loss((y[j] - mean) / predictive.sqrt(), BETA, p).item()
    assert s5_matrix_form(X, y, theta, lambdas, p) == pytest.approx(sequential, rel=1e-9)
    # ... and the implementation's objective (eta = 0) is the same number
    settings = Settings(calibration_power=p)
    ours = ftpl_objective(
        torch.tensor([theta], dtype=torch.float64),
        X,
        y,
        torch.ones(n, dtype=torch.float64),
        torch.tensor(lambdas),
        torch.zeros(1, dtype=torch.float64),
        settings,
    )
    assert ours.item() == pytest.approx(sequential, rel=1e-9)


def test_ftpl_perturbation_enters_as_minus_inner_product():
    X, y = fixed_data(S=1)
    theta = torch.tensor([0.3], dtype=torch.float64)
    weights = torch.ones_like(y[0])
    eta = torch.tensor([0.1], dtype=torch.float64)
    plain = ftpl_objective(theta, X[0], y[0], weights, weights, torch.zeros_like(eta), Settings())
    perturbed = ftpl_objective(theta, X[0], y[0], weights, weights, eta, Settings())
    assert torch.allclose(plain - perturbed, (eta * theta).sum())


def test_ftpl_oracle_reaches_the_grid_minimiser():
    """Adam (lr 0.01, 50 steps, on log theta) from a warm start near the minimiser."""
    X, y = fixed_data(S=1, n=20)
    settings = Settings()
    weights = torch.ones_like(y)
    eta = torch.zeros(1, 1, dtype=torch.float64)

    def objective(theta):
        return ftpl_objective(theta, X, y, weights, weights, eta, settings)

    grid = torch.logspace(-2, 1, 2000, dtype=torch.float64).reshape(-1, 1)
    values = torch.stack([objective(t.reshape(1, 1)) for t in grid]).flatten()
    best = grid[values.argmin()].reshape(1, 1)
    assert 0.011 < best.item() < 9.9  # an interior minimum for this data
    for start in (best * 1.3, best / 1.3):
        theta = minimize_lengthscale(
            objective, start, settings.lengthscale_bounds, settings.refit_lr, settings.refit_steps
        )
        assert theta.item() == pytest.approx(best.item(), rel=0.02)
        # a (g, h)-approximate oracle (S6): Adam at a fixed lr 0.01 settles within ~1 % in theta
        assert objective(theta).item() <= values.min().item() + 1e-3 * abs(values.min().item())


def test_oracle_stays_in_theta():
    X, y = fixed_data(S=1)
    settings = Settings(lengthscale_bounds=(0.2, 0.25))
    ones, eta = torch.ones_like(y), torch.zeros(1, 1, dtype=torch.float64)
    theta = minimize_lengthscale(
        lambda t: ftpl_objective(t, X, y, ones, ones, eta, settings),
        torch.tensor([[5.0]], dtype=torch.float64),
        settings.lengthscale_bounds,
        0.5,
        50,
    )
    assert 0.2 - 1e-12 <= theta.item() <= 0.25 + 1e-12


def started_oscbo(settings, budget=100, seeds=(0, 1)):
    X, y = fixed_data(S=len(seeds), n=10)
    method = OSCBO(settings, budget, list(seeds))
    method.start(Observations(X, y))
    return method, X, y


def test_omd_dual_update_and_caps():
    settings = Settings(omega=0.5)
    method, X, y = started_oscbo(settings)
    rho = settings.rho_tilde
    assert rho == pytest.approx(max(150**-0.25, 0.25)) and 1 / rho == pytest.approx(3.5, rel=1e-3)
    data = Observations(torch.cat([X, X[:, :1] + 0.01], 1), torch.cat([y, y[:, :1]], 1))
    # raw L^c of 5 is clipped to 1 in the dual step and in V
    method.observe(
        1, data, Feedback(torch.zeros(2, dtype=torch.float64), torch.tensor([5.0, -0.4], dtype=torch.float64))
    )
    assert torch.allclose(method.lam, torch.tensor([math.exp(0.5), math.exp(-0.2)], dtype=torch.float64))
    assert torch.allclose(method.violation, torch.tensor([1.0, -0.4], dtype=torch.float64))
    assert torch.allclose(method.row_lambda[:, -1], torch.ones(2, dtype=torch.float64))  # lambda_0 weights row 1
    for t in range(2, 6):  # keeps growing until the play-phase cap 1/rho~
        data = Observations(torch.cat([data.X, data.X[:, :1] + 0.02 * t], 1), torch.cat([data.y, data.y[:, :1]], 1))
        method.observe(
            t, data, Feedback(torch.zeros(2, dtype=torch.float64), torch.tensor([1.0, -1.0], dtype=torch.float64))
        )
    assert method.lam[0].item() == 1 / rho  # exp(0.5 + 4 x 0.5) > 3.5: capped
    assert method.lam[1].item() == pytest.approx(math.exp(-0.2 - 4 * 0.5))


@pytest.mark.parametrize(("omega", "frozen"), [(0.001, True), (0.01, False)])
def test_lambda_nearly_frozen_with_paper_omega(omega, frozen):
    """The protocol's claim, by OSCBO's own dual step: at omega = 0.001, 100 rounds of the largest
    violations there are (L^c = +-5, clipped to +-1) keep lambda within lambda_0 e^(+-0.1); at
    omega = 0.01 they do not."""
    method, X, y = started_oscbo(Settings(omega=omega, refit_steps=1))
    for t in range(1, 101):
        X, y = torch.cat([X, X[:, :1] + 0.001 * t], 1), torch.cat([y, y[:, :1]], 1)
        method.observe(t, Observations(X, y), Feedback(torch.zeros(2).double(), torch.tensor([5.0, -5.0]).double()))
    low, high = (method.settings.lambda0 * math.exp(sign * 0.1) for sign in (-1, 1))
    within = bool(low * (1 - 1e-12) <= method.lam.min() and method.lam.max() <= high * (1 + 1e-12))
    assert within == frozen
    if frozen:
        assert method.lam.tolist() == pytest.approx([high, low], rel=1e-12)  # the bound is reached, not loose


def test_switch_threshold_cannot_fire_with_paper_constants():
    settings = Settings()
    thresholds = [switch_threshold(t, 100, settings) for t in range(1, 101)]
    assert min(thresholds) > 300 and all(th > t for t, th in zip(range(1, 101), thresholds))
    eta = 0.1 / 3
    expected_m = (
        2 / settings.rho_tilde * 10
        + (2 + 3 / settings.rho_tilde) * math.sqrt(8 * math.log(18 / eta))
        + (1 + 2 / settings.rho_tilde) * 10
        + 10 / settings.rho_tilde
    )
    assert violation_budget(1, 100, settings) == pytest.approx(expected_m)


def test_forced_switch_to_recovery_mid_run():
    settings = Settings(violation_budget=0.0)  # threshold (T - t) rho~ - 1
    method, X, y = started_oscbo(settings, budget=10)
    theta_before = method.theta.clone()
    method.violation = torch.tensor([0.0, 5.0], dtype=torch.float64)  # only seed 1 is over
    threshold = switch_threshold(3, 10, settings)
    assert 0.0 < threshold < 5.0
    theta = method.lengthscale(3, Observations(X, y))
    assert method.recovery.tolist() == [False, True]
    assert torch.equal(theta, theta_before)  # theta keeps its last value
    assert method.lam[1].item() == 1.0 and method.cap[1].item() == 1.0
    assert method.cap[0].item() == pytest.approx(1 / settings.rho_tilde)
    assert method.first_row.tolist() == [0, 10]
    assert method.state()["rm_phase"] == ["play", "recovery"]
    # one way: V falling back below the threshold does not switch back
    method.violation = torch.tensor([0.0, -5.0], dtype=torch.float64)
    method.lengthscale(4, Observations(X, y))
    assert method.recovery.tolist() == [False, True]
    # in recovery, lambda lives on [0, 1]
    data = Observations(torch.cat([X, X[:, :1] + 0.01], 1), torch.cat([y, y[:, :1]], 1))
    method.observe(4, data, Feedback(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
    assert method.lam[1].item() == 1.0


def test_recovery_objective_drops_play_rows():
    """After the switch the FTPL objective holds only the recovery rows' lambda L^c."""
    settings = Settings(violation_budget=-1e6, sigma_eta=0.0)  # switch at round 1
    method, X, y = started_oscbo(settings, budget=5, seeds=(0,))
    method.lengthscale(1, Observations(X, y))
    assert method.recovery.all() and method.first_row.item() == 10
    data = Observations(torch.cat([X, X[:, :1] * 0.5], 1), torch.cat([y, y[:, :1] + 1.0], 1))
    start = method.theta.clone()
    method.observe(1, data, Feedback(torch.zeros(1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)))
    sharp = torch.zeros(1, data.n, dtype=torch.float64)
    calib = torch.zeros(1, data.n, dtype=torch.float64)
    calib[0, -1] = 1.0  # the one recovery row, weighted by lambda = 1
    eta = torch.zeros(1, 1, dtype=torch.float64)
    expected = minimize_lengthscale(
        lambda t: ftpl_objective(t, data.X, data.standardized(), sharp, calib, eta, settings),
        start,
        settings.lengthscale_bounds,
        settings.refit_lr,
        settings.refit_steps,
    )
    assert torch.allclose(method.theta, expected)


def test_forced_switch_in_a_run_records_recovery():
    result = engine.run("hartmann3", "oscbo", [0], budget=4, n_init=6, settings=Settings(violation_budget=-1e6))
    bo = result.tables[0].query("phase == 'bo'")
    assert (bo["rm_phase"] == "recovery").all()
    assert bo["lambda"].iloc[0] == 1.0 and (bo["lambda"] <= 1.0).all()
    reference = engine.run("hartmann3", "gp-ucb-mll", [0], budget=1, n_init=6).tables[0]
    # the switch round plays theta_0, the MLL fit on the initial design
    assert bo["lengthscale_0"].iloc[0] == pytest.approx(reference["lengthscale_0"].iloc[-1])


def oscbo_beside_gp_ucb_mll(lambda0):
    """OSCBO (p = 2, lambda frozen at ``lambda0``, no perturbation) and GP-UCB-MLL on the same
    tasks, seeds and initial designs: their records by seed."""
    frozen = Settings(lambda0=lambda0, omega=0.0, sigma_eta=0.0)
    oscbo = engine.run("hartmann3", "oscbo", [0, 1], budget=8, n_init=10, settings=frozen)
    mll = engine.run("hartmann3", "gp-ucb-mll", [0, 1], budget=8, n_init=10, settings=frozen)
    return {seed: (oscbo.tables[seed], mll.tables[seed]) for seed in (0, 1)}


def test_mll_equivalent_lambda_reproduces_gp_ucb_mll():
    """With p = 2, lambda constant at beta / log(1 + sigma^-2) and no perturbation, S5 is
    proportional to -2 x MLL, so OSCBO plays GP-UCB-MLL's lengthscales and queries."""
    settings = Settings()
    assert settings.mll_equivalent_lambda == pytest.approx(0.4334, abs=1e-4)
    for a, b in oscbo_beside_gp_ucb_mll(settings.mll_equivalent_lambda).values():
        # S5 = c x (-MLL) + const with c = 2 / log(1 + sigma^-2), so the two objectives share
        # their argmin, and more: Adam's step m / (sqrt(v) + eps) does not change when every
        # gradient is scaled by c, except through eps = 1e-8, so both oracles take the same 50
        # steps from the same warm start, up to eps / sqrt(v) and rounding (the two objectives
        # sum the same terms in another order). Measured: 2e-9 relative over 8 rounds. 1e-5
        # leaves room for rounding to grow over rounds, and stays far below both the Adam
        # oracle's own accuracy (about 1 %, test_ftpl_oracle_reaches_the_grid_minimiser) and the
        # 20-50 % by which lambda_0 = 1 moves the lengthscale (the next test).
        assert np.allclose(a["lengthscale_0"], b["lengthscale_0"], rtol=1e-5, equal_nan=True)
        assert np.allclose(a[["x_0", "x_1", "x_2"]], b[["x_0", "x_1", "x_2"]], atol=1e-5)


def test_default_lambda0_does_not_reproduce_gp_ucb_mll():
    """lambda_0 = 1 (the default; the paper gives none) weighs calibration 1 / 0.433 = 2.3 times
    more than the MLL does: the same data give other lengthscales, so OSCBO at its default is
    not GP-UCB-MLL in disguise. Everything else is as in the test above."""
    for a, b in oscbo_beside_gp_ucb_mll(1.0).values():
        bo_a, bo_b = (table[table["phase"] == "bo"] for table in (a, b))
        # Round 1 plays theta_0, the MLL fit of the shared initial design, in both.
        assert bo_a["lengthscale_0"].iloc[0] == bo_b["lengthscale_0"].iloc[0]
        relative = (bo_a["lengthscale_0"] / bo_b["lengthscale_0"] - 1).abs()
        assert relative.max() > 0.05  # measured 0.20 (seed 1) and 0.48 (seed 0)
