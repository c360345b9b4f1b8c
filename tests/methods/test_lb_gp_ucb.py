"""LB-GP-UCB: the candidate grid, the regret-bound selection, the elimination test, the floor."""

import math

import numpy as np
import pytest
import torch

from oscbo import run as engine
from oscbo.methods.base import Feedback, Observations, build_method
from oscbo.methods.lb_gp_ucb import LBGPUCB, Candidate, eliminate, regret_bound
from oscbo.settings import Settings

NOISE = 0.01


def started(theta0, d=3, seeds=(0,)):
    """An LB-GP-UCB after start on small data, with theta_0 staged to a known value."""
    g = torch.Generator().manual_seed(0)
    X = torch.rand(len(seeds), 8, d, generator=g, dtype=torch.float64)
    y = torch.sin(6 * X).sum(-1)
    method = build_method("lb-gp-ucb", Settings(), budget=100, seeds=list(seeds))
    data = Observations(X, y)
    method.start(data)
    method.theta0 = torch.full((len(seeds), 1), theta0, dtype=torch.float64)
    return method, data


def indices(method, seed=0):
    return [c.index for c in method.live[seed]]


def by_hand(T, theta, d, C=0.01, B=1.0):
    gamma = theta**-d * math.log(T) ** (d + 1)
    return C * math.sqrt(T * gamma) * (math.sqrt(gamma) + B)


def test_registry_floor_and_constants():
    method, _ = started(0.5)
    assert isinstance(method, LBGPUCB)
    assert method.settings.lengthscale_bounds == (1e-4, 10.0)
    assert (LBGPUCB.C, LBGPUCB.B, LBGPUCB.T0, LBGPUCB.DELTA) == (0.01, 1.0, 5, 0.1)


def test_grid_grows_with_g_t():
    """q(i) = theta_0 e^(-i/3) is in Theta_t iff i <= 3 ln g_t: g = 1 to t = 5, then sqrt(t)."""
    method, data = started(0.5)
    expected = {1: 1, 5: 1, 6: 3, 20: 5, 100: 7}  # 1 + floor(1.5 ln t) after t0
    for t, count in expected.items():
        method.lengthscale(t, data)
        assert indices(method) == list(range(count)), t
    assert count == 1 + math.floor(1.5 * math.log(100))
    grid = torch.cat([c.lengthscale for c in method.live[0]])
    assert torch.allclose(grid, 0.5 * torch.exp(-torch.arange(7, dtype=torch.float64) / 3))
    assert grid[0].item() == 0.5  # q(0) is theta_0 itself
    assert (grid >= 0.5 / 10 - 1e-15).all() and 0.5 * math.exp(-7 / 3) < 0.5 / 10


def test_grid_stops_at_theta_min():
    method, data = started(2e-4)
    method.lengthscale(100, data)
    # 2e-4 e^(-i/3) >= 1e-4 iff i <= 3 ln 2 = 2.08, although g_100 would allow i <= 6
    assert indices(method) == [0, 1, 2]
    assert min(c.lengthscale.item() for c in method.live[0]) >= 1e-4
    method.theta0 = torch.full((1, 1), 1e-4, dtype=torch.float64)  # theta_0 clipped to the floor
    method.live, method.created = [[]], [0]
    method.lengthscale(100, data)
    assert indices(method) == [0]


def test_selection_is_the_argmin_of_the_regret_bound():
    method, data = started(0.5)
    method.lengthscale(20, data)  # Theta_20 = q(0..4)
    plays = [9, 3, 2, 1, 1]
    for c, count in zip(method.live[0], plays):
        c.rows = list(range(count))
    bounds = [by_hand(count + 1, 0.5 * math.exp(-i / 3), 3) for i, count in enumerate(plays)]
    for c, count, bound in zip(method.live[0], plays, bounds):
        assert regret_bound(count + 1, c.lengthscale.tolist(), 3, 0.01, 1.0) == pytest.approx(bound, rel=1e-12)
    theta = method.lengthscale(20, data)
    best = int(np.argmin(bounds))
    assert best not in (0, 4)  # neither the most-played nor the shortest: a real trade-off
    assert method.state()["candidate_index"].tolist() == [best]
    assert theta.item() == pytest.approx(0.5 * math.exp(-best / 3), rel=1e-15)
    assert method.state()["candidates_alive"].tolist() == [5]
    # an unplayed candidate has R(1) = 0; between two, the first (longest) is played
    method.live[0][2].rows = []
    method.live[0][3].rows = []
    method.lengthscale(20, data)
    assert method.chosen[0].index == 2


def candidate(index, y_rows, width):
    return Candidate(index, torch.ones(1), rows=list(y_rows), widths=[width] * len(y_rows))


