"""The batched GP surrogate against closed-form numpy, GPyTorch and BoTorch."""

import math

import numpy as np
import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models import SingleTaskGP
from botorch_reference import BoTorchGP, WidthUCB
from gpytorch.kernels import MaternKernel
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood

from oscbo.model import rounding
from oscbo.model.gp import GaussianProcess, adam_step, fit_initial_lengthscale, minimize_lengthscale
from oscbo.model.kernel import Distances, matern_covariance
from oscbo.model.linalg import negative_mll, posterior_variance, robust_cholesky, whiten
from oscbo.model.rounding import matvec

NOISE = 0.01


def random_data(S=3, n=12, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(S, n, d, generator=g, dtype=torch.float64)
    y = torch.sin(6 * X).sum(-1) + 0.1 * torch.randn(S, n, generator=g, dtype=torch.float64)
    y = (y - y.mean(-1, keepdim=True)) / y.std(-1, keepdim=True)
    return X, y


def numpy_matern52(a, b, ls):
    r = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2 / ls**2).sum(-1))
    return (1 + math.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-math.sqrt(5) * r)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("ard", [False, True])
def test_matern_matches_gpytorch(nu, ard):
    X, _ = random_data()
    S, _, d = X.shape
    k = d if ard else 1
    lengthscale = torch.linspace(0.1, 0.9, S * k, dtype=torch.float64).reshape(S, 1, k)
    kernel = MaternKernel(nu=nu, ard_num_dims=d if ard else None, batch_shape=torch.Size([S])).double()
    kernel.lengthscale = lengthscale
    Z = X[:, :5] + 0.05
    expected = kernel(Z, X).to_dense()
    assert torch.allclose(matern_covariance(Z, X, lengthscale, nu), expected, atol=1e-10)


