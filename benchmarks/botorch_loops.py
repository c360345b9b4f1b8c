"""GP-UCB-MLL and VanillaBO as plain per-seed BoTorch loops under the study's protocol.

The references that ``benchmarks/crosscheck.py`` compares the engine with and that
``benchmarks/performance.py`` times it against. They share no GP, fit or acquisition code with the
engine: the model is BoTorch's ``SingleTaskGP``, the marginal likelihood GPyTorch's exact one, the
fits ``fit_gpytorch_mll`` or torch's Adam, the acquisition BoTorch's ``UpperConfidenceBound`` under
``optimize_acqf``. From the project they take the task, the initial design, the per-(seed, round)
Sobol stream of raw acquisition samples and the record's column names.

The protocol (Table S1 and the project's rows): one seed at a time, noise-free; y standardised with
the data seen so far every round (unbiased std); round t's lengthscale is fitted on D_{t-1} and
chooses x_t; UCB with beta = 2 (latent sigma); ``optimize_acqf(q=1, num_restarts=5)`` from the 5
best of 20 raw samples. Those starts are built outside ``optimize_acqf``: its ``options={"topn":
True}`` would reach SciPy and silently turn off BoTorch's batched L-BFGS-B.

* :func:`gp_ucb_mll`: Matérn-5/2, zero mean, output scale 1, fixed noise 0.01; theta_0 by
  ``fit_gpytorch_mll`` (GPyTorch's softplus lengthscale, initial 0.693) clipped to Theta =
  [1e-2, 10]; each later round 50 Adam steps of lr 0.01 on log-lengthscale, warm-started from the
  last value and projected onto Theta, on the marginal likelihood (GPyTorch's per-observation value
  times n: Adam's epsilon would otherwise move the steps at 1e-8).
* :func:`vanilla_bo`: a new model fitted by ``fit_gpytorch_mll`` every round, as a BoTorch loop
  does, with ARD lengthscales under BoTorch's dimension-scaled LogNormal prior. ``model="default"``
  is BoTorch's ``SingleTaskGP(X, y)`` as it is (RBF, learned noise under its LogNormal(-4, 1) prior,
  constant mean, ``Standardize``: the source, Hvarfner et al. 2024); ``model="study"`` is BoTorch's
  ``SingleTaskGP`` with the study's observation model (Matérn-5/2, zero mean, fixed noise 0.01 on
  standardised y: what the engine implements), BoTorch's lengthscale floor of 0.025 and no cap.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pandas as pd
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.exceptions.warnings import OptimizationWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
from botorch.optim import optimize_acqf
from gpytorch.constraints import Positive
from gpytorch.kernels import Kernel, MaternKernel
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from oscbo.run import initial_design
from oscbo.seeding import sobol_points, stable_seed
from oscbo.tasks.base import build_task

THETA = (1e-2, 1e1)
NOISE_VAR = 0.01
BETA = 2.0
RAW_SAMPLES, RESTARTS = 20, 5
REFIT_LR, REFIT_STEPS = 0.01, 50

#: ``(X, y, the last round's lengthscale or None) -> (the round's model, its lengthscale, fit warnings)``;
#: X ``n x d``, y ``n`` raw, the lengthscale ``k``.
Fit = Callable[[Tensor, Tensor, Tensor | None], tuple[SingleTaskGP, Tensor, int]]


def standardized(y: Tensor) -> Tensor:
    """``n x 1``: y standardised with its own mean and unbiased std."""
    return ((y - y.mean()) / y.std()).unsqueeze(-1)


def study_gp(X: Tensor, Y: Tensor, kernel: Kernel) -> SingleTaskGP:
    """The study's observation model in BoTorch: zero mean, output scale 1, fixed noise, no outcome
    transform (``Y``, ``n x 1``, is standardised already)."""
    return SingleTaskGP(
        X,
        Y,
        train_Yvar=torch.full_like(Y, NOISE_VAR),
        covar_module=kernel,
        mean_module=ZeroMean(),
        outcome_transform=None,
    )


def fit_counting_warnings(model: SingleTaskGP) -> int:
    """``fit_gpytorch_mll`` on ``model``; the number of optimisation warnings it passed on (each an
    attempt that ended abnormally and was retried from a draw of the priors)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OptimizationWarning)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return sum(issubclass(w.category, OptimizationWarning) for w in caught)


def initial_lengthscale(X: Tensor, Y: Tensor) -> Tensor:
    """theta_0 (``1``): ``fit_gpytorch_mll`` with GPyTorch's default lengthscale, clipped to Theta."""
    kernel = MaternKernel(nu=2.5).to(X)
    fit_counting_warnings(study_gp(X, Y, kernel))
    return kernel.lengthscale.detach().reshape(-1).clamp(*THETA)


