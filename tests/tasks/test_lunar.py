"""Lunar Lander 12-D: the controller is gymnasium's heuristic at the default weights, and the task's
returns are those of a plain ``gymnasium.make`` loop, bit for bit."""

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.envs.box2d.lunar_lander import heuristic
from helpers import benchmark_module

from oscbo.tasks.base import build_task
from oscbo.tasks.lunar import (
    HEURISTIC_WEIGHTS,
    EngineDraws,
    controller_action,
    episode_rewards,
    float32_controller,
    mean_reward,
)
from oscbo.tasks.lunar_simulator import Simulator

#: The plain gymnasium loop the task is held to (benchmarks/plain_lunar.py, shared with its benchmark).
plain_lunar = benchmark_module("plain_lunar")


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


def test_controller_keeps_the_float32_arithmetic_of_the_plain_one(plain_lunar):
    rng = np.random.default_rng(1)
    for state, w in zip(rng.normal(0, 1, size=(2000, 8)).astype(np.float32), rng.uniform(0, 2, size=(2000, 12))):
        state[6:] = rng.integers(0, 2, size=2)
        assert controller_action(state, w.tolist()) == plain_lunar.plain_controller(state, w.tolist())
    # where float32 and float64 arithmetic part: a weight cast to float32 where it meets the
    # state (w[10], the clipped w[2]), but w[8] against w[11] compared as Python floats
    below = float(np.nextafter(0.05, 0))
    falling, rising = (np.array([0, 0, 0, vy, 0, 0, 1, 0], dtype=np.float32) for vy in (-1, 1))  # a leg down
    cases = [
        (falling, [0.0] * 9 + [0.05, below, 0.05], 0),
        (rising, [0.0] * 8 + [0.1, 0, 0, float(np.nextafter(0.1, 0))], 1),
        (np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32), [1.0, 0, 0.1, 0, 1] + [0.0] * 6 + [0.1 - 1e-12], 0),
    ]
    for state, w, action in cases:
        assert controller_action(state, w) == plain_lunar.plain_controller(state, w) == action


@pytest.mark.parametrize("workers", [1, 2])
def test_task_returns_the_plain_loops_mean_reward_bit_for_bit(workers, plain_lunar, processes):
    rng = np.random.default_rng(0)
    weights = [HEURISTIC_WEIGHTS, *rng.uniform(0, 2, size=(3, 12)).tolist()]
    for max_steps in (1000, 60):  # 60: episodes cut by the step cap
        task = build_task("lunar12", episodes=3, max_steps=max_steps, workers=workers)
        values = task(torch.tensor(weights, dtype=torch.float64) / 2)  # normalised: w / 2 exactly
        assert values.tolist() == [plain_lunar.plain_mean_reward(w, 3, max_steps) for w in weights]


def near_heuristic(count):
    """Late-round points: the heuristic's weights plus N(0, 0.1) noise (benchmarks/lunar_rounds.py)."""
    noise = np.random.default_rng(0).normal(0, 0.1, size=(count, 12))
    return np.clip(np.asarray(HEURISTIC_WEIGHTS) + noise, 0, 2).tolist()


def test_float32_controller_acts_as_the_numpy_one_on_float32_states():
    rng = np.random.default_rng(2)
    states = rng.normal(0, 1, size=(20000, 8)).astype(np.float32)
    states[:, 6:] = rng.integers(0, 2, size=(20000, 2)) * (rng.random((20000, 1)) < 0.3)  # mostly airborne
    states[:2000, :6] *= np.float32(1e-3)  # near the controller's thresholds
    for index, (state, w) in enumerate(zip(states, rng.uniform(0, 2, size=(20000, 12)))):
        w = w.tolist() if index % 4 else HEURISTIC_WEIGHTS
        assert float32_controller(w)(state.tolist()) == controller_action(state, w)
    # the cases where float32 and float64 part (test above): the same actions
    below = float(np.nextafter(0.05, 0))
    cases = [
        ([0, 0, 0, -1, 0, 0, 1, 0], [0.0] * 9 + [0.05, below, 0.05], 0),
        ([0, 0, 0, 1, 0, 0, 1, 0], [0.0] * 8 + [0.1, 0, 0, float(np.nextafter(0.1, 0))], 1),
        ([1, 0, 0, 0, 0, 0, 0, 0], [1.0, 0, 0.1, 0, 1] + [0.0] * 6 + [0.1 - 1e-12], 0),
        ([-1, 0, 0, 0, 0, 0, 0, 0], [1.0, 0, 0.1, 0, 1] + [0.0] * 6 + [0.1 - 1e-12], 0),  # clipped below
    ]
    for state, w, action in cases:
        state32 = np.array(state, dtype=np.float32)
        assert float32_controller(w)([float(v) for v in state]) == controller_action(state32, w) == action


