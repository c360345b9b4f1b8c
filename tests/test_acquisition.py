"""The acquisition optimiser against BoTorch's optimize_acqf on the same posteriors."""

import math

import torch
from botorch.optim import optimize_acqf

from oscbo import tasks
from oscbo.acquisition import WidthUCB, maximize, sobol_points
from oscbo.surrogate import GaussianProcess


def posteriors():
    """GP posteriors on real test functions with short to long lengthscales."""
    g = torch.Generator().manual_seed(0)
    for i, (name, n) in enumerate([("hartmann3", 10), ("levy5", 30), ("hartmann6", 60)] * 4):
        task = tasks.get(name)
        X = torch.rand(1, n, task.dim, generator=g, dtype=torch.float64)
        y = task(X)
        y = (y - y.mean()) / y.std()
        lengthscale = torch.tensor([[[0.05, 0.1, 0.3, 1.0][i % 4]]], dtype=torch.float64)
        yield i, task.dim, GaussianProcess(X, y, lengthscale, 2.5, 0.01)


def test_optimum_no_worse_than_optimize_acqf():
    ours, theirs = [], []
    for i, d, model in posteriors():
        acquisition = WidthUCB(model, torch.tensor([math.sqrt(2.0)], dtype=torch.float64))
        _, value = maximize(acquisition, sobol_points(20, d, seed=i), restarts=5)
        torch.manual_seed(i)
        bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
        _, reference = optimize_acqf(acquisition, bounds=bounds, q=1, num_restarts=5, raw_samples=20)
        ours.append(value.item())
        theirs.append(reference.item())
    ours, theirs = torch.tensor(ours), torch.tensor(theirs)
    # Same L-BFGS-B, different starts: neither dominates case by case, but ours is no
    # worse on average and rarely worse by much.
    assert (ours - theirs).mean() > -1e-3
    assert ((ours - theirs) < -0.05).float().mean() <= 0.15


def test_maximize_is_reproducible_and_inside_the_box():
    _, d, model = next(posteriors())
    acquisition = WidthUCB(model, torch.tensor([math.sqrt(2.0)], dtype=torch.float64))
    raw = sobol_points(20, d, seed=7)
    x1, v1 = maximize(acquisition, raw, restarts=5)
    x2, v2 = maximize(acquisition, raw, restarts=5)
    assert torch.equal(x1, x2) and torch.equal(v1, v2)
    assert x1.shape == (d,) and (x1 >= 0).all() and (x1 <= 1).all()
    with torch.no_grad():
        assert v1 >= acquisition(raw.unsqueeze(-2)).max() - 1e-12  # never worse than its starts
