"""TabICLv2's UCB, maximised by projected Adam on x through the network (Table S1)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from oscbo.methods.tabicl.posterior import TabICLPosterior
from oscbo.model.rounding import sqrt


class SeedUCB:
    """``mu(x) + width * sigma(x)`` of one seed's :class:`TabICLPosterior`: ``b x d`` -> ``b``."""

    def __init__(self, posterior: TabICLPosterior, width: Tensor | float) -> None:
        self.posterior = posterior
        self.width = width

    def __call__(self, x: Tensor) -> Tensor:
        mean, variance = self.posterior.predict_seed(0, x)
        return mean + self.width * sqrt(variance)


def adam_maximize(
    acquisition: SeedUCB,
    raw_points: Tensor,
    restarts: int,
    lr: float,
    steps: int,
    batch_size: int,
) -> tuple[Tensor, Tensor]:
    """Maximise a one-seed acquisition over [0, 1]^d by projected Adam on x (Table S1).

    Starts from the ``restarts`` best of the raw points and runs all restarts together (their
    values are independent: a test point sees only the context, not other test points);
    candidates go through the network ``batch_size`` at a time. Returns the best point visited.

    Args:
        acquisition: differentiable, ``b x d`` -> ``b``.
        raw_points: ``R x d`` raw samples (seeded per seed and round).

    Returns:
        The maximiser (``d``) and its acquisition value (scalar tensor).
    """

    def scores(x: Tensor) -> Tensor:
        return torch.cat([acquisition(chunk) for chunk in x.split(batch_size)])

    with torch.no_grad():
        starts = raw_points[scores(raw_points).topk(restarts).indices]
    x = starts.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([x], lr=lr)
    best_x, best_value = starts, torch.full((restarts,), -math.inf, dtype=starts.dtype, device=starts.device)

    def keep_best(values: Tensor) -> None:
        nonlocal best_x, best_value
        better = values > best_value
        best_x = torch.where(better.unsqueeze(-1), x.detach(), best_x)
        best_value = torch.where(better, values.detach(), best_value)

    for _ in range(steps):
        optimizer.zero_grad()
        values = scores(x)
        keep_best(values)
        (-values.sum()).backward()
        optimizer.step()
        with torch.no_grad():
            x.clamp_(0.0, 1.0)
    with torch.no_grad():
        keep_best(scores(x))
    winner = best_value.argmax()
    return best_x[winner].detach(), best_value[winner].detach()
