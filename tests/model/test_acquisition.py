"""The acquisition optimiser against BoTorch's optimize_acqf on the same posteriors."""

import math

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.optim import optimize_acqf
from botorch_reference import BoTorchGP, WidthUCB

from oscbo.model.acquisition import log_ei, maximize, ucb
from oscbo.model.gp import GaussianProcess
from oscbo.seeding import sobol_points
from oscbo.tasks.base import build_task

WIDTH = torch.tensor([math.sqrt(2.0)], dtype=torch.float64)


def posteriors():
    """GP posteriors on real test functions with short to long lengthscales."""
    g = torch.Generator().manual_seed(0)
    for i, (name, n) in enumerate([("hartmann3", 10), ("levy5", 30), ("hartmann6", 60)] * 4):
        task = build_task(name)
        X = torch.rand(1, n, task.dim, generator=g, dtype=torch.float64)
        y = task(X)
        y = (y - y.mean()) / y.std()
        lengthscale = torch.tensor([[[0.05, 0.1, 0.3, 1.0][i % 4]]], dtype=torch.float64)
        yield i, task.dim, GaussianProcess(X, y, lengthscale, 2.5, 0.01)


def score(model):
    return lambda x, seeds: ucb(*model.predict(x, seeds), WIDTH.unsqueeze(-1))


def test_scores_equal_botorch_acquisition_functions():
    _, d, model = next(posteriors())
    x = torch.rand(1, 7, d, dtype=torch.float64)
    reference = WidthUCB(model, WIDTH)(x[0].unsqueeze(-2))
    assert torch.allclose(score(model)(x, None)[0], reference, atol=1e-12)
    best = model.train_y.max()
    theirs = LogExpectedImprovement(BoTorchGP(model), best_f=best)(x[0].unsqueeze(-2))
    assert torch.allclose(log_ei(*model.predict(x), best)[0], theirs, atol=1e-12)


def test_optimum_no_worse_than_optimize_acqf():
    ours, theirs = [], []
    for i, d, model in posteriors():
        _, value = maximize(score(model), sobol_points(20, d, seed=i).unsqueeze(0), restarts=5)
        torch.manual_seed(i)
        bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
        _, reference = optimize_acqf(WidthUCB(model, WIDTH), bounds=bounds, q=1, num_restarts=5, raw_samples=20)
        ours.append(value.item())
        theirs.append(reference.item())
    ours, theirs = torch.tensor(ours), torch.tensor(theirs)
    # Same L-BFGS-B, different starts: neither dominates case by case, but ours is no
    # worse on average and rarely worse by much.
    assert (ours - theirs).mean() > -1e-3
    assert ((ours - theirs) < -0.05).float().mean() <= 0.15


def test_same_end_points_as_optimize_acqf_from_the_same_starts():
    """From the same starts, the batched L-BFGS-B lands where BoTorch's optimize_acqf does.

    On a flat optimum L-BFGS-B stops by its relative-decrease test, and the last digits of the
    acquisition (our kernel rounds differently from GPyTorch's) move that stop by up to 1e-2 in
    x at a cost below 1e-5 in value; elsewhere the end points agree to 1e-6."""
    same = 0
    for i, d, model in list(posteriors())[:6]:
        raw = sobol_points(20, d, seed=i)
        x, value = maximize(score(model), raw.unsqueeze(0), restarts=5)
        acquisition = WidthUCB(model, WIDTH)
        with torch.no_grad():
            starts = raw[acquisition(raw.unsqueeze(-2)).topk(5).indices].unsqueeze(-2)
        bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
        reference, reference_value = optimize_acqf(
            acquisition, bounds, q=1, num_restarts=5, batch_initial_conditions=starts
        )
        assert (value - reference_value).abs() < 1e-5, i
        same += torch.allclose(x, reference[0], atol=1e-6)
    assert same >= 5


def test_a_seed_lands_where_it_lands_alone():
    """Seeds are independent problems: one seed's optimum is bitwise the same in a batch."""
    models = [model for _, d, model in posteriors() if d == 5][:3]
    X = torch.cat([m.train_X for m in models])
    y = torch.cat([m.train_y for m in models])
    lengthscale = torch.cat([m.lengthscale for m in models])
    batch = GaussianProcess(X, y, lengthscale, 2.5, 0.01)
    raw = torch.stack([sobol_points(20, 5, seed=s) for s in range(3)])
    x_all, v_all = maximize(score(batch), raw, restarts=5)
    for s in range(3):
        alone = GaussianProcess(X[s : s + 1], y[s : s + 1], lengthscale[s : s + 1], 2.5, 0.01)
        x_one, v_one = maximize(score(alone), raw[s : s + 1], restarts=5)
        assert torch.equal(x_all[s], x_one[0]) and torch.equal(v_all[s], v_one[0])


def test_maximize_is_reproducible_and_inside_the_box():
    _, d, model = next(posteriors())
    raw = sobol_points(20, d, seed=7).unsqueeze(0)
    x1, v1 = maximize(score(model), raw, restarts=5)
    x2, v2 = maximize(score(model), raw, restarts=5)
    assert torch.equal(x1, x2) and torch.equal(v1, v2)
    assert x1.shape == (1, d) and (x1 >= 0).all() and (x1 <= 1).all()
    with torch.no_grad():
        assert v1 >= score(model)(raw, None).max() - 1e-12  # never worse than its starts
