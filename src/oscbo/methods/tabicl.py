"""TabICLv2: a tabular foundation model as the BO surrogate (paper D.1, Table S1).

Each round, every seed's data D_{t-1} (x in [0, 1]^d, y standardised as for the GPs) is the
context of ``tabicl.TabICLRegressor``, which predicts quantiles of y at candidate points. The
quantiles give a predictive mean and variance (:func:`quantile_moments`), and x_t maximises UCB
``mu(x) + sqrt(beta) sigma(x)`` by Adam on x through the network (lr 0.05, 50 steps, from the 5
best of 20 Sobol points, candidates scored in batches of 32). There is no lengthscale.

Readings of the rules, for the report's protocol:

* Checkpoint: ``tabicl-regressor-v2-20260212.ckpt`` of the Hugging Face repository
  ``jingang/TabICL``, read from a local path; it is downloaded only when the settings allow it.
  Without it the method raises :class:`CheckpointMissingError` when it is built, before any
  round, naming the file and the command that fetches it. tabicl 2.2 reads checkpoints with
  ``torch.load(..., weights_only=True)`` on every path (``TabICLRegressor._load_model``), so
  its own loader is used -- once per run: its ``fit`` would otherwise re-read the file for
  every seed and round (:class:`_Regressor`).
* The wrapper's preprocessing stays the reference. ``fit`` is tabicl's own (target scaling,
  ensemble of up to 8 views: feature shuffles x {no normalisation, Yeo-Johnson}, outlier clipping);
  ``predict`` runs in numpy under ``no_grad``, so :class:`Posterior` replays its test-side
  transforms in torch from the fitted parameters and calls the network's differentiable
  (training-mode) sub-forwards in eval mode. A test checks that both give the same quantiles.
  Not replayed: the wrapper's fallback of clipping test inputs to the training range when the
  power transform raises (sklearn raises only on a non-finite result; inputs in [0, 1]^d,
  standardised and clipped to +-100, have not produced one).
* Ensemble: the views' quantile functions are averaged (as the wrapper's quantile outputs
  are), giving one quantile function per point.
* Mean and variance: the moments of that quantile function -- linear between the 999 predicted
  quantiles (levels k / 1000) with tabicl's exponential tails beyond them
  (``QuantileDistribution.mean / variance``). The "empirical" moments of the 999 values alone
  drop the tails and understate a normal's variance by 1.2 % (an exponential's by 3 %); the
  wrapper's ``"variance"`` output is not used: it un-scales a variance as a value,
  ``var * s + m`` instead of ``var * s^2`` (``TabICLRegressor.predict``, tabicl 2.2).
* Diagnostics: ``sigma`` is the predictive std of y, so it already contains the noise; the
  engine's half-width ``sqrt(beta) sqrt(sigma^2 + sigma_n^2)`` adds the GP's fixed noise
  (0.01, standardised units) on top, as for every method.
* Randomness: the wrapper's ensemble (feature shuffles) is seeded by ("tabicl", seed, round);
  the acquisition's Sobol points by the engine's (seed, round) stream; the rest is
  deterministic. Seeds are fitted and optimised one at a time.
* Lengthscale: none; the records hold NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from tabicl import TabICLRegressor
from tabicl._model.quantile_dist import QuantileDistribution
from tabicl._model.tabicl import TabICL as TabICLNetwork
from torch import Tensor

from oscbo.methods.base import Method, MethodUnavailableError, Observations
from oscbo.seeding import stable_seed
from oscbo.settings import Settings

#: The checkpoint of Table S1 and where it comes from.
CHECKPOINT_FILE = "tabicl-regressor-v2-20260212.ckpt"
CHECKPOINT_REPOSITORY = "jingang/TabICL"


class CheckpointMissingError(MethodUnavailableError, FileNotFoundError):
    """The TabICL checkpoint is not on disk and downloading it is not allowed."""


class CheckpointError(RuntimeError):
    """The TabICL checkpoint is on disk but cannot be loaded (truncated, or not a weights file)."""


def checkpoint_path(settings: Settings) -> Path:
    """The checkpoint's path; a relative one is relative to the working directory (the repository
    root, where the workflow's jobs run)."""
    return Path(settings.tabicl_checkpoint).absolute()