def test_fly_is_gymnasiums_step_bit_for_bit_in_crashes_landings_and_hovering():
    """Two simulators on the same seeds, one stepped by gymnasium's ``step``, one flown by ``fly``,
    each step's observation, reward and end compared; actions from the controller, some random."""
    rng = np.random.default_rng(3)
    stepped, flown = Simulator(), Simulator()
    endings = set()
    flights = [(HEURISTIC_WEIGHTS, 0, 1000), *((w, seed, 400) for w in near_heuristic(2) for seed in range(3))]
    for weights, seed, max_steps in flights:
        observation, _ = stepped.reset(seed=seed)
        state, _ = flown.reset(seed=seed)
        state, act = state.tolist(), float32_controller(weights)
        for _ in range(max_steps):
            assert list(state) == observation.tolist()
            action = act(state) if rng.random() < 0.9 else int(rng.integers(4))
            observation, reward, terminated, _, _ = stepped.step(action)
            state, flown_reward, flown_terminated = flown.fly(action)
            assert (flown_reward, flown_terminated) == (float(reward), terminated)
            if terminated:
                endings.add(f"{reward:+}")
                break
        else:
            endings.add("step cap")
    assert endings == {"-100", "+100", "step cap"}  # a crash, a landing (the lander asleep), hovering


def test_task_returns_the_plain_loops_mean_reward_on_late_round_points(plain_lunar, processes):
    """Points near the heuristic (they crash, land or hover to the step cap) on 1 and 2 workers."""
    points = [list(HEURISTIC_WEIGHTS), *near_heuristic(2)]
    endings = {"cap" if len(r) == 1000 else r[-1] for w in points for r in (episode_rewards(w, s) for s in range(4))}
    assert endings == {-100.0, 100.0, "cap"}
    for episodes, workers in [(4, 1), (2, 2), (4, 2)]:
        task = build_task("lunar12", episodes=episodes, workers=workers)
        values = task(torch.tensor(points, dtype=torch.float64) / 2)
        assert values.tolist() == [plain_lunar.plain_mean_reward(w, episodes) for w in points]


def test_engine_draws_are_the_generators_scalar_draws_and_refuse_any_other():
    draws = EngineDraws(np.random.default_rng(7), 2000)
    scalar = np.random.default_rng(7)
    assert [draws.uniform(-1.0, +1.0) for _ in range(2000)] == [scalar.uniform(-1.0, +1.0) for _ in range(2000)]
    with pytest.raises(StopIteration):  # an episode's steps draw two a step, at most 2 * max_steps
        draws.uniform(-1.0, 1.0)
    with pytest.raises(ValueError, match=r"uniform\(0, 1\)"):
        EngineDraws(np.random.default_rng(7), 2).uniform(0, 1)


def test_task_batches_points_and_workers_agree(processes):
    task = build_task("lunar12", episodes=2, max_steps=200)
    assert task.dim == 12 and task.optimal_value is None
    x = torch.rand(2, 1, 12, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    values = task(x)
    assert values.shape == (2, 1) and torch.isfinite(values).all()
    pooled = build_task("lunar12", episodes=2, max_steps=200, workers=2)
    assert torch.equal(values, pooled(x))
    assert torch.equal(values[1], pooled(x[1]))  # one point: its episodes shared by the workers
    default = torch.tensor(HEURISTIC_WEIGHTS, dtype=torch.float64) / 2  # normalised coordinates
    assert task(default).item() == pytest.approx(mean_reward(HEURISTIC_WEIGHTS, episodes=2, max_steps=200))


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="episodes"):
        build_task("lunar12", episodes=0)
    with pytest.raises(ValueError, match="seeds_count"):
        build_task("lunar12", seeds_count=3)
