"""The GP's linear algebra, for S seeds in lockstep: Cholesky with jitter, whitening, the marginal
likelihood and the posterior variance, with hand-written backwards.

The closed forms are those of the paper: posterior mean and variance (eqs. 1-2), and the
sequential decomposition of Proposition B.1: with ``K + sigma^2 I = L L^T`` and ``z = L^-1 y``,

    z_j      = (y_j - mu_{j-1}(x_j)) / sqrt(sigma^2 + s2_{j-1}(x_j))      (S13)
    L_jj^2   = sigma^2 + s2_{j-1}(x_j)

so every per-round loss of OSCBO and the marginal likelihood are sums over rows of functions of
``(L_jj, z_j)``. A seed's numbers are bitwise those it gets in a batch of one: MKL runs in its
strict mode (:mod:`oscbo.reproducibility`) and no torch matrix-vector product is used
(:func:`oscbo.model.kernel.matvec`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import torch
from torch import Tensor

from oscbo.model.kernel import Distances, lengthscale_gradient, matern_with_slope

#: Jitter escalation as in gpytorch's psd_safe_cholesky (float64 starts at 1e-8, x10 a try),
#: but applied to the failing batch entries only, so other seeds are untouched.
JITTER_START = 1e-8
JITTER_TRIES = 8
#: Every escalation in this process, refits included ("cholesky"); a record's column counts only
#: the escalations of the posterior that chose x_t, per seed; the engine puts its batch's total in
#: the sidecar.
JITTER_ESCALATIONS: Counter[str] = Counter()


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
