"""The GP surrogate shared by every GP method (paper 7 and D, Table S1), for S seeds in lockstep.

Zero mean, output scale 1, fixed observation noise ``sigma^2``, Matérn kernel with one
lengthscale (isotropic) or one per dimension (ARD); only lengthscales are adapted.

Seeds run in lockstep as one batched tensor program: every function takes ``S x n x d``
inputs. A seed's numbers are bitwise those it gets in a batch of one, which needs two
things (see :mod:`oscbo.reproducibility`): MKL in its strict reproducible mode, so that a
matrix's BLAS/LAPACK result does not depend on where it lies in memory; and no torch
matrix-vector products (:func:`matvec` uses a row sum instead), whose kernel differs
between a batch of one and a larger batch. Seed-wise reductions are sums over the last
dimension, which torch evaluates row by row.

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


def matvec(matrix: Tensor, vector: Tensor) -> Tensor:
    """``matrix @ vector`` for ``... x m x n`` and ``... x n``, as a product and a row sum.

    torch's matrix-vector product takes another kernel for a batch of one than for a larger
    batch, and the two round differently; a row sum does not.
    """
    return (matrix * vector.unsqueeze(-2)).sum(-1)


class Distances:
    """Pairwise differences of two point sets, computed once for many lengthscales.

    A round's lengthscale fit evaluates the kernel on the same inputs 50 times; the
    ``d x n x m`` squared differences are its costliest part and do not depend on theta.

    Args:
        x1: ``batch x n x d`` points; x2: ``batch x m x d`` points (batch dimensions broadcast).
    """

    def __init__(self, x1: Tensor, x2: Tensor) -> None:
        # batch x d x n x m: each dimension's n x m block contiguous, for ARD's weighted sum
        self.squares = (x1.mT.unsqueeze(-1) - x2.mT.unsqueeze(-2)).pow(2)
        self.squared = self.squares.sum(-3)  # batch x n x m
        # The floor keeps the gradient of sqrt finite at r = 0 (it is multiplied by a zero there).
        self.euclidean = self.squared.clamp_min(1e-36).sqrt()

    def scaled(self, lengthscale: Tensor) -> Tensor:
        """``batch x n x m`` distances ``r = sqrt(sum_k (x_k - x'_k)^2 / theta_k^2)``.

        Args:
            lengthscale: ``batch x 1 x k`` with ``k = 1`` (isotropic) or ``k = d`` (ARD).
        """
        if lengthscale.shape[-1] == 1:
            return self.euclidean / lengthscale
        return (self.squares / lengthscale.mT.unsqueeze(-1).pow(2)).sum(-3).clamp_min(1e-36).sqrt()


def matern_with_slope(r: Tensor, nu: float) -> tuple[Tensor, Tensor]:
    """The Matérn correlation with unit output scale at scaled distances ``r`` (paper D.3), and
    ``q = -(dk/dr) / r``, from which the kernel's lengthscale derivatives follow:
    ``dk/dtheta_k = q (x_k - x'_k)^2 / theta_k^3``."""
    if nu == 0.5:
        e = torch.exp(-r)
        return e, e / r
    if nu == 1.5:
        scaled = math.sqrt(3) * r
        e = torch.exp(-scaled)
        return (1 + scaled) * e, 3 * e
    if nu == 2.5:
        scaled = math.sqrt(5) * r
        e = torch.exp(-scaled)
        polynomial = 1 + scaled
        return (polynomial + scaled.pow(2) / 3) * e, (5 / 3) * polynomial * e
    raise ValueError(f"nu must be 0.5, 1.5 or 2.5, got {nu}")


def matern(r: Tensor, nu: float) -> Tensor:
    """The Matérn correlation with unit output scale at scaled distances ``r`` (paper D.3)."""
    return matern_with_slope(r, nu)[0]


def matern_covariance(x1: Tensor | Distances, x2: Tensor | None, lengthscale: Tensor, nu: float) -> Tensor:
    """Matérn covariance with unit output scale (paper D.3).

    Args:
        x1: ``batch x n x d`` inputs, or the :class:`Distances` of x1 to x2 (then ``x2`` is None).
        x2: ``batch x m x d`` inputs.
        lengthscale: ``batch x 1 x k`` with ``k = 1`` (isotropic) or ``k = d`` (ARD).
        nu: smoothness, 0.5, 1.5 or 2.5.

    Returns:
        ``batch x n x m`` covariance matrix (batch dimensions broadcast).
    """
    distances = x1 if isinstance(x1, Distances) else Distances(x1, x2)
    return matern(distances.scaled(lengthscale), nu)


def robust_cholesky(matrix: Tensor) -> tuple[Tensor, Tensor]:
    """Cholesky factors of ``... x n x n`` matrices, with jitter escalation as gpytorch does.

    Only the matrices that fail get jitter, so one seed's trouble never changes another's
    numbers.

    Returns:
        The lower factors and, per matrix (``...``), the number of jitter escalations it needed.

    Raises:
        ValueError: if a matrix has non-finite entries or stays indefinite after
            ``JITTER_TRIES`` escalations.
    """
    if not torch.isfinite(matrix).all():
        raise ValueError("covariance matrix has non-finite entries (NaN or inf in the data?)")
    factor, info = torch.linalg.cholesky_ex(matrix)
    events = torch.zeros(info.shape, dtype=torch.long, device=matrix.device)
    if not info.any():
        return factor, events
    eye = torch.eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)
    jitter = JITTER_START
    for _ in range(JITTER_TRIES):
        failing = info != 0
        events = events + failing
        retry, info_retry = torch.linalg.cholesky_ex(matrix + jitter * eye)
        factor = torch.where(failing[..., None, None], retry, factor)
        info = torch.where(failing, info_retry, info)
        if not info.any():
            JITTER_ESCALATIONS["cholesky"] += int(events.sum())
            return factor, events
        jitter *= 10
    raise ValueError(f"covariance matrix is not positive definite even with jitter {jitter / 10:g}")


@dataclass(frozen=True)
class Whitened:
    """Cholesky factors of ``K + sigma^2 I`` and whitened targets ``z = L^-1 y``, per seed.

    Attributes:
        factor: ``S x n x n`` lower Cholesky factors ``L`` (not differentiable).
        diagonal: ``S x n`` their diagonals ``L_jj`` (differentiable in the lengthscale).
        z: ``S x n`` whitened residuals, eq. (S13) (differentiable in the lengthscale).
        jitter_events: ``S`` jitter escalations used.
    """

    factor: Tensor
    diagonal: Tensor
    z: Tensor
    jitter_events: Tensor

    @property
    def predictive_variance(self) -> Tensor:
        """``S x n``: L_jj^2 = sigma^2 + s2_{j-1}(x_j)."""
        return self.diagonal.pow(2)


class _Whitening(torch.autograd.Function):
    """theta -> (diag L, z = L^-1 y, L) with ``L L^T = K_theta + sigma^2 I``, and a hand-written
    backward.

    Every objective fitted here (the marginal likelihood, OSCBO's FTPL objective, the MAP) is a
    sum over rows of functions of ``(L_jj, z_j)`` (Proposition B.1), so only ``diag L`` and ``z``
    carry gradients. The backward is torch's Cholesky backward (Murray 2016,
    ``dF/dK = L^-T Phi(L^T dF/dL) L^-1``) specialised to that: ``dF/dL`` is a diagonal plus an
    outer product with ``z = L^-1 y``, so ``Phi`` costs O(n^2) (no matrix product), and the
    contraction with the symmetric ``dK/dtheta`` needs no symmetrisation. Autograd through the
    kernel, the factorisation and the solve spends most of its time on ``n x n`` elementwise
    passes and a matrix product; this does two triangular solves and a handful of passes.
    """

    @staticmethod
    def forward(ctx, lengthscale: Tensor, distances: Distances, y: Tensor, nu: float, noise_var: float):
        K, slope = matern_with_slope(distances.scaled(lengthscale.unsqueeze(-2)), nu)
        K.diagonal(dim1=-2, dim2=-1).add_(noise_var)
        factor, events = robust_cholesky(K)
        z = torch.linalg.solve_triangular(factor, y.unsqueeze(-1), upper=False).squeeze(-1)
        ctx.save_for_backward(lengthscale, factor, z, slope)
        ctx.distances = distances
        ctx.mark_non_differentiable(factor, events)
        return factor.diagonal(dim1=-2, dim2=-1).clone(), z, factor, events

    @staticmethod
    def backward(ctx, grad_diagonal: Tensor, grad_z: Tensor, _factor, _events):
        lengthscale, factor, z, slope = ctx.saved_tensors
        distances = ctx.distances
        # With dF/dL = diag(g) - L^-T (dF/dz) z^T (z = L^-1 y), L^T dF/dL = L^T diag(g) - (dF/dz) z^T,
        # whose lower triangle is diag(L_jj g_j) - tril((dF/dz) z^T): Phi costs O(n^2).
        phi = -(grad_z.unsqueeze(-1) * z.unsqueeze(-2)).tril_()
        phi.diagonal(dim1=-2, dim2=-1).add_(factor.diagonal(dim1=-2, dim2=-1) * grad_diagonal).mul_(0.5)
        grad_K = torch.linalg.solve_triangular(factor.mT, phi, upper=True)
        grad_K = torch.linalg.solve_triangular(factor, grad_K, upper=False, left=False)
        return lengthscale_gradient(grad_K * slope, distances, lengthscale), None, None, None, None


def lengthscale_gradient(weighted: Tensor, distances: Distances, lengthscale: Tensor) -> Tensor:
    """``dF/dtheta_k = sum_ij dF/dK_ij q_ij (x_ik - x_jk)^2 / theta_k^3`` (see :func:`matern_with_slope`).

    Args:
        weighted: ``batch x n x m``: dF/dK times the slope ``q`` of the kernel.
        distances: the kernel's :class:`Distances`.
        lengthscale: ``batch x k``.

    Returns:
        ``batch x k``.
    """
    cube = lengthscale.pow(3)
    if lengthscale.shape[-1] == 1:
        return (weighted * distances.squared).flatten(-2).sum(-1, keepdim=True) / cube
    return (weighted.unsqueeze(-3) * distances.squares).flatten(-2).sum(-1) / cube


class _PosteriorVariance(torch.autograd.Function):
    """theta -> the latent posterior variance ``1 - k_*^T (K + sigma^2 I)^-1 k_*`` at test points,
    with a hand-written backward (SCGP's calibration fit evaluates it 50 times a round for 5
    lengthscales per seed).

    With ``A = (K + sigma^2 I)^-1 K_*`` and ``g = dF/ds2``:
    ``dF/dtheta = -2 sum(A diag(g) . dK_*/dtheta) + sum(A diag(g) A^T . dK/dtheta)``.
    """

    @staticmethod
    def forward(ctx, lengthscale: Tensor, train: Distances, cross: Distances, nu: float, noise_var: float):
        K, slope = matern_with_slope(train.scaled(lengthscale.unsqueeze(-2)), nu)
        K.diagonal(dim1=-2, dim2=-1).add_(noise_var)
        factor, _ = robust_cholesky(K)
        K_cross, slope_cross = matern_with_slope(cross.scaled(lengthscale.unsqueeze(-2)), nu)
        v = torch.linalg.solve_triangular(factor, K_cross, upper=False)
        variance = 1.0 - v.pow(2).sum(-2)
        ctx.save_for_backward(lengthscale, factor, v, slope, slope_cross, variance)
        ctx.distances = (train, cross)
        return variance.clamp_min(1e-12)

    @staticmethod
    def backward(ctx, grad_variance: Tensor):
        lengthscale, factor, v, slope, slope_cross, variance = ctx.saved_tensors
        train, cross = ctx.distances
        g = grad_variance * (variance > 1e-12)  # the floor passes no gradient, as clamp_min
        A = torch.linalg.solve_triangular(factor.mT, v, upper=True)  # K^-1 K_*
        Ag = A * g.unsqueeze(-2)
        grad = -2 * lengthscale_gradient(Ag * slope_cross, cross, lengthscale)
        grad = grad + lengthscale_gradient((Ag @ A.mT) * slope, train, lengthscale)
        return grad, None, None, None, None


def posterior_variance(train: Distances, cross: Distances, lengthscale: Tensor, nu: float, noise_var: float) -> Tensor:
    """The latent posterior variance at test points, differentiable in the lengthscale.

    Args:
        train: the training inputs' :class:`Distances` to themselves (``batch x n x n``).
        cross: their distances to the test points (``batch x n x m``).
        lengthscale: ``batch x k``.

    Returns:
        ``batch x m``: ``1 - k_*^T (K + sigma^2 I)^-1 k_*``, floored at 1e-12.
    """
    return _PosteriorVariance.apply(lengthscale, train, cross, nu, noise_var)


def whiten(X: Tensor | Distances, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> Whitened:
    """Factor ``K_theta(X, X) + sigma^2 I`` and whiten ``y`` (differentiable in ``lengthscale``).

    Args:
        X: ``S x n x d`` inputs in query order, or their :class:`Distances` to themselves
            (computed once for all the steps of a lengthscale fit).
        y: ``S x n`` standardised targets.
        lengthscale: ``S x k`` (k = 1 or d).
    """
    distances = X if isinstance(X, Distances) else Distances(X, X)
    diagonal, z, factor, events = _Whitening.apply(lengthscale, distances, y, nu, noise_var)
    return Whitened(factor=factor, diagonal=diagonal, z=z, jitter_events=events)


def negative_mll(X: Tensor | Distances, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> Tensor:
    """``S`` values of ``-log p(y | X, theta)``: sum_j [z_j^2 / 2 + log L_jj] + n/2 log(2 pi).

    ``X`` as in :func:`whiten`."""
    w = whiten(X, y, lengthscale, nu, noise_var)
    log_det = w.diagonal.log().sum(-1)
    return 0.5 * w.z.pow(2).sum(-1) + log_det + 0.5 * y.shape[-1] * math.log(2 * math.pi)


def minimize_lengthscale(
    objective: Callable[[Tensor], Tensor],
    start: Tensor,
    bounds: tuple[float, float],
    lr: float,
    steps: int,
) -> Tensor:
    """Projected Adam on log-lengthscale (Table S1: lr 0.01, 50 steps; warm start, onto Theta: protocol).

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

    Its batch shape is ``S``; :meth:`seed` gives one seed's posterior (batch shape 1).

    Args:
        X: ``S x n x d`` training inputs in [0, 1]^d.
        y: ``S x n`` standardised targets.
        lengthscale: ``S x k``.
        nu, noise_var: kernel smoothness and fixed noise variance.
    """

    num_outputs = 1

    def __init__(self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> None:
        self._set(X, y, lengthscale, nu, noise_var, whiten(X, y, lengthscale, nu, noise_var))

    def _set(
        self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float, whitened: Whitened
    ) -> None:
        Model.__init__(self)
        self.train_X = X
        self.train_y = y
        self.lengthscale = lengthscale
        self.nu = nu
        self.noise_var = noise_var
        self.whitened = whitened
        # K^-1 y = L^-T z
        self.weights = torch.linalg.solve_triangular(whitened.factor.mT, whitened.z.unsqueeze(-1), upper=True)[..., 0]

    def seed(self, index: int) -> GaussianProcess:
        """The posterior of one seed (batch shape 1), sharing this one's factorisation."""
        part = slice(index, index + 1)
        w = self.whitened
        view = GaussianProcess.__new__(GaussianProcess)
        view._set(
            self.train_X[part], self.train_y[part], self.lengthscale[part], self.nu, self.noise_var,
            Whitened(w.factor[part], w.diagonal[part], w.z[part], w.jitter_events[part]),
        )
        return view

    @property
    def batch_shape(self) -> torch.Size:
        return self.train_X.shape[:-2]

    @property
    def jitter_events(self) -> Tensor:
        """``S`` Cholesky jitter escalations."""
        return self.whitened.jitter_events

    def predict(self, x: Tensor, seeds: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Latent posterior mean and variance, eqs. (1)-(2).

        Args:
            x: ``... x S x m x d``; for a one-seed posterior also ``... x m x d``.
            seeds: if given, ``A`` seed indices, and x is ``... x A x m x d``: the posteriors of
                those seeds only (the acquisition optimiser skips seeds whose restarts are done).

        Returns:
            mean and variance, each ``... x S x m`` (``... x m`` for the second form).
        """
        if seeds is None and len(self.train_X) == 1 and (x.dim() < 3 or x.shape[-3] != 1):
            mean, variance = self.predict(x.unsqueeze(-3))  # every batch entry belongs to the one seed
            return mean.squeeze(-2), variance.squeeze(-2)
        train_X, lengthscale, weights, factor = self.train_X, self.lengthscale, self.weights, self.whitened.factor
        if seeds is not None:
            train_X, lengthscale, weights, factor = train_X[seeds], lengthscale[seeds], weights[seeds], factor[seeds]
        cross = matern_covariance(x, train_X, lengthscale.unsqueeze(-2), self.nu)  # ... x S x m x n
        mean = matvec(cross, weights)
        v = torch.linalg.solve_triangular(factor, cross.mT, upper=False)
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
