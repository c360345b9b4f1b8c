"""What the engine needs of a round's model: the :class:`Posterior` protocol.

Three models fill it: the GP (:class:`oscbo.model.gp.GaussianProcess`), SCGP's pair of GPs
(:class:`oscbo.methods.scgp.CalibratedGP`) and TabICLv2's predictive distributions
(:class:`oscbo.methods.tabicl.posterior.Posterior`). A method's :meth:`~oscbo.methods.base.Method.posterior`
returns one; the engine asks it for the mean and variance at the query (the record's ``mu`` and
``sigma``, the diagnostics) and for its jitter escalations; the acquisition scores its
:meth:`predict` of the seeds still running.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch
from torch import Tensor


@runtime_checkable
class Posterior(Protocol):
    """The posterior of ``S`` seeds that chooses x_t.

    Attributes:
        train_X: ``S x n x d`` observed inputs in [0, 1]^d.
        train_y: ``S x n`` observed targets, standardised with the data seen so far.
    """

    train_X: Tensor
    train_y: Tensor

    @property
    def batch_shape(self) -> torch.Size:
        """``S``."""

    @property
    def jitter_events(self) -> Tensor:
        """``S`` Cholesky jitter escalations spent building it (0 for a model without one)."""

    def predict(self, x: Tensor, seeds: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Latent mean and variance at ``... x S x m x d`` points (``seeds``: only those ``A`` seeds,
        ``... x A x m x d``): each ``... x S x m`` (``... x A x m``)."""

    def seed(self, index: int) -> Posterior:
        """The posterior of one seed (batch shape 1)."""