def require_checkpoint(settings: Settings) -> Path:
    """The checkpoint's path, checked to exist unless a download is allowed.

    Raises:
        CheckpointMissingError: naming the file, its repository and how to fetch it.
    """
    path = checkpoint_path(settings)
    if not path.is_file() and not settings.tabicl_allow_download:
        raise CheckpointMissingError(
            f"TabICL checkpoint not found: {path}. It is {CHECKPOINT_FILE} from the Hugging Face "
            f"repository {CHECKPOINT_REPOSITORY}; fetch it with\n"
            f"  hf download {CHECKPOINT_REPOSITORY} {CHECKPOINT_FILE} --local-dir {path.parent}\n"
            "or set tabicl_checkpoint to its path (tabicl_allow_download: true lets the run fetch it)."
        )
    return path


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


class _Regressor(TabICLRegressor):
    """tabicl's wrapper that takes an already loaded network (``loaded``) instead of reading the
    checkpoint again at each ``fit``; without one it loads as tabicl does."""

    loaded: tuple[TabICLNetwork, dict, Path] | None = None

    def _load_model(self) -> None:
        if self.loaded is None:
            try:  # tabicl's loader: torch.load(..., weights_only=True)
                super()._load_model()
            except Exception as error:  # torch raises several types for a damaged or unsafe file
                raise CheckpointError(
                    f"TabICL checkpoint {self.model_path} cannot be loaded ({type(error).__name__}: "
                    f"{str(error).splitlines()[0] if str(error) else ''}). It should be {CHECKPOINT_FILE} from "
                    f"{CHECKPOINT_REPOSITORY}: fetch it again (README, 'TabICLv2 and its checkpoint')."
                ) from error
        else:
            self.model_, self.model_config_, self.model_path_ = self.loaded


def _yeo_johnson(x: Tensor, lmbda: float) -> Tensor:
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


def _preprocess(pipeline, x: Tensor) -> Tensor:
    """tabicl's ``PreprocessingPipeline.transform`` of ``m x h`` test inputs, in torch."""

    def constant(values: np.ndarray) -> Tensor:
        return torch.as_tensor(values, dtype=x.dtype, device=x.device)

    scaler = pipeline.standard_scaler_
    x = ((x - constant(scaler.mean_)) / constant(scaler.scale_)).clamp(-100, 100)
    if pipeline.normalizer_ is not None:  # Yeo-Johnson, then sklearn's StandardScaler
        power = pipeline.normalizer_
        x = torch.stack([_yeo_johnson(x[:, j], float(lmbda)) for j, lmbda in enumerate(power.lambdas_)], -1)
        x = (x - constant(power._scaler.mean_)) / constant(power._scaler.scale_)
    outliers = pipeline.outlier_remover_  # soft clipping (OutlierRemover.transform)
    x = torch.maximum(-torch.log1p(x.abs()) + constant(outliers.lower_bounds_), x)
    return torch.minimum(torch.log1p(x.abs()) + constant(outliers.upper_bounds_), x)


class Posterior:
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

    def seed(self, index: int) -> Posterior:
        part = slice(index, index + 1)
        return Posterior(self.train_X[part], self.train_y[part], self.regressors[part])

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
                [torch.as_tensor(pipeline.X_transformed_, dtype=x.dtype, device=device), _preprocess(pipeline, x)]
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


class SeedUCB:
    """``mu(x) + width * sigma(x)`` of one seed's :class:`Posterior`: ``b x d`` -> ``b``."""

    def __init__(self, posterior: Posterior, width: Tensor | float) -> None:
        self.posterior = posterior
        self.width = width

    def __call__(self, x: Tensor) -> Tensor:
        mean, variance = self.posterior.predict_seed(0, x)
        return mean + self.width * variance.sqrt()


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

    def posterior(self, data: Observations, theta: Tensor) -> Posterior:
        """Fit one regressor per seed on D_{t-1}, its ensemble seeded by (seed, round)."""
        y = data.standardized()
        regressors = []
        for i, seed in enumerate(self.seeds):
            regressor = _Regressor(
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
        return Posterior(data.X, y, regressors)

    def acquisition(self, model: Posterior, width: Tensor, index: int) -> SeedUCB:
        """UCB of seed ``index`` on its own regressor."""
        return SeedUCB(model.seed(index), width[index])

    def propose(self, model: Posterior, width: Tensor, raw_points: Tensor) -> Tensor:
        """x_t of each seed by Adam on x (Table S1), not BoTorch's L-BFGS-B; one seed at a time,
        since each seed has its own regressor."""
        s = self.settings
        return torch.stack(
            [
                adam_maximize(
                    self.acquisition(model, width, i),
                    raw_points[i],
                    s.acq_restarts,
                    s.tabicl_lr,
                    s.tabicl_steps,
                    s.tabicl_batch_size,
                )[0]
                for i in range(len(raw_points))
            ]
        )
