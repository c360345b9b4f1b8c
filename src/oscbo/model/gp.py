"""The GP surrogate shared by every GP method (paper 7 and D, Table S1), for S seeds in lockstep.

Zero mean, output scale 1, fixed observation noise ``sigma^2``, Matérn kernel with one
lengthscale (isotropic) or one per dimension (ARD); only lengthscales are adapted: theta_0 by
BoTorch's MLL fit (:func:`fit_initial_lengthscale`), per-round refits by projected Adam on
log-lengthscale (:func:`minimize_lengthscale`), and the posterior of a round
(:class:`GaussianProcess`). Seeds run in lockstep as one batched tensor program: every function
takes ``S x n x d`` inputs, and a seed's numbers do not depend on its batch.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch
from torch import Tensor

from oscbo.model.kernel import matern_covariance
from oscbo.model.linalg import Whitened, whiten
from oscbo.model.rounding import matvec, sqrt


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
    first, second = torch.zeros_like(log_theta), torch.zeros_like(log_theta)
    for step in range(1, steps + 1):
        log_theta.grad = None
        objective(log_theta.exp()).sum().backward()
        with torch.no_grad():
            adam_step(log_theta, log_theta.grad, first, second, float(step), lr)
            log_theta.clamp_(low, high)
    return log_theta.detach().exp().clamp(*bounds)  # exp(log b) can round past b


#: ``torch.optim.Adam``'s defaults (Table S1 names Adam and its learning rate only).
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


def adam_step(param: Tensor, grad: Tensor, first: Tensor, second: Tensor, step: float, lr: float) -> None:
    """One step of ``torch.optim.Adam`` at its defaults, in place, op for op as torch runs it on a
    CPU tensor (``_single_tensor_adam``): the same numbers, bit for bit (the golden records hold
    it). Constructing a ``torch.optim`` optimizer imports ``torch._dynamo``, 2 s a process, in
    every BO job; this is the arithmetic without it. ``first`` and ``second``: the moment
    estimates, zeros before step 1."""
    beta1, beta2 = ADAM_BETAS
    first.lerp_(grad, 1 - beta1)
    second.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step_size = lr / (1 - beta1**step)
    denominator = (sqrt(second) / (1 - beta2**step) ** 0.5).add_(ADAM_EPS)
    param.addcdiv_(first, denominator, value=-step_size)


def fit_initial_lengthscale(
    X: Tensor, y: Tensor, nu: float, noise_var: float, ard: bool, bounds: tuple[float, float]
) -> Tensor:
    """theta_0: BoTorch's ``fit_gpytorch_mll`` on each seed's initial design, clipped to Theta.

    One seed at a time: BoTorch's scipy fit optimises the sum over a batch jointly, which
    would make one seed's theta_0 depend on the others. The model is a ``SingleTaskGP``
    with the surrogate's observation model (zero mean, no output scale, fixed noise, no
    outcome transform: y is already standardised), and GPyTorch's default lengthscale
    parametrisation (softplus, initial value 0.693). GPyTorch's ``MaternKernel``, its distances'
    square root an IEEE one (:func:`_matern_kernel`).

    Args:
        X: ``S x n x d``; y: ``S x n``.

    Returns:
        ``S x k`` lengthscales.
    """
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.means import ZeroMean
    from gpytorch.mlls import ExactMarginalLogLikelihood

    d = X.shape[-1]
    fitted = []
    for Xs, ys in zip(X, y):
        kernel = _matern_kernel()(nu=nu, ard_num_dims=d if ard else None).to(Xs)
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


@functools.cache
def _matern_kernel() -> type:
    """GPyTorch's ``MaternKernel`` with the training points' distances' square root the IEEE one
    (:func:`oscbo.model.rounding.sqrt`): GPyTorch takes them as ``sq_dist(x, x).clamp_min_(1e-30)
    .sqrt_()``, torch's CPU square root, whose rounding depends on the CPU. Every other case (a
    diagonal, other points) is GPyTorch's own; the MLL fit sees only the training points."""
    from gpytorch.kernels import MaternKernel
    from gpytorch.kernels.kernel import sq_dist

    class Matern(MaternKernel):
        def covar_dist(self, x1, x2, diag=False, last_dim_is_batch=False, square_dist=False, **params):
            if diag or last_dim_is_batch or square_dist or not torch.equal(x1, x2):
                return super().covar_dist(x1, x2, diag, last_dim_is_batch, square_dist, **params)
            return sqrt(sq_dist(x1, x2, x1_eq_x2=True).clamp_min_(1e-30))

    return Matern


class GaussianProcess:
    """Exact GP posteriors of ``S`` seeds (a :class:`~oscbo.model.posterior.Posterior`).

    Its batch shape is ``S``; :meth:`seed` gives one seed's posterior (batch shape 1).

    Args:
        X: ``S x n x d`` training inputs in [0, 1]^d.
        y: ``S x n`` standardised targets.
        lengthscale: ``S x k``.
        nu, noise_var: kernel smoothness and fixed noise variance.
    """

    def __init__(self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float) -> None:
        self._set(X, y, lengthscale, nu, noise_var, whiten(X, y, lengthscale, nu, noise_var))

    def _set(self, X: Tensor, y: Tensor, lengthscale: Tensor, nu: float, noise_var: float, whitened: Whitened) -> None:
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
            self.train_X[part],
            self.train_y[part],
            self.lengthscale[part],
            self.nu,
            self.noise_var,
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
