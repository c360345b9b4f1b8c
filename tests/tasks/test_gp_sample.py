"""GP sample-path tasks: a seeded Matérn-5/2 draw with a known lengthscale, and its f*."""

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize, minimize_scalar

from oscbo import run as engine
from oscbo import tasks
from oscbo.model.linalg import negative_mll
from oscbo.registry import Entry
from oscbo.seeding import sobol_points
from oscbo.tasks.base import build_task
from oscbo.tasks.gp_sample import draw_features, fourier_sum, gp2, gp5

DTYPE = torch.float64
ENTRIES = {"gp2": Entry("oscbo.tasks.gp_sample:gp2"), "gp5": Entry("oscbo.tasks.gp_sample:gp5")}


@pytest.fixture(scope="module")
def built():
    """The two tasks at their defaults, built once (construction searches for f*)."""
    return {"gp2": gp2(), "gp5": gp5()}


@pytest.fixture
def registered(monkeypatch):
    for name, entry in ENTRIES.items():
        monkeypatch.setitem(tasks.REGISTRY, name, entry)


def matern52(r_over_l: float) -> float:
    s = math.sqrt(5) * r_over_l
    return (1 + s + s * s / 3) * math.exp(-s)


def numpy_value(task, x: np.ndarray) -> np.ndarray:
    """f from the task's features by the textbook formula (a matrix product, unlike the task)."""
    angle = x @ task.frequencies.numpy().T - task.phases.numpy()
    return np.cos(angle) @ task.amplitudes.numpy()


def test_same_seed_same_function_other_seed_another():
    x = torch.rand(200, 5, generator=torch.Generator().manual_seed(0), dtype=DTYPE)
    task, again, other = gp5(features=1024), gp5(features=1024), gp5(seed=1, features=1024)
    assert torch.equal(task(x), again(x)) and task.optimal_value == again.optimal_value
    assert (task(x) - other(x)).abs().max() > 0.5 and task.optimal_value != other.optimal_value
    # the lengthscale only scales the frequencies: the same draw, stretched
    stretched = gp5(lengthscale=0.6, features=1024)
    torch.testing.assert_close(stretched(x), task(x / 2), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["gp2", "gp5"])
def test_values_are_batched_batch_invariant_and_the_formula(built, name):
    task = built[name]
    x = torch.rand(7, 3, task.dim, generator=torch.Generator().manual_seed(1), dtype=DTYPE)
    values = task(x)
    assert values.shape == (7, 3) and values.dtype == DTYPE
    alone = torch.stack([torch.stack([task(point.view(1, 1, -1)).squeeze() for point in row]) for row in x])
    assert torch.equal(values, alone)  # bitwise: the engine evaluates all seeds in one call
    big = torch.cat([x.reshape(-1, task.dim), torch.rand(1000, task.dim, dtype=DTYPE)])
    assert torch.equal(task(big)[:21], values.reshape(-1))
    np.testing.assert_allclose(values.numpy(), numpy_value(task, x.numpy()), rtol=0, atol=1e-11)
    assert task(x[0, 0]).shape == ()


def test_frequencies_give_the_matern52_kernel():
    """E[cos(w . delta)] over features and seeds is Matérn-5/2 (tolerance 0.01, about 5 standard
    errors; Matérn-3/2 and the RBF kernel differ from it by 0.02 to 0.05 at these distances)."""
    generator = torch.Generator().manual_seed(2)
    for dim in (2, 5):
        unit = torch.randn(dim, generator=generator, dtype=DTYPE)
        unit = unit / unit.norm()
        draws = [draw_features(dim, 4096, seed)[0] for seed in range(32)]
        for r in (0.25, 0.5, 1.0, 2.0):
            per_draw = torch.stack([torch.cos(w @ (r * unit)).mean() for w in draws])
            assert per_draw.mean().item() == pytest.approx(matern52(r), abs=0.01)
            # one draw's own kernel: within 4 Monte-Carlo standard errors (2 J)^-1/2
            assert (per_draw - matern52(r)).abs().max().item() < 4 / math.sqrt(2 * 4096)


