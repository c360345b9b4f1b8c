"""TabICL's predictive distributions as a :class:`~oscbo.model.posterior.Posterior`: the moments of its
predicted quantile function, differentiable in x."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tabicl import TabICLRegressor
from tabicl._model.quantile_dist import QuantileDistribution
from torch import Tensor

from oscbo.methods.tabicl.preprocessing import preprocess


def quantile_moments(quantiles: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and variance of the distribution with these quantiles at levels k / (K + 1).

    The quantile function is linear between the K quantiles and has tabicl's exponential
    tails beyond them (its ``QuantileDistribution``, the distribution TabICL predicts).

    Args:
        quantiles: ``... x K``, non-decreasing along the last dimension.

    Returns:
        mean and variance, each ``...``.
    """
    distribution = QuantileDistribution(quantiles)
    return distribution.mean(), distribution.variance()


class TabICLPosterior:
    """TabICL's predictive distributions of ``S`` seeds, differentiable in x.

    A :class:`~oscbo.model.posterior.Posterior` (``jitter_events`` always 0).

    Args:
        X: ``S x n x d`` inputs; y: ``S x n`` standardised targets.
        regressors: one fitted :class:`TabICLRegressor` per seed, on (X[i], y[i]).
    """

    def __init__(self, X: Tensor, y: Tensor, regressors: Sequence[TabICLRegressor]) -> None:
        self.train_X = X
        self.train_y = y
        self.regressors = list(regressors)

    def seed(self, index: int) -> TabICLPosterior:
        part = slice(index, index + 1)
        return TabICLPosterior(self.train_X[part], self.train_y[part], self.regressors[part])

    @property
    def batch_shape(self) -> torch.Size:
        return self.train_X.shape[:-2]

    @property
    def jitter_events(self) -> Tensor:
        return torch.zeros(len(self.regressors), dtype=torch.int64)

    def quantiles(self, index: int, x: Tensor) -> Tensor:
        """Seed ``index``'s predicted quantiles of y at ``m x d`` points: ``m x K``.

        The wrapper's ``predict(x, output_type="raw_quantiles")``, in torch: its test-side
        preprocessing, each ensemble view through the network's training-mode sub-forwards
        (``no_grad``-free; dropout is off in eval mode), the views' sorted quantiles averaged,
        then un-scaled.
        """
        regressor = self.regressors[index]
        ensemble, network = regressor.ensemble_generator_, regressor.model_
        device = next(network.parameters()).device
        x = x.to(device)[:, torch.as_tensor(ensemble.unique_filter_.features_to_keep_, device=device)]
        y_train = torch.as_tensor(ensemble.y_, dtype=torch.float32, device=device)
        n = len(y_train)
        views = []
        for norm_method, configs in ensemble.ensemble_configs_.items():
            pipeline = ensemble.preprocessors_[norm_method]
            table = torch.cat(
                [torch.as_tensor(pipeline.X_transformed_, dtype=x.dtype, device=device), preprocess(pipeline, x)]
            )
            tables = torch.stack([table[:, list(shuffle)] for shuffle, _ in configs]).float()
            targets = y_train.expand(len(configs), n)
            embeddings = network.col_embedder._train_forward(tables, targets, None, False)
            rows = network.row_interactor._train_forward(embeddings, None)
            raw = network.icl_predictor._icl_predictions(rows, targets)[:, n:]
            views.append(raw.sort(dim=-1).values)  # predict_stats's QuantileToDistribution sorts them
        scale, location = (float(v[0]) for v in (regressor.y_scaler_.scale_, regressor.y_scaler_.mean_))
        return torch.cat(views).double().mean(0) * scale + location

    def predict_seed(self, index: int, x: Tensor) -> tuple[Tensor, Tensor]:
        """Mean and variance of y of seed ``index`` at ``m x d`` points: each ``m`` (float64)."""
        mean, variance = quantile_moments(self.quantiles(index, x))
        return mean.to(x.device), variance.clamp_min(1e-12).to(x.device)

    def predict(self, x: Tensor, seeds: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance at ``S x m x d`` points (``m x d`` for one seed): each ``S x m`` (``m``);
        with ``seeds``, ``A x m x d`` points of those seeds only."""
        if x.dim() == 2:
            return self.predict_seed(0, x)
        indices = range(len(self.regressors)) if seeds is None else seeds.tolist()
        parts = [self.predict_seed(i, points) for i, points in zip(indices, x)]
        return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])
