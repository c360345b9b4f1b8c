"""gymnasium's ``LunarLander`` with a lean step for :mod:`oscbo.tasks.lunar`, which imports it
where it flies (importing gymnasium and Box2D costs a process that only hands out episodes).

:meth:`Simulator.fly` is ``LunarLander.step`` for what ``LunarLander-v3`` registers (discrete
actions, no wind, not rendered), its float operations in their order and on their types; it
leaves out what changes no number. ``reset`` stays gymnasium's, and so does the ``step`` it ends
with. ``tests/tasks/test_lunar.py`` flies ``fly`` beside ``step``, step by step.
"""

from __future__ import annotations

import math
import struct

from gymnasium.envs.box2d.lunar_lander import (
    FPS,
    LEG_DOWN,
    MAIN_ENGINE_POWER,
    MAIN_ENGINE_Y_LOCATION,
    SCALE,
    SIDE_ENGINE_AWAY,
    SIDE_ENGINE_HEIGHT,
    SIDE_ENGINE_POWER,
    VIEWPORT_H,
    VIEWPORT_W,
    LunarLander,
)

# constants that ``step`` computes on each call, computed here by the same expressions
MAIN_ENGINE_OFFSET = MAIN_ENGINE_Y_LOCATION / SCALE
#: ``direction * SIDE_ENGINE_AWAY / SCALE`` of action 1 (left, direction -1) and 3 (right, +1)
SIDE_ENGINE_OFFSET = {action: (action - 2) * SIDE_ENGINE_AWAY / SCALE for action in (1, 3)}
HALF_WIDTH = VIEWPORT_W / SCALE / 2
HALF_HEIGHT = VIEWPORT_H / SCALE / 2
#: the state rounded to float32 as ``np.array(state, dtype=np.float32)`` rounds it (C's float
#: conversion, round to nearest even), read back as Python floats
FLOAT32 = struct.Struct("8f")


class Simulator(LunarLander):
    """gymnasium's ``LunarLander`` with :meth:`fly`, its ``step`` as this task takes it."""

    def fly(self, action: int) -> tuple[tuple[float, ...], float, bool]:
        """``step(action)``: the observation (float32 values as Python floats), the reward (a
        Python float) and whether the episode ended.

        Its float operations are ``step``'s, in its order, on the same types: doubles from Box2D's
        float32 (a ``b2Vec2``'s coordinates, an angle) and from the generator. What it leaves out
        changes no number: the asserts and the action's check (the controller's action is 0 to
        3), the wind and continuous-action branches (off in ``LunarLander-v3``), particles (made
        only when rendering), products by ``m_power`` and ``s_power`` (1.0 where they are made:
        exact), and reading the lander's position twice. A constant that ``step`` computes on each
        call is computed once, by the same expression (this module's constants). The shaping takes
        ``math.sqrt`` where ``step`` takes ``np.sqrt`` of a Python float: both are IEEE 754's
        correctly rounded square root of a double. The observation is :data:`FLOAT32`'s rounding
        of the state; a state past float32's range would make it raise where NumPy gives inf (a
        failure, never a different number).
        """
        lander = self.lander
        angle = lander.angle
        tip = (math.sin(angle), math.cos(angle))
        side = (-tip[1], tip[0])
        uniform = self.np_random.uniform
        dispersion = (uniform(-1.0, +1.0) / SCALE, uniform(-1.0, +1.0) / SCALE)

        m_power = 0.0
        if action == 2:  # the main engine
            m_power = 1.0
            ox = tip[0] * (MAIN_ENGINE_OFFSET + 2 * dispersion[0]) + side[0] * dispersion[1]
            oy = -tip[1] * (MAIN_ENGINE_OFFSET + 2 * dispersion[0]) - side[1] * dispersion[1]
            position = lander.position
            impulse_pos = (position.x + ox, position.y + oy)
            lander.ApplyLinearImpulse((-ox * MAIN_ENGINE_POWER, -oy * MAIN_ENGINE_POWER), impulse_pos, True)

        s_power = 0.0
        if action == 1 or action == 3:  # a side engine: 1 left, 3 right
            s_power = 1.0
            away = SIDE_ENGINE_OFFSET[action]
            ox = tip[0] * dispersion[0] + side[0] * (3 * dispersion[1] + away)
            oy = -tip[1] * dispersion[0] - side[1] * (3 * dispersion[1] + away)
            position = lander.position
            impulse_pos = (
                position.x + ox - tip[0] * 17 / SCALE,
                position.y + oy + tip[1] * SIDE_ENGINE_HEIGHT / SCALE,
            )
            lander.ApplyLinearImpulse((-ox * SIDE_ENGINE_POWER, -oy * SIDE_ENGINE_POWER), impulse_pos, True)

        self.world.Step(1.0 / FPS, 6 * 30, 2 * 30)

        position = lander.position
        velocity = lander.linearVelocity
        state = (
            (position.x - HALF_WIDTH) / HALF_WIDTH,
            (position.y - (self.helipad_y + LEG_DOWN / SCALE)) / HALF_HEIGHT,
            velocity.x * HALF_WIDTH / FPS,
            velocity.y * HALF_HEIGHT / FPS,
            lander.angle,
            20.0 * lander.angularVelocity / FPS,
            1.0 if self.legs[0].ground_contact else 0.0,
            1.0 if self.legs[1].ground_contact else 0.0,
        )
        shaping = (
            -100 * math.sqrt(state[0] * state[0] + state[1] * state[1])
            - 100 * math.sqrt(state[2] * state[2] + state[3] * state[3])
            - 100 * abs(state[4])
            + 10 * state[6]
            + 10 * state[7]
        )
        reward = 0.0 if self.prev_shaping is None else shaping - self.prev_shaping
        self.prev_shaping = shaping
        reward -= m_power * 0.30
        reward -= s_power * 0.03

        terminated = False
        if self.game_over or abs(state[0]) >= 1.0:
            terminated = True
            reward = -100.0
        if not lander.awake:
            terminated = True
            reward = +100.0
        return FLOAT32.unpack(FLOAT32.pack(*state)), reward, terminated
