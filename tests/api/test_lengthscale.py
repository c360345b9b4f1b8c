"""OSCBOLengthscale: fed the engine's data round by round, it plays the engine's lengthscales."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.kernels import MaternKernel
from gpytorch.means import ZeroMean

from oscbo import run as engine
from oscbo.api.lengthscale import OSCBOLengthscale
from oscbo.settings import Settings
from oscbo.tasks.base import build_task

N_INIT, ROUNDS = 6, 10


def record_data(table, dim):
    X = torch.tensor(table[[f"x_{i}" for i in range(dim)]].to_numpy())
    return X, torch.tensor(table["y"].to_numpy())


def surrogate_model(X, Y, **kwargs):
    """A SingleTaskGP built as OSCBO's surrogate (BoTorch's default Standardize outcome transform)."""
    Y = Y.unsqueeze(-1)
    return SingleTaskGP(
        X,
        Y,
        train_Yvar=0.01 * Y.var() * torch.ones_like(Y),
        covar_module=MaternKernel(nu=2.5, ard_num_dims=X.shape[-1] if kwargs.get("ard") else None),
        mean_module=ZeroMean(),
        **{k: v for k, v in kwargs.items() if k != "ard"},
    )


def test_the_rule_plays_the_engines_oscbo_lengthscales():
    """Given the data of an engine run, one observation per call: the same lengthscales and
    lambdas, bitwise from the raw data; from a SingleTaskGP (Standardize, then undone) to 1e-12."""
    table = engine.run("hartmann3", "oscbo", [0], budget=ROUNDS, n_init=N_INIT).tables[0]
    X, Y = record_data(table, 3)
    from_data, from_model = OSCBOLengthscale(budget=ROUNDS), OSCBOLengthscale(budget=ROUNDS)
    played_data, played_model = [], []
    for t in range(1, ROUNDS + 1):
        n = N_INIT + t - 1  # D_{t-1}
        played_data.append(from_data(X[:n], Y[:n]))
        model = surrogate_model(X[:n], Y[:n])
        model.covar_module.lengthscale = from_model(model)
        played_model.append(model.covar_module.lengthscale.detach().reshape(-1))
    expected = table["lengthscale_0"].to_numpy()[N_INIT:]
    np.testing.assert_array_equal(torch.cat(played_data).numpy(), expected)
    np.testing.assert_allclose(torch.cat(played_model).numpy(), expected, rtol=1e-12)
    assert len(np.unique(expected)) == ROUNDS  # it moved every round: the match is not trivial
    rounds = slice(N_INIT, N_INIT + ROUNDS - 1)  # the last observation is never told to the rule
    for column in ("lambda", "loss_sharpness", "loss_calibration", "covered", "violation", "mu", "sigma"):
        np.testing.assert_array_equal(from_data.history[column].to_numpy()[rounds], table[column].to_numpy()[rounds])


def test_with_ard_and_a_normalize_input_transform():
    """OSCBO-L1 with ARD on Levy 5-D (bounds [-10, 10]^5), seed 1: natural-unit inputs through
    Normalize(bounds=...) give the engine's five lengthscales a round (to rounding: normalising
    the natural inputs back is not bitwise the engine's unit points)."""
    table = engine.run("levy5", "oscbo-l1", [1], budget=ROUNDS, n_init=N_INIT, settings=Settings(ard=True)).tables[1]
    task = build_task("levy5")
    X, Y = record_data(table, 5)
    rule = OSCBOLengthscale(budget=ROUNDS, method="oscbo-l1", seed=1, ard=True)
    played = []
    for n in range(N_INIT, N_INIT + ROUNDS):
        natural = task.to_natural(X[:n])
        model = surrogate_model(natural, Y[:n], ard=True, input_transform=Normalize(5, bounds=task.bounds))
        played.append(rule(model))
        assert played[-1].shape == (5,)
    expected = table[[f"lengthscale_{i}" for i in range(5)]].to_numpy()[N_INIT:]
    np.testing.assert_allclose(torch.stack(played).numpy(), expected, rtol=1e-9)


def test_calling_again_without_new_data_replays_the_round():
    X, Y = torch.rand(5, 2, dtype=torch.float64), torch.rand(5, dtype=torch.float64)
    rule = OSCBOLengthscale(budget=3)
    first = rule(X, Y)
    assert torch.equal(rule(X, Y), first)
    second = rule(torch.cat([X, torch.full((1, 2), 0.5, dtype=torch.float64)]), torch.cat([Y, Y[:1]]))
    assert not torch.equal(second, first)
    assert rule.history["phase"].tolist() == ["init"] * 5 + ["bo"]


def test_bad_data_is_named():
    X, Y = torch.rand(6, 2, dtype=torch.float64), torch.rand(6, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"inputs in \[0, 1\]\^d.*Normalize"):
        OSCBOLengthscale(budget=3)(10 * X, Y)
    with pytest.raises(ValueError, match="at least 2 observations"):
        OSCBOLengthscale(budget=3)(X[:1], Y[:1])
    with pytest.raises(ValueError, match="shapes"):
        OSCBOLengthscale(budget=3)(X, Y[:5])
    with pytest.raises(engine.NonFiniteObjectiveError):
        OSCBOLengthscale(budget=3)(X, torch.cat([Y[:5], torch.tensor([float("nan")], dtype=torch.float64)]))
    rule = OSCBOLengthscale(budget=3)
    rule(X[:3], Y[:3])
    with pytest.raises(ValueError, match="previous call's 3 points .* got 5"):
        rule(X[:5], Y[:5])
    with pytest.raises(ValueError, match="first ones changed"):
        rule(X[1:5], Y[1:5])
    rule(X[:4], Y[:4])
    rule(X[:5], Y[:5])  # round 3 of 3
    with pytest.raises(ValueError, match="budget of 3 rounds is used up"):
        rule(X[:6], Y[:6])
    with pytest.raises(KeyError, match="valid methods"):
        OSCBOLengthscale(budget=3, method="nope")
