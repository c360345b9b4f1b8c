"""tabicl's test-side preprocessing replayed in torch, so that its predictions are differentiable in x."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


def yeo_johnson(x: Tensor, lmbda: float) -> Tensor:
    """scipy's Yeo-Johnson transform with a fitted lambda (as sklearn's PowerTransformer calls it),
    written so that neither branch produces NaN gradients."""
    eps = np.finfo(np.float64).eps
    positive, negative = x.clamp_min(0), (-x).clamp_min(0)
    upper = torch.log1p(positive) if abs(lmbda) < eps else torch.expm1(lmbda * torch.log1p(positive)) / lmbda
    if abs(lmbda - 2) > eps:
        lower = -torch.expm1((2 - lmbda) * torch.log1p(negative)) / (2 - lmbda)
    else:
        lower = -torch.log1p(negative)
    return torch.where(x >= 0, upper, lower)


def preprocess(pipeline, x: Tensor) -> Tensor:
    """tabicl's ``PreprocessingPipeline.transform`` of ``m x h`` test inputs, in torch."""

    def constant(values: np.ndarray) -> Tensor:
        return torch.as_tensor(values, dtype=x.dtype, device=x.device)

    scaler = pipeline.standard_scaler_
    x = ((x - constant(scaler.mean_)) / constant(scaler.scale_)).clamp(-100, 100)
    if pipeline.normalizer_ is not None:  # Yeo-Johnson, then sklearn's StandardScaler
        power = pipeline.normalizer_
        x = torch.stack([yeo_johnson(x[:, j], float(lmbda)) for j, lmbda in enumerate(power.lambdas_)], -1)
        x = (x - constant(power._scaler.mean_)) / constant(power._scaler.scale_)
    outliers = pipeline.outlier_remover_  # soft clipping (OutlierRemover.transform)
    x = torch.maximum(-torch.log1p(x.abs()) + constant(outliers.lower_bounds_), x)
    return torch.minimum(torch.log1p(x.abs()) + constant(outliers.upper_bounds_), x)