def test_posterior_matches_closed_form_numpy():
    X, y = random_data()
    lengthscale = torch.tensor([[0.2], [0.5], [1.3]], dtype=torch.float64)
    model = GaussianProcess(X, y, lengthscale, nu=2.5, noise_var=NOISE)
    Z = torch.rand(3, 7, X.shape[-1], generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    mean, variance = model.predict(Z)
    for s in range(3):
        Xs, ys, Zs, ls = X[s].numpy(), y[s].numpy(), Z[s].numpy(), lengthscale[s, 0].item()
        K = numpy_matern52(Xs, Xs, ls) + NOISE * np.eye(len(Xs))
        k = numpy_matern52(Zs, Xs, ls)
        expected_mean = k @ np.linalg.solve(K, ys)  # eq. (1)
        expected_var = 1.0 - np.einsum("ij,ji->i", k, np.linalg.solve(K, k.T))  # eq. (2)
        np.testing.assert_allclose(mean[s].numpy(), expected_mean, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(variance[s].numpy(), expected_var, rtol=1e-8, atol=1e-10)


def test_negative_mll_matches_gpytorch():
    X, y = random_data()
    lengthscale = torch.tensor([[0.3], [0.6], [1.1]], dtype=torch.float64)
    kernel = MaternKernel(nu=2.5, batch_shape=torch.Size([3])).double()
    kernel.lengthscale = lengthscale.unsqueeze(-1)
    model = SingleTaskGP(
        X,
        y.unsqueeze(-1),
        train_Yvar=torch.full_like(y.unsqueeze(-1), NOISE),
        covar_module=kernel,
        mean_module=ZeroMean(),
        outcome_transform=None,
    )
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    model.train()
    expected = -mll(model(X), y) * X.shape[-2]  # GPyTorch divides by n
    ours = negative_mll(X, y, lengthscale, 2.5, NOISE)
    assert torch.allclose(ours, expected.detach(), rtol=1e-10)


def test_whitened_residuals_are_sequential_predictions():
    """z_j = (y_j - mu_{j-1}(x_j)) / sqrt(sigma^2 + s2_{j-1}(x_j)) (eq. S13)."""
    X, y = random_data(S=1, n=8)
    lengthscale = torch.tensor([[0.4]], dtype=torch.float64)
    whitened = whiten(X[0], y[0], lengthscale[0], 2.5, NOISE)
    for j in range(1, 8):
        model = GaussianProcess(X[:, :j], y[:, :j], lengthscale, 2.5, NOISE)
        mean, variance = model.predict(X[:, j : j + 1])
        expected = (y[0, j] - mean[0, 0]) / (variance[0, 0] + NOISE).sqrt()
        assert torch.allclose(whitened.z[j], expected, atol=1e-10)
        assert torch.allclose(whitened.predictive_variance[j], variance[0, 0] + NOISE, atol=1e-10)


def test_robust_cholesky_jitters_only_when_needed():
    good = torch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
    factor, events = robust_cholesky(good)
    assert events == 0 and torch.equal(factor, torch.linalg.cholesky(good))
    indefinite = torch.ones(2, 2, dtype=torch.float64) - 1e-3 * torch.eye(2, dtype=torch.float64)
    factor, events = robust_cholesky(indefinite)
    assert events > 0 and torch.isfinite(factor).all()
    with pytest.raises(ValueError, match="non-finite"):
        robust_cholesky(torch.full((2, 2), float("nan"), dtype=torch.float64))


def test_a_seed_gets_the_numbers_of_a_batch_of_one():
    """Each seed's numbers, and their gradients, are bitwise those of a batch of one (needs
    MKL's strict mode, see oscbo.reproducibility)."""
    for n, k in ((13, 1), (37, 1), (64, 1), (37, 6)):
        X, y = random_data(S=5, n=n, d=6, seed=n)
        lengthscale = torch.linspace(0.2, 1.0, 5 * k, dtype=torch.float64).reshape(5, k).requires_grad_()
        alone = lengthscale[3:4].detach().clone().requires_grad_()
        batched, single = negative_mll(X, y, lengthscale, 2.5, NOISE), negative_mll(X[3:4], y[3:4], alone, 2.5, NOISE)
        batched.sum().backward()
        single.sum().backward()
        assert torch.equal(batched[3], single[0]) and torch.equal(lengthscale.grad[3], alone.grad[0])
        Z = torch.rand(5, 20, 6, dtype=torch.float64)
        full = GaussianProcess(X, y, lengthscale.detach(), 2.5, NOISE).predict(Z)
        one = GaussianProcess(X[3:4], y[3:4], alone.detach(), 2.5, NOISE).predict(Z[3:4])
        assert all(torch.equal(a[3], b[0]) for a, b in zip(full, one))


def test_matvec_is_the_matrix_vector_product():
    matrix, vector = torch.randn(4, 3, 7, dtype=torch.float64), torch.randn(4, 7, dtype=torch.float64)
    assert torch.allclose(matvec(matrix, vector), (matrix @ vector.unsqueeze(-1)).squeeze(-1), atol=1e-14)


def test_seed_view_equals_single_seed_model():
    X, y = random_data()
    lengthscale = torch.tensor([[0.2], [0.5], [1.3]], dtype=torch.float64)
    batched = GaussianProcess(X, y, lengthscale, 2.5, NOISE)
    alone = GaussianProcess(X[1:2], y[1:2], lengthscale[1:2], 2.5, NOISE)
    Z = torch.rand(1, 5, X.shape[-1], dtype=torch.float64)
    for a, b in zip(batched.seed(1).predict(Z), alone.predict(Z)):
        assert torch.equal(a, b)


def test_width_ucb_equals_botorch_ucb():
    X, y = random_data()
    model = GaussianProcess(X, y, torch.full((3, 1), 0.4, dtype=torch.float64), 2.5, NOISE)
    Z = torch.rand(6, 3, 1, X.shape[-1], dtype=torch.float64)
    ours = WidthUCB(model, torch.full((3,), math.sqrt(2.0), dtype=torch.float64))(Z)
    theirs = UpperConfidenceBound(BoTorchGP(model), beta=2.0)(Z)
    assert ours.shape == (6, 3)
    assert torch.allclose(ours, theirs, atol=1e-12)


def test_initial_lengthscale_is_botorch_fit_per_seed_and_clipped():
    X, y = random_data(S=2, n=10, d=3)
    bounds = (1e-2, 1e1)
    batched = fit_initial_lengthscale(X, y, 2.5, NOISE, ard=False, bounds=bounds)
    alone = fit_initial_lengthscale(X[1:], y[1:], 2.5, NOISE, ard=False, bounds=bounds)
    assert batched.shape == (2, 1)
    assert torch.equal(batched[1], alone[0])
    # the fit is a maximum of the marginal likelihood: nudging theta does not improve it
    for factor in (0.9, 1.1):
        nudged = negative_mll(X, y, batched * factor, 2.5, NOISE)
        assert (negative_mll(X, y, batched, 2.5, NOISE) <= nudged + 1e-6).all()
    ard = fit_initial_lengthscale(X, y, 2.5, NOISE, ard=True, bounds=(0.05, 0.2))
    assert ard.shape == (2, 3) and (ard >= 0.05).all() and (ard <= 0.2).all()


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("ard", [False, True])
def test_whitening_gradient_equals_autograd_through_the_factorisation(nu, ard):
    """The hand-written backward of whiten against autograd through kernel, Cholesky and solve,
    for an objective with weights on every row of (L_jj, z_j), as OSCBO's."""
    X, y = random_data(S=3, n=15, d=4, seed=2)
    k = 4 if ard else 1
    lengthscale = torch.linspace(0.2, 0.9, 3 * k, dtype=torch.float64).reshape(3, k)
    weights = torch.rand(2, 3, 15, generator=torch.Generator().manual_seed(3), dtype=torch.float64)

    def objective(diagonal, z):
        return (weights[0] * diagonal.pow(2).log() + weights[1] * z.pow(2)).sum(-1)

    ours = lengthscale.clone().requires_grad_()
    w = whiten(X, y, ours, nu, NOISE)
    objective(w.diagonal, w.z).sum().backward()

    reference = lengthscale.clone().requires_grad_()
    K = matern_covariance(X, X, reference.unsqueeze(-2), nu) + NOISE * torch.eye(15, dtype=torch.float64)
    factor = torch.linalg.cholesky(K)
    z = torch.linalg.solve_triangular(factor, y.unsqueeze(-1), upper=False).squeeze(-1)
    objective(factor.diagonal(dim1=-2, dim2=-1), z).sum().backward()

    assert torch.allclose(w.factor, factor, atol=1e-12) and torch.allclose(w.z, z, atol=1e-10)
    assert torch.allclose(ours.grad, reference.grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("nu", [0.5, 2.5])
@pytest.mark.parametrize("ard", [False, True])
def test_posterior_variance_gradient_equals_autograd(nu, ard):
    """posterior_variance's hand-written backward against autograd through the GP's predict,
    batched over restarts as SCGP uses it (S x R lengthscales, one kernel each)."""
    X, _ = random_data(S=2, n=12, d=3, seed=4)
    Z = torch.rand(2, 5, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    k = 3 if ard else 1
    lengthscale = torch.linspace(0.15, 1.2, 2 * 3 * k, dtype=torch.float64).reshape(2, 3, k)
    weights = torch.rand(2, 3, 5, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    train = Distances(X.unsqueeze(-3), X.unsqueeze(-3))
    cross = Distances(X.unsqueeze(-3), Z.unsqueeze(-3))

    ours = lengthscale.clone().requires_grad_()
    variance = posterior_variance(train, cross, ours, nu, NOISE)
    (weights * variance).sum().backward()

    reference = lengthscale.clone().requires_grad_()
    K = matern_covariance(X.unsqueeze(-3), X.unsqueeze(-3), reference.unsqueeze(-2), nu)
    factor = torch.linalg.cholesky(K + NOISE * torch.eye(12, dtype=torch.float64))
    v = torch.linalg.solve_triangular(
        factor, matern_covariance(X.unsqueeze(-3), Z.unsqueeze(-3), reference.unsqueeze(-2), nu), upper=False
    )
    expected = 1.0 - v.pow(2).sum(-2)
    (weights * expected).sum().backward()

    assert torch.allclose(variance, expected, atol=1e-12)
    assert torch.allclose(ours.grad, reference.grad, rtol=1e-8, atol=1e-10)


def test_the_hand_stepped_adam_is_torch_s_adam_bit_for_bit(monkeypatch: pytest.MonkeyPatch):
    """minimize_lengthscale's Adam against torch.optim.Adam on the same objective: equal after
    every one of 50 steps, several seeds and shapes (the golden records hold it for the methods),
    torch's Adam taking the IEEE square root the engine takes (oscbo.model.rounding)."""
    monkeypatch.setattr(torch.Tensor, "sqrt", rounding.sqrt)
    generator = torch.Generator().manual_seed(0)
    for shape in [(7, 1), (4, 3), (1, 6)]:
        target = torch.rand(shape, dtype=torch.float64, generator=generator)
        start = 2 * torch.rand(shape, dtype=torch.float64, generator=generator)

        def objective(theta, target=target):
            return ((theta.log() - target) ** 2).sum(-1) + torch.sin(3 * theta).sum(-1)

        theirs = start.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([theirs], lr=0.05)
        ours = start.clone().requires_grad_(True)
        first, second = torch.zeros_like(ours), torch.zeros_like(ours)
        for step in range(1, 51):
            optimizer.zero_grad()
            objective(theirs).sum().backward()
            optimizer.step()
            ours.grad = None
            objective(ours).sum().backward()
            with torch.no_grad():
                adam_step(ours, ours.grad, first, second, float(step), 0.05)
            assert torch.equal(ours, theirs), (shape, step)
        assert not torch.equal(ours, start)


def test_minimize_lengthscale_is_projected_torch_adam():
    """The refit as a torch.optim.Adam loop with the projection onto Theta after each step."""
    target = torch.tensor([[0.05], [0.4], [3.0]], dtype=torch.float64)

    def objective(theta):
        return ((theta.log() - target.log()) ** 2).sum(-1)

    start, bounds = torch.full((3, 1), 0.3, dtype=torch.float64), (0.1, 2.0)
    log_theta = start.log().requires_grad_(True)
    optimizer = torch.optim.Adam([log_theta], lr=0.1)
    for _ in range(40):
        optimizer.zero_grad()
        objective(log_theta.exp()).sum().backward()
        optimizer.step()
        with torch.no_grad():
            log_theta.clamp_(math.log(bounds[0]), math.log(bounds[1]))
    expected = log_theta.detach().exp().clamp(*bounds)
    assert torch.equal(minimize_lengthscale(objective, start, bounds, 0.1, 40), expected)
    assert expected[0, 0].item() == pytest.approx(0.1) and expected[2, 0].item() == pytest.approx(2.0)  # both bind
