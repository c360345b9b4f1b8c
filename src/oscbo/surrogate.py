"""The GP surrogate shared by every GP method (SPEC section 2), for S seeds in lockstep.

Zero mean, output scale 1, fixed observation noise ``sigma^2``, Matérn kernel with one
lengthscale (isotropic) or one per dimension (ARD); only lengthscales are adapted.

Seeds run in lockstep, but every computation that reduces over numbers (sums, means, matrix
products, Cholesky factors, triangular solves and their gradients) runs one seed at a time:
torch's CPU kernels round such reductions differently for different batch shapes (seen with
torch 2.13: a row mean of an ``S x n`` tensor, a batched triangular solve), and OSCBO's
trajectories amplify a difference of 1e-16 to 1e-3 within a few rounds. Functions here take
one seed's 2-D tensors; :func:`per_seed` maps them over the seeds. Elementwise work (Adam's
updates) is batched. A seed's numbers are thereby bitwise independent of its batch.

The closed forms are those of the paper: posterior mean and variance (eqs. 1-2), and the
sequential decomposition of Proposition B.1: with ``K + sigma^2 I = L L^T`` and ``z = L^-1 y``,

    z_j      = (y_j - mu_{j-1}(x_j)) / sqrt(sigma^2 + s2_{j-1}(x_j))      (S13)
    L_jj^2   = sigma^2 + s2_{j-1}(x_j)

so every per-round loss of OSCBO and the marginal likelihood are sums over rows of
functions of ``(L_jj, z_j)``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from torch import Tensor

#: Jitter escalation as in gpytorch's psd_safe_cholesky (float64 starts at 1e-8, x10 a try),
#: but applied to the failing batch entries only, so other seeds are untouched.
JITTER_START = 1e-8
JITTER_TRIES = 8
#: Every escalation in this process, refits included ("cholesky"); a record's column counts only
#: the escalations of the posterior that chose x_t, per seed; the engine puts its batch's total in
#: the sidecar.
JITTER_ESCALATIONS: Counter[str] = Counter()


def per_seed(function: Callable[..., Tensor], *batched: Tensor) -> Tensor:
    """``stack([function(a[i], b[i], ...) for each seed i])``: one seed at a time (see above)."""
    return torch.stack([function(*parts) for parts in zip(*batched)])


def matern_covariance(x1: Tensor, x2: Tensor, lengthscale: Tensor, nu: float) -> Tensor:
    """Matérn covariance with unit output scale (paper D.3).

    Args:
        x1: ``batch x n x d`` inputs.
        x2: ``batch x m x d`` inputs.
        lengthscale: ``batch x 1 x k`` with ``k = 1`` (isotropic) or ``k = d`` (ARD).
        nu: smoothness, 0.5, 1.5 or 2.5.

    Returns:
        ``batch x n x m`` covariance matrix (batch dimensions broadcast).
    """
    diff = (x1 / lengthscale).unsqueeze(-2) - (x2 / lengthscale).unsqueeze(-3)
    # The floor keeps the gradient of sqrt finite at r = 0 (it is multiplied by a zero there).
    r = diff.pow(2).sum(-1).clamp_min(1e-36).sqrt()
    if nu == 0.5:
        return torch.exp(-r)
    if nu == 1.5:
        scaled = math.sqrt(3) * r
        return (1 + scaled) * torch.exp(-scaled)
    if nu == 2.5:
        scaled = math.sqrt(5) * r
        return (1 + scaled + scaled.pow(2) / 3) * torch.exp(-scaled)
    raise ValueError(f"nu must be 0.5, 1.5 or 2.5, got {nu}")


def robust_cholesky(matrix: Tensor) -> tuple[Tensor, int]:
    """Cholesky factor of one ``n x n`` matrix, with jitter escalation as gpytorch does.

    Returns:
        The lower factor and the number of jitter escalations it needed.

    Raises:
        ValueError: if the matrix has non-finite entries or stays indefinite after
            ``JITTER_TRIES`` escalations.
    """
    if not torch.isfinite(matrix).all():
        raise ValueError("covariance matrix has non-finite entries (NaN or inf in the data?)")
    factor, info = torch.linalg.cholesky_ex(matrix)
    if info == 0:
        return factor, 0
    eye = torch.eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)
    jitter = JITTER_START
    for events in range(1, JITTER_TRIES + 1):
        factor, info = torch.linalg.cholesky_ex(matrix + jitter * eye)
        if info == 0:
            JITTER_ESCALATIONS["cholesky"] += events
            return factor, events
        jitter *= 10
    raise ValueError(f"covariance matrix is not positive definite even with jitter {jitter / 10:g}")


@dataclass(frozen=True)
class Whitened:
    """One seed's Cholesky factor of ``K + sigma^2 I`` and whitened targets ``z = L^-1 y``.

    Attributes:
        factor: ``n x n`` lower Cholesky factor ``L``.
        z: ``n`` whitened residuals, eq. (S13).
        jitter_events: jitter escalations used.
    """

    factor: Tensor
    z: Tensor
    jitter_events: int

    @property
    def predictive_variance(self) -> Tensor:
        """``n``: L_jj^2 = sigma^2 + s2_{j-1}(x_j)."""
        return self.factor.diagonal().pow(2)


def whiten(X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> Whitened:
    """Factor ``K_theta(X, X) + sigma^2 I`` and whiten ``y`` (differentiable in ``lengthscale``).

    Args:
        X: ``n x d`` inputs in query order (one seed).
        y: ``n`` standardised targets.
        lengthscale: ``k`` (1 or d).
    """
    K = matern_covariance(X, X, lengthscale.unsqueeze(0), nu)
    factor, events = robust_cholesky(K + noise_var * torch.eye(len(X), dtype=X.dtype, device=X.device))
    z = torch.linalg.solve_triangular(factor, y.unsqueeze(-1), upper=False).squeeze(-1)
    return Whitened(factor=factor, z=z, jitter_events=events)


def negative_mll(X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> Tensor:
    """``-log p(y | X, theta)`` of one seed: sum_j [z_j^2 / 2 + log L_jj] + n/2 log(2 pi)."""
    w = whiten(X, y, lengthscale, nu, noise_var)
    return 0.5 * w.z.pow(2).sum() + w.factor.diagonal().log().sum() + 0.5 * len(X) * math.log(2 * math.pi)


def minimize_lengthscale(
    objective: Callable[[Tensor], Tensor],
    start: Tensor,
    bounds: tuple[float, float],
    lr: float,
    steps: int,
) -> Tensor:
    """Projected Adam on log-lengthscale (SPEC 2: lr 0.01, 50 steps, warm start, onto Theta).

    Adam is elementwise, so minimising the sum over seeds of a per-seed objective is the
    same as minimising each seed's objective on its own.

    Args:
        objective: maps an ``S x k`` lengthscale to ``S`` objective values.
        start: ``S x k`` warm start.
        bounds: ``(low, high)`` of Theta, per dimension.

    Returns:
        ``S x k`` lengthscale after ``steps`` steps, inside ``bounds``.
    """
    low, high = math.log(bounds[0]), math.log(bounds[1])
    log_theta = start.detach().log().clamp(low, high).clone().requires_grad_(True)
    optimizer = torch.optim.Adam([log_theta], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        objective(log_theta.exp()).sum().backward()
        optimizer.step()
        with torch.no_grad():
            log_theta.clamp_(low, high)
    return log_theta.detach().exp().clamp(*bounds)  # exp(log b) can round past b


def fit_initial_lengthscale(
    X: Tensor, y: Tensor, nu: float, noise_var: float, ard: bool, bounds: tuple[float, float]
) -> Tensor:
    """theta_0: BoTorch's ``fit_gpytorch_mll`` on each seed's initial design, clipped to Theta.

    One seed at a time: BoTorch's scipy fit optimises the sum over a batch jointly, which
    would make one seed's theta_0 depend on the others. The model is a ``SingleTaskGP``
    with the surrogate's observation model (zero mean, no output scale, fixed noise, no
    outcome transform: y is already standardised), and GPyTorch's default lengthscale
    parametrisation (softplus, initial value 0.693).

    Args:
        X: ``S x n x d``; y: ``S x n``.

    Returns:
        ``S x k`` lengthscales.
    """
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.kernels import MaternKernel
    from gpytorch.means import ZeroMean
    from gpytorch.mlls import ExactMarginalLogLikelihood

    d = X.shape[-1]
    fitted = []
    for Xs, ys in zip(X, y):
        kernel = MaternKernel(nu=nu, ard_num_dims=d if ard else None).to(Xs)
        model = SingleTaskGP(
            Xs,
            ys.unsqueeze(-1),
            train_Yvar=torch.full_like(ys.unsqueeze(-1), noise_var),
            covar_module=kernel,
            mean_module=ZeroMean(),
            outcome_transform=None,
        )
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        fitted.append(kernel.lengthscale.detach().reshape(-1))
    return torch.stack(fitted).clamp(*bounds)


class GaussianProcess(Model):
    """Exact GP posteriors of ``S`` seeds, usable by BoTorch acquisition functions.

    Its batch shape is ``S``; :meth:`seed` gives one seed's posterior (batch shape 1), which
    is what the acquisition optimiser works on.

    Args:
        X: ``S x n x d`` training inputs in [0, 1]^d.
        y: ``S x n`` standardised targets.
        lengthscale: ``S x k``.
        nu, noise_var: kernel smoothness and fixed noise variance.
    """

    num_outputs = 1

    def __init__(self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> None:
        whitened = [whiten(Xs, ys, ls, nu, noise_var) for Xs, ys, ls in zip(X, y, lengthscale)]
        self._set(X, y, lengthscale, nu, noise_var, whitened)

    def _set(
        self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float, whitened: list[Whitened]
    ) -> None:
        Model.__init__(self)
        self.train_X = X
        self.train_y = y
        self.lengthscale = lengthscale
        self.nu = nu
        self.noise_var = noise_var
        self.whitened = whitened
        self.weights = [  # K^-1 y = L^-T z
            torch.linalg.solve_triangular(w.factor.mT, w.z.unsqueeze(-1), upper=True) for w in whitened
        ]

    def seed(self, index: int) -> GaussianProcess:
        """The posterior of one seed (batch shape 1), sharing this one's factorisation."""
        part = slice(index, index + 1)
        view = GaussianProcess.__new__(GaussianProcess)
        view._set(
            self.train_X[part], self.train_y[part], self.lengthscale[part], self.nu, self.noise_var, self.whitened[part]
        )
        return view

    @property
    def batch_shape(self) -> torch.Size:
        return self.train_X.shape[:-2]

    @property
    def jitter_events(self) -> Tensor:
        """``S`` Cholesky jitter escalations."""
        return torch.tensor([w.jitter_events for w in self.whitened])

    def predict(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Latent posterior mean and variance, eqs. (1)-(2).

        Args:
            x: ``... x S x m x d``; for a one-seed posterior also ``... x m x d``.

        Returns:
            mean and variance, each ``... x S x m`` (``... x m`` for the second form).
        """
        seeds = len(self.train_X)
        if seeds == 1 and (x.dim() < 3 or x.shape[-3] != 1):
            return self._predict_seed(0, x)  # every batch entry belongs to the one seed
        x = x.expand(*torch.broadcast_shapes(x.shape[:-2], self.batch_shape), *x.shape[-2:])
        parts = [self._predict_seed(i, x[..., i, :, :]) for i in range(seeds)]
        return torch.stack([p[0] for p in parts], dim=-2), torch.stack([p[1] for p in parts], dim=-2)

    def _predict_seed(self, i: int, x: Tensor) -> tuple[Tensor, Tensor]:
        """Mean and variance of seed ``i`` at ``... x m x d``."""
        cross = matern_covariance(x, self.train_X[i], self.lengthscale[i].unsqueeze(0), self.nu)  # ... x m x n
        mean = (cross @ self.weights[i]).squeeze(-1)
        v = torch.linalg.solve_triangular(self.whitened[i].factor, cross.mT, upper=False)
        return mean, (1.0 - v.pow(2).sum(-2)).clamp_min(1e-12)

    def posterior(self, X: Tensor, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs):
        """BoTorch's posterior API for ``q = 1`` candidates (sequential BO only)."""
        if X.shape[-2] != 1:
            raise NotImplementedError("GaussianProcess.posterior supports q = 1 candidates only")
        mean, variance = self.predict(X)
        if observation_noise:
            variance = variance + self.noise_var
        distribution = MultivariateNormal(mean, variance.unsqueeze(-1))
        posterior = GPyTorchPosterior(distribution)
        return posterior_transform(posterior) if posterior_transform is not None else posterior