def test_covariance_of_f_over_seeds_is_matern52():
    """E[f(x) f(x + delta)] over 1500 draws, 64 pairs each (tolerance 0.03, about 4 standard errors)."""
    lengthscale, dim, seeds = 0.2, 2, 1500
    generator = torch.Generator().manual_seed(3)
    base = torch.rand(64, dim, generator=generator, dtype=DTYPE)
    angles = torch.rand(64, generator=generator, dtype=DTYPE) * 2 * math.pi
    directions = torch.stack([angles.cos(), angles.sin()], -1)
    distances = (0.25, 0.5, 1.0, 2.0)
    X = torch.cat([base] + [base + r * lengthscale * directions for r in distances])
    products = torch.zeros(len(distances) + 1, dtype=DTYPE)
    for seed in range(seeds):
        frequencies, amplitudes, phases = draw_features(dim, 256, seed)
        f = fourier_sum(X, (frequencies / lengthscale).T.contiguous(), amplitudes, phases).view(-1, 64)
        products += (f * f[0]).mean(-1)
    covariance = products / seeds
    assert covariance[0].item() == pytest.approx(1.0, abs=0.03)  # the unit output scale
    for r, value in zip(distances, covariance[1:].tolist()):
        assert value == pytest.approx(matern52(r), abs=0.03), r


@pytest.mark.parametrize("name", ["gp2", "gp5"])
def test_mll_fit_to_one_draw_recovers_the_lengthscale(built, name):
    """Unit output scale, 256 noise-free Sobol points (noise 1e-6): the fit is within 10 % of l."""
    task = built[name]
    X = sobol_points(256, task.dim, 123)
    y = task(X)

    def nll(log_lengthscale: float) -> float:
        return negative_mll(X, y, torch.tensor([math.exp(log_lengthscale)], dtype=DTYPE), 2.5, 1e-6).item()

    fitted = math.exp(minimize_scalar(nll, bounds=(math.log(0.02), math.log(2.0)), method="bounded").x)
    assert fitted == pytest.approx(task.true_lengthscale, rel=0.1)


@pytest.mark.parametrize("name", ["gp2", "gp5"])
def test_optimal_value_beats_random_points_and_local_searches(built, name):
    task = built[name]
    x = torch.rand(10_000, task.dim, generator=torch.Generator().manual_seed(4), dtype=DTYPE)
    values = task(x)
    assert task.optimal_value >= values.max().item()
    maximizer = torch.tensor(task.maximizer, dtype=DTYPE)
    assert maximizer.shape == (task.dim,) and ((maximizer >= 0) & (maximizer <= 1)).all()
    assert task(maximizer).item() == task.optimal_value

    frequencies, amplitudes, phases = (t.numpy() for t in (task.frequencies, task.amplitudes, task.phases))

    def negative(point: np.ndarray) -> tuple[float, np.ndarray]:
        angle = frequencies @ point - phases
        return -float(np.cos(angle) @ amplitudes), frequencies.T @ (amplitudes * np.sin(angle))

    for start in x[values.topk(20).indices].numpy():  # L-BFGS-B from the best points finds nothing higher
        result = minimize(negative, start, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * task.dim)
        assert -result.fun <= task.optimal_value + 1e-9
    assert task.describe()["true_lengthscale"] == task.true_lengthscale


@pytest.mark.parametrize("name, options", [("gp2", {}), ("gp5", {"lengthscale": 0.5, "features": 1024})])
def test_runs_through_the_engine(registered, name, options):
    result = engine.run(name, "gp-ucb-mll", [0, 1], budget=3, n_init=5, task_options=options)
    described = result.meta["task"]
    assert described["true_lengthscale"] == options.get("lengthscale", {"gp2": 0.2, "gp5": 0.3}[name])
    assert described["features"] == options.get("features", {"gp2": 16384, "gp5": 4096}[name])
    for table in result.tables.values():
        assert len(table) == 8
        regret = table["simple_regret"].to_numpy()
        assert np.isfinite(regret).all() and (regret >= -1e-9).all()
        assert np.allclose(regret, described["optimal_value"] - table["f"].cummax())


def test_bad_options_are_named(registered):
    with pytest.raises(ValueError, match="power of two"):
        build_task("gp2", features=1000)
    with pytest.raises(ValueError, match="lengthscale > 0"):
        build_task("gp5", lengthscale=0.0)
    with pytest.raises(ValueError, match="lengthscale"):
        build_task("gp2", length_scale=0.3)
