"""Lunar Lander's objective as a gymnasium user writes it: the reference that ``oscbo.tasks.lunar``
is held to, bit for bit (``tests/tasks/test_lunar.py``), and timed against (``benchmarks/lunar.py``).

It shares no code with the task: the 12-weight heuristic written plainly on NumPy scalars, as
gymnasium's own heuristic is, flown in the registered, wrapped ``LunarLander-v3``.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from oscbo.tasks.lunar import MAX_STEPS


def plain_controller(s, w):
    """The 12-weight heuristic written plainly, on NumPy scalars as gymnasium's heuristic is."""
    angle_target = float(np.clip(s[0] * w[0] + s[2] * w[1], -w[2], w[2]))
    hover_target = w[3] * abs(s[0])
    angle_todo = (angle_target - s[4]) * w[4] - s[5] * w[5]
    hover_todo = (hover_target - s[1]) * w[6] - s[3] * w[7]
    if s[6] or s[7]:
        angle_todo = w[8]
        hover_todo = -s[3] * w[9]
    if hover_todo > abs(angle_todo) and hover_todo > w[10]:
        return 2
    if angle_todo < -w[11]:
        return 3
    if angle_todo > w[11]:
        return 1
    return 0


def plain_mean_reward(w, episodes, max_steps=MAX_STEPS):
    """The objective as a gymnasium user writes it: the registered, wrapped environment."""
    env = gymnasium.make("LunarLander-v3", max_episode_steps=max_steps)
    total = 0.0
    for seed in range(episodes):
        state, _ = env.reset(seed=seed)
        while True:
            state, reward, terminated, truncated, _ = env.step(plain_controller(state, w))
            total += float(reward)
            if terminated or truncated:
                break
    return total / episodes
