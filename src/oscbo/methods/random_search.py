"""Random search: x_t drawn uniformly on [0, 1]^d, independent of the data (not in the paper).

The negative control of the theory's claims (section 6): its queries ignore everything observed,
so its expected instantaneous regret is the same in every round and its cumulative regret grows
linearly in T. A test of sublinear regret that passes OSCBO and GP-UCB must fail it; one that
does not cannot tell a method that learns from one that does not.

Each seed draws from its own stream, named ("random-search", seed), d uniform numbers a round:
the same seed gives the same points alone and in any batch. No acquisition is optimised (the
engine's raw points are ignored). The per-round diagnostics every record holds (mu, sigma, the
interval and its coverage, L^s, L^c) are those of the shared GP under theta_0, the MLL fit on D_0,
held fixed (the base class's lengthscale): a model that does not choose x_t, recorded so that the
tables and figures read this arm as any other.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from oscbo.methods.base import Method
from oscbo.model.posterior import Posterior
from oscbo.seeding import generator
from oscbo.settings import Settings


class RandomSearch(Method):
    """x_t ~ U[0, 1]^d i.i.d., from each seed's own stream; theta_0 held fixed for the diagnostics."""

    name = "random-search"

    def __init__(self, settings: Settings, budget: int, seeds: Sequence[int]) -> None:
        super().__init__(settings, budget, seeds)
        # One stream per seed keeps a seed's points independent of its batch.
        self.streams = [generator("random-search", seed) for seed in self.seeds]

    def propose(self, model: Posterior, width: Tensor, raw_points: Tensor) -> Tensor:
        """``S x d`` uniform points, one draw of d numbers from each seed's stream; ``model``,
        ``width`` and ``raw_points`` (``S x R x d``, read for d, dtype and device only) are unused."""
        d = raw_points.shape[-1]
        points = [torch.rand(d, generator=stream, dtype=raw_points.dtype) for stream in self.streams]
        return torch.stack(points).to(raw_points.device)