def test_elimination_by_hand_released_rule():
    """U(theta) = mean y + mean w + sqrt(xi/|S|) against max L, L = mean y - sqrt(xi/|S|), with
    every number worked out by hand: t = 13, two live candidates, sigma^2 = 0.01, delta = 0.1, so
    xi = 2 (0.01) ln(2 pi^2 13^2 / 0.6) = 0.02 ln(5559.63) = 0.172467."""
    y = [1.0] * 6 + [-1.0] * 6 + [0.8]
    r6 = 0.169542  # sqrt(0.172467 / 6): the radius of six plays
    r1 = 0.415291  # sqrt(0.172467): the radius of one play
    # good: L = 1 - r6 = 0.830458. bad (six plays of -1): U = -1 + w + r6 < 0.830458 iff w < 1.660916
    good = candidate(0, range(6), 0.01)
    for width, kept in ((1.6609, [0]), (1.6610, [0, 1])):
        assert [c.index for c in eliminate([good, candidate(1, range(6, 12), width)], y, 13, NOISE, 0.1)] == kept
    assert 2 - 2 * r6 == pytest.approx(1.660916, abs=1e-6)
    # one play of y = 0.8 with a narrow interval (w = 0.01):
    #   released rule: U = 0.8 + 0.01 + r1 = 1.225291 >= 0.830458: kept;
    #   the rule it replaced, mean y - r + 2 mean w = 0.8 - 0.415291 + 0.02 = 0.404709 < 0.830458,
    #   would have eliminated it on the strength of a single observation.
    assert [c.index for c in eliminate([good, candidate(2, [12], 0.01)], y, 13, NOISE, 0.1)] == [0, 2]
    assert 0.8 + 0.01 + r1 > 1 - r6 > 0.8 - r1 + 2 * 0.01  # the two rules' sides, as worked out above
    # y = 0.2 instead: U = 0.2 + 0.01 + 0.415291 = 0.625291 < 0.830458: eliminated
    y[12] = 0.2
    assert [c.index for c in eliminate([good, candidate(2, [12], 0.01)], y, 13, NOISE, 0.1)] == [0]
    # the best lower bound belongs to a candidate that survives whatever its width: U >= L
    assert [c.index for c in eliminate([candidate(0, range(6), 0.0), candidate(1, [12], 0.0)], y, 13, NOISE, 0.1)] == [
        0
    ]


def test_elimination_radius_counts_the_live_candidates():
    """xi grows with |Theta_t|: three live candidates, t = 13, xi = 0.02 ln(3 pi^2 169 / 0.6) = 0.180576,
    sqrt(xi / 6) = 0.173482. bad (six plays of -1, width w) goes iff -1 + w + 0.173482 < 1 - 0.173482,
    i.e. w < 1.653036 (with two live candidates the threshold was 1.660916)."""
    y = [1.0] * 6 + [-1.0] * 6 + [1.0] * 6
    good, twin = candidate(0, range(6), 0.0), candidate(2, range(12, 18), 0.0)
    for width, kept in ((1.6530, [0, 2]), (1.6531, [0, 1, 2])):
        bad = candidate(1, range(6, 12), width)
        assert [c.index for c in eliminate([good, bad, twin], y, 13, NOISE, 0.1)] == kept


def test_no_elimination_until_every_live_candidate_is_played():
    y = [1.0] * 6 + [-1.0] * 6
    good, bad, fresh = candidate(0, range(6), 0.0), candidate(1, range(6, 12), 0.0), candidate(2, [], 0.0)
    assert [c.index for c in eliminate([good, bad, fresh], y, 13, NOISE, 0.1)] == [0, 1, 2]
    fresh.rows, fresh.widths = [0], [1.0]  # once played, the test runs: bad goes, fresh (wide) stays
    assert [c.index for c in eliminate([good, bad, fresh], y, 13, NOISE, 0.1)] == [0, 2]


def test_observe_files_the_play_and_eliminates():
    """observe adds (row, sqrt(beta) sigma_{t-1}(x_t)) to the candidate played, then tests."""
    method, data = started(0.5)
    method.lengthscale(6, data)  # Theta_6 = q(0..2)
    y = data.standardized()[0]
    order = torch.argsort(y, descending=True).tolist()
    q0, q1, q2 = method.live[0]
    q0.rows, q0.widths = order[:4], [1.0] * 4  # the best observations, wide intervals
    q1.rows, q1.widths = order[-3:], [0.0] * 3  # the worst ones, no width
    theta = method.lengthscale(7, data)
    assert method.chosen[0] is q2  # unplayed, R = 0
    model = method.posterior(data, theta)
    x = torch.full((1, 1, 3), 0.5, dtype=torch.float64)
    grown = Observations(torch.cat([data.X, x], 1), torch.cat([data.y, data.y[:, order[0:1]]], 1))
    method.observe(7, grown, Feedback(torch.zeros(1), torch.zeros(1)))  # unused by LB-GP-UCB
    assert q2.rows == [8]
    assert q2.widths[0] == pytest.approx(math.sqrt(2) * model.predict(x)[1].sqrt().item(), rel=1e-12)
    assert [c.index for c in method.live[0]] == [0, 2]  # q1 out; q2 has one top y and its width


def bo_rows(result, seed):
    return result.tables[seed].query("phase == 'bo'")


@pytest.mark.parametrize("task", ["hartmann3", "levy5", "hartmann6"])
def test_the_first_rounds_play_theta_0_alone(task):
    """Rounds 1..t0 play θ₀, the only candidate (every column set: tests/methods/test_contract.py)."""
    result = engine.run(task, "lb-gp-ucb", [0, 1], budget=4, n_init=5)
    for seed in (0, 1):
        bo = bo_rows(result, seed)
        assert (bo["candidate_index"] == 0).all() and (bo["candidates_alive"] == 1).all()
        assert bo["lengthscale_0"].nunique() == 1


def test_new_candidates_are_played_in_grid_order():
    batch = engine.run("hartmann3", "lb-gp-ucb", [0, 1, 2], budget=8, n_init=5)
    for seed in (0, 1, 2):
        bo = bo_rows(batch, seed)
        # round 6 adds q(1), q(2) (3 ln sqrt(6) = 2.69): played in order, no test before both are
        assert bo["candidate_index"].tolist()[5:7] == [1, 2]
        assert bo["candidates_alive"].tolist()[5:7] == [3, 3]
        theta0 = bo["lengthscale_0"].iloc[0]
        assert np.allclose(bo["lengthscale_0"], theta0 * np.exp(-bo["candidate_index"] / 3), rtol=1e-14)
