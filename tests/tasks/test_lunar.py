"""Lunar Lander 12-D: the controller is gymnasium's heuristic at the default weights."""

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.envs.box2d.lunar_lander import heuristic

from oscbo.tasks.base import build_task
from oscbo.tasks.lunar import HEURISTIC_WEIGHTS, controller_action, mean_reward


def test_default_weights_act_as_gymnasiums_heuristic():
    env = gymnasium.make("LunarLander-v3")
    rng = np.random.default_rng(0)
    compared = 0
    for seed in range(3):
        state, _ = env.reset(seed=seed)
        for _ in range(1000):
            action = heuristic(env, state)
            assert controller_action(state, HEURISTIC_WEIGHTS) == action
            # also off the heuristic's own path: a random action visits other states
            state, _, terminated, truncated, _ = env.step(action if rng.random() < 0.7 else int(rng.integers(4)))
            compared += 1
            if terminated or truncated:
                break
    for state in rng.normal(0, 1, size=(500, 8)):
        state[6:] = rng.integers(0, 2, size=2)
        assert controller_action(state, HEURISTIC_WEIGHTS) == heuristic(env, state)
    assert compared > 100


def test_objective_is_the_heuristics_mean_reward_and_deterministic():
    env = gymnasium.make("LunarLander-v3", max_episode_steps=1000)
    expected = 0.0
    for seed in range(4):
        state, _ = env.reset(seed=seed)
        while True:
            state, reward, terminated, truncated, _ = env.step(heuristic(env, state))
            expected += reward
            if terminated or truncated:
                break
    assert mean_reward(HEURISTIC_WEIGHTS, episodes=4) == pytest.approx(expected / 4, abs=1e-9)
    assert mean_reward(HEURISTIC_WEIGHTS, episodes=4) == mean_reward(HEURISTIC_WEIGHTS, episodes=4)


def test_task_batches_points_and_workers_agree():
    task = build_task("lunar12", episodes=2, max_steps=200)
    assert task.dim == 12 and task.optimal_value is None
    x = torch.rand(2, 1, 12, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    values = task(x)
    assert values.shape == (2, 1) and torch.isfinite(values).all()
    parallel = build_task("lunar12", episodes=2, max_steps=200, workers=2)(x)
    assert torch.equal(values, parallel)
    default = torch.tensor(HEURISTIC_WEIGHTS, dtype=torch.float64) / 2  # normalised coordinates
    assert task(default).item() == pytest.approx(mean_reward(HEURISTIC_WEIGHTS, episodes=2, max_steps=200))


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="episodes"):
        build_task("lunar12", episodes=0)
    with pytest.raises(ValueError, match="seeds_count"):
        build_task("lunar12", seeds_count=3)