def refit_lengthscale(X: Tensor, Y: Tensor, start: Tensor) -> Tensor:
    """The per-round MLL refit (``1``): Adam on log-lengthscale from ``start``, projected onto Theta.

    Args:
        X: ``n x d``; Y: ``n x 1`` standardised; start: ``1``, the last round's lengthscale.
    """
    kernel = MaternKernel(nu=2.5, lengthscale_constraint=Positive(transform=torch.exp, inv_transform=torch.log))
    kernel = kernel.to(X)
    low, high = math.log(THETA[0]), math.log(THETA[1])
    kernel.lengthscale = start.reshape(1, 1)
    log_lengthscale = kernel.raw_lengthscale  # the constraint makes the raw parameter log theta
    with torch.no_grad():
        log_lengthscale.clamp_(low, high)
    model = study_gp(X, Y, kernel)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    model.train()
    optimizer = torch.optim.Adam([log_lengthscale], lr=REFIT_LR)
    for _ in range(REFIT_STEPS):
        optimizer.zero_grad()
        (-mll(model(X), Y.squeeze(-1)) * len(X)).backward()
        optimizer.step()
        with torch.no_grad():
            log_lengthscale.clamp_(low, high)
    return kernel.lengthscale.detach().reshape(-1).clamp(*THETA)


def fit_gp_ucb_mll(X: Tensor, y: Tensor, previous: Tensor | None) -> tuple[SingleTaskGP, Tensor, int]:
    """GP-UCB-MLL's round (a :data:`Fit`): theta_0 in round 1, the refit after."""
    Y = standardized(y)
    lengthscale = initial_lengthscale(X, Y) if previous is None else refit_lengthscale(X, Y, previous)
    kernel = MaternKernel(nu=2.5).to(X)
    kernel.lengthscale = lengthscale
    return study_gp(X, Y, kernel).eval(), lengthscale, 0


def vanilla_bo_fit(model: str) -> Fit:
    """VanillaBO's round (a :data:`Fit`) with BoTorch's ``default`` model or the ``study``'s."""

    def fit(X: Tensor, y: Tensor, previous: Tensor | None) -> tuple[SingleTaskGP, Tensor, int]:
        if model == "default":
            gp = SingleTaskGP(X, y.unsqueeze(-1))
        else:
            gp = study_gp(X, standardized(y), get_covar_module_with_dim_scaled_prior(X.shape[-1], use_rbf_kernel=False))
        retries = fit_counting_warnings(gp)
        return gp, gp.covar_module.lengthscale.detach().reshape(-1), retries

    return fit


def propose(model: SingleTaskGP, seed: int, t: int) -> Tensor:
    """x_t (``1 x d``): ``optimize_acqf`` on UCB from the 5 best of the round's 20 raw samples."""
    d = model.train_inputs[0].shape[-1]
    acquisition = UpperConfidenceBound(model, beta=BETA)
    raw = sobol_points(RAW_SAMPLES, d, stable_seed("acquisition", seed, t)).unsqueeze(-2)  # R x 1 x d
    with torch.no_grad():
        best = acquisition(raw).topk(RESTARTS).indices
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).to(raw)
    candidate, _ = optimize_acqf(acquisition, bounds, q=1, num_restarts=RESTARTS, batch_initial_conditions=raw[best])
    return candidate


def loop(task_name: str, seed: int, budget: int, n_init: int, fit: Fit) -> pd.DataFrame:
    """One seed's BO run under ``fit``.

    Returns:
        One row per oracle call with the record's columns ``step``, ``phase``, ``x_i``, ``f``,
        ``simple_regret``, ``cumulative_regret`` and, on BO rows, ``lengthscale_i`` (the one that
        chose x_t), plus ``fit_warnings`` (:func:`fit_counting_warnings`).
    """
    torch.manual_seed(stable_seed("botorch-loop", task_name, seed))  # fit_gpytorch_mll's retries draw from it
    task = build_task(task_name)
    X = initial_design(task_name, task.dim, n_init, seed)
    y = task(X.unsqueeze(0))[0]
    lengthscale, rows = None, []
    for t in range(1, budget + 1):
        model, lengthscale, retries = fit(X, y, lengthscale)
        x = propose(model, seed, t)
        X, y = torch.cat([X, x]), torch.cat([y, task(x.unsqueeze(0))[0]])
        rows.append({**{f"lengthscale_{i}": v for i, v in enumerate(lengthscale.tolist())}, "fit_warnings": retries})
    table = pd.DataFrame({f"x_{i}": X[:, i].numpy() for i in range(task.dim)})
    table.insert(0, "phase", ["init"] * n_init + ["bo"] * budget)
    table.insert(0, "step", range(len(table)))
    table["f"] = y.numpy()
    table["simple_regret"] = task.optimal_value - table["f"].cummax()
    table["cumulative_regret"] = (task.optimal_value - table["f"]).where(table["phase"] == "bo", 0.0).cumsum()
    return pd.concat([table, pd.DataFrame([{}] * n_init + rows)], axis=1)


def gp_ucb_mll(task_name: str, seed: int, budget: int, n_init: int) -> pd.DataFrame:
    """GP-UCB-MLL's run of one seed (see :func:`loop`)."""
    return loop(task_name, seed, budget, n_init, fit_gp_ucb_mll)


def vanilla_bo(task_name: str, seed: int, budget: int, n_init: int, model: str) -> pd.DataFrame:
    """VanillaBO's run of one seed with BoTorch's ``default`` model or the ``study``'s (see :func:`loop`)."""
    return loop(task_name, seed, budget, n_init, vanilla_bo_fit(model))
