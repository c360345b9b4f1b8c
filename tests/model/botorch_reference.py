"""The GP's UCB as a BoTorch acquisition function: the independent reference the acquisition
tests compare with (``optimize_acqf`` runs on it). Test-only: the engine scores its own posteriors
(:func:`oscbo.model.acquisition.ucb`) and needs no BoTorch model."""

from __future__ import annotations

import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from botorch.utils.transforms import t_batch_mode_transform
from gpytorch.distributions import MultivariateNormal
from torch import Tensor

from oscbo.model.acquisition import ucb
from oscbo.model.gp import GaussianProcess


class BoTorchGP(Model):
    """A :class:`GaussianProcess` behind BoTorch's model API, for ``q = 1`` candidates."""

    num_outputs = 1

    def __init__(self, gp: GaussianProcess) -> None:
        super().__init__()
        self.gp = gp

    @property
    def batch_shape(self) -> torch.Size:
        return self.gp.batch_shape

    def posterior(self, X: Tensor, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs):
        if X.shape[-2] != 1:
            raise NotImplementedError("q = 1 candidates only")
        mean, variance = self.gp.predict(X)
        if observation_noise:
            variance = variance + self.gp.noise_var
        posterior = GPyTorchPosterior(MultivariateNormal(mean, variance.unsqueeze(-1)))
        return posterior_transform(posterior) if posterior_transform is not None else posterior


class WidthUCB(AnalyticAcquisitionFunction):
    """``mu + width * sigma`` (latent sigma) through BoTorch, a width per seed."""

    def __init__(self, gp: GaussianProcess, width: Tensor | float) -> None:
        super().__init__(model=BoTorchGP(gp))
        self.register_buffer("width", torch.as_tensor(width))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        posterior = self.model.posterior(X)
        return ucb(posterior.mean.squeeze(-1).squeeze(-1), posterior.variance.squeeze(-1).squeeze(-1), self.width)
