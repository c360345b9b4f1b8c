"""The TabICLv2 method: one regressor per seed and round, its UCB maximised by Adam on x."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from oscbo.methods.base import Method, Observations
from oscbo.methods.tabicl.checkpoint import CHECKPOINT_FILE, require_checkpoint
from oscbo.seeding import stable_seed
from oscbo.settings import Settings

if TYPE_CHECKING:
    from tabicl._model.tabicl import TabICL as TabICLNetwork

    from oscbo.methods.tabicl.acquisition import SeedUCB
    from oscbo.methods.tabicl.posterior import TabICLPosterior

# The modules that import tabicl (and scikit-learn under it: 2 s) are imported where the method
# first uses them: a pack whose TabICLv2 has no checkpoint stops at the constructor without them.


class TabICL(Method):
    """TabICLv2 with UCB beta = 2, maximised by Adam on x."""

    name = "tabicl"

    def __init__(self, settings: Settings, budget: int, seeds: Sequence[int]) -> None:
        super().__init__(settings, budget, seeds)
        if settings.acquisition != "ucb":
            raise ValueError(f"TabICL supports acquisition 'ucb' only, got {settings.acquisition!r}")
        self.checkpoint = require_checkpoint(settings)  # fails here, before any round
        self.loaded: tuple[TabICLNetwork, dict, Path] | None = None
        self.round = 0

    def start(self, data: Observations) -> None:
        """No lengthscale to fit."""

    def lengthscale(self, t: int, data: Observations) -> Tensor:
        """NaN (``S x 1``): TabICL has no lengthscale."""
        self.round = t
        return torch.full((len(self.seeds), 1), math.nan, dtype=data.X.dtype, device=data.X.device)

    def posterior(self, data: Observations, theta: Tensor) -> TabICLPosterior:
        """Fit one regressor per seed on D_{t-1}, its ensemble seeded by (seed, round)."""
        from oscbo.methods.tabicl.posterior import TabICLPosterior
        from oscbo.methods.tabicl.regressor import Regressor

        y = data.standardized()
        regressors = []
        for i, seed in enumerate(self.seeds):
            regressor = Regressor(
                model_path=self.checkpoint,
                allow_auto_download=self.settings.tabicl_allow_download,
                checkpoint_version=CHECKPOINT_FILE,
                device=data.X.device,
                random_state=stable_seed("tabicl", seed, self.round),
            )
            regressor.loaded = self.loaded
            regressor.fit(data.X[i].cpu().numpy(), y[i].cpu().numpy())
            if self.loaded is None:
                regressor.model_.requires_grad_(False)  # gradients flow to x only
                self.loaded = (regressor.model_, regressor.model_config_, regressor.model_path_)
            regressors.append(regressor)
        return TabICLPosterior(data.X, y, regressors)

    def acquisition(self, model: TabICLPosterior, width: Tensor, index: int) -> SeedUCB:
        """UCB of seed ``index`` on its own regressor."""
        from oscbo.methods.tabicl.acquisition import SeedUCB

        return SeedUCB(model.seed(index), width[index])

    def propose(self, model: TabICLPosterior, width: Tensor, raw_points: Tensor) -> Tensor:
        """x_t of each seed by Adam on x (Table S1), not BoTorch's L-BFGS-B; one seed at a time,
        since each seed has its own regressor."""
        from oscbo.methods.tabicl.acquisition import adam_maximize

        settings = self.settings
        return torch.stack(
            [
                adam_maximize(
                    self.acquisition(model, width, i),
                    raw_points[i],
                    settings.acq_restarts,
                    settings.tabicl_lr,
                    settings.tabicl_steps,
                    settings.tabicl_batch_size,
                )[0]
                for i in range(len(raw_points))
            ]
        )
