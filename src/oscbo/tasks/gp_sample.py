"""GP sample paths: known-truth tasks whose objective is a draw of the surrogate's own prior.

The objective on [0, 1]^d is one draw of a zero-mean GP with the Matérn-5/2 kernel, unit
output scale and isotropic lengthscale ``l`` -- the model every GP method assumes, with the
lengthscale known -- so the report can set each method's learned lengthscale against the
truth and its empirical coverage against the nominal level. Registered as ``gp2`` (d = 2)
and ``gp5`` (d = 5).

Construction: random Fourier features (Rahimi and Recht, 2007). By Bochner's theorem the
Matérn-nu kernel is ``k(x - x') = E[cos(w . (x - x'))]`` with ``w`` drawn from its spectral
density, a multivariate Student-t with ``2 nu = 5`` degrees of freedom and scale ``1 / l``:
``w = z / (l sqrt(u / 5))``, ``z ~ N(0, I_d)``, ``u ~ chi^2_5``. With ``J`` frequencies and
``a_j, c_j ~ N(0, 1)``,

    f(x) = J^-1/2 sum_j [a_j cos(w_j . x) + c_j sin(w_j . x)]
         = J^-1/2 sum_j r_j cos(w_j . x - phi_j),    r_j = |(a_j, c_j)|, phi_j = atan2(c_j, a_j)

(the same function; the second form, one cosine per feature, is what is evaluated). Given
its frequencies, f is *exactly* a stationary Gaussian process with variance 1 at every x and
kernel ``k_J(x - x') = J^-1 sum_j cos(w_j . (x - x'))``, a J-sample Monte-Carlo estimate of
the Matérn-5/2 kernel (standard error at most ``(2 J)^-1/2``: 0.011 at J = 4096, 0.0055 at
16384); over the draw of the frequencies (over ``seed``), f's covariance is exactly Matérn-5/2
with lengthscale ``l``. So "known lengthscale" means: f was drawn from the prior with that
lengthscale; one draw's own kernel is that Matérn up to the Monte-Carlo error above, and, a
finite sum of cosines, a draw is smoother than a true Matérn-5/2 path at scales finer than its
highest frequencies (far finer than the spacing of 110 queries). In a test, an MLL fit to 256
noise-free points of one draw recovers ``l`` within 10 %; 2-D needs more features for that
than 5-D (a dense 2-D design resolves the kernel's Monte-Carlo error), hence the defaults
16384 (gp2) and 4096 (gp5). The draw comes from the stream ``("gp-sample", d, seed)`` and
``l`` only scales the frequencies: one seed at two lengthscales is one function stretched.

Default lengthscales, for 110 queries (10 initial + 100 rounds): gp2, l = 0.2: of the order of
ten local maxima; a Sobol design of 110 points has median nearest-neighbour distance 0.06
(correlation 0.93), so the data pin ``l`` down and a method's lengthscale error is its own.
gp5, l = 0.3: of the order of a hundred local maxima; the nearest-neighbour distance is 0.34 (correlation
0.45), so the data still inform ``l`` but do not resolve f -- the regime where over- and
under-estimating it matters. (l = 0.2 in 5-D leaves correlation 0.22: the MLL would be nearly
flat and the truth hard to compare with.) Both lie well inside Theta = [0.01, 10].

What a surrogate sees is not quite this prior: the engine standardises y with the data seen
so far, and one draw over [0, 1]^d has mean ``domain_mean`` and standard deviation
``domain_std``, not 0 and 1. From a fixed domain only ``s^2 l^-2nu`` is identifiable (infill
asymptotics), so a unit-scale Matérn-5/2 fitted to ``y / s`` estimates ``l s^(1/nu)``:
``lengthscale_for_standardised_y`` in :meth:`GPSample.describe`. (On three 2-D draws, MLL
fits to 512 noise-free points moved by this factor, to about 1 %, when y was standardised.)

f* is a numerical estimate, computed at a draw's first construction in a process: the best of a scrambled Sobol
set (about ``(2 / l)^d`` points, a spacing of about ``l / 2``, clipped to [2^12, 2^16]), then
L-BFGS-B (scipy, analytic gradient, tight tolerances) from the :data:`REFINE_STARTS` best of
them; f* is the task's own value at the best point found. On draws 0-29 of each task,
L-BFGS-B from the best 100 (gp2) or 300 (gp5) of 20,000 random points found nothing higher
by more than 4e-15. A method that did find a higher point would record a slightly negative
simple regret: the estimate is not a bound, and a task cannot raise it from what it sees.

Evaluation is batched (``... x d`` points in chunks of :data:`CHUNK_ELEMENTS` point-feature
pairs, no loop over points) and a point's value is bitwise independent of the batch it comes
in: the engine evaluates all seeds' queries in one call, and a seed's trajectory must not
depend on the others (see :mod:`oscbo.model.linalg`). Hence elementwise operations in place of
matrix products, and a fixed pairwise sum over the features (``features``: a power of two).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from oscbo.model import DTYPE
from oscbo.model.rounding import sqrt
from oscbo.seeding import generator, sobol_points, stable_seed
from oscbo.tasks.base import Task

#: Matérn smoothness of the prior; its spectral density is a Student-t with 2 nu dof.
NU = 2.5
#: Point-feature pairs per evaluated chunk (2 MiB of float64: small temporaries are cheap).
CHUNK_ELEMENTS = 2**18
#: L-BFGS-B starts (the best Sobol points) when estimating f*.
REFINE_STARTS = 64
#: f*, its maximiser and the domain's moments per (d, l, seed, J), searched once per process (a few
#: seconds): the jobs of a pack each build their task again.
_SEARCHED: dict[tuple[int, float, int, int], tuple[float, tuple[float, ...], float, float]] = {}


def draw_features(dim: int, features: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    """Unit-lengthscale Matérn-5/2 Fourier features of draw ``seed``.

    Returns:
        ``J x d`` frequencies (multivariate Student-t, 2 nu dof), ``J`` amplitudes
        ``r_j / sqrt(J)`` and ``J`` phases: ``f(x) = sum_j amp_j cos(w_j . x / l - phase_j)``.
    """
    stream = generator("gp-sample", dim, seed)
    dof = int(2 * NU)
    z = torch.randn(features, dim, generator=stream, dtype=DTYPE)
    chi2 = torch.randn(features, dof, generator=stream, dtype=DTYPE).pow(2).sum(-1)
    a, c = torch.randn(2, features, generator=stream, dtype=DTYPE)
    return z * sqrt(dof / chi2).unsqueeze(-1), torch.hypot(a, c) / math.sqrt(features), torch.atan2(c, a)


def fourier_sum(X: Tensor, rows: Tensor, amplitudes: Tensor, phases: Tensor) -> Tensor:
    """``sum_j amp_j cos(w_j . x - phase_j)`` at ``n x d`` points, returning ``n``.

    Args:
        rows: ``d x J`` frequencies (transposed and contiguous, so every operation below is
            vectorised alike for every point).

    Only elementwise operations and :func:`pairwise_sum`, so a point's value does not depend
    on the other points in ``X``.
    """
    angle = X[:, :1] * rows[0] - phases
    for k in range(1, X.shape[-1]):  # w . x, one coordinate at a time, in a fixed order
        angle.addcmul_(X[:, k : k + 1], rows[k])
    return pairwise_sum(angle.cos_().mul_(amplitudes))


def pairwise_sum(values: Tensor) -> Tensor:
    """Sum over the last dimension (a power of two) in a fixed order, whatever the batch.

    ``torch.sum`` and matrix products round differently for different batch shapes; halving
    with elementwise additions gives every row the same summation tree. Overwrites ``values``.
    """
    while values.shape[-1] > 1:
        half = values.shape[-1] // 2
        values = values[..., :half].add_(values[..., half:])
    return values.squeeze(-1)


def search_points(dim: int, lengthscale: float) -> int:
    """Size of the Sobol set searched for f*: about ``(2 / l)^d``, a power of two in [2^12, 2^16]."""
    exponent = math.ceil(dim * math.log2(2 / lengthscale))
    return 2 ** min(max(exponent, 12), 16)


class GPSample(Task):
    """One Matérn-5/2 GP draw on [0, 1]^d with a known lengthscale, to maximise.

    Args:
        name: the registry name.
        dim: input dimension d.
        lengthscale: the prior's isotropic lengthscale l (in units of [0, 1]^d).
        seed: which draw; the same function for every BO seed.
        features: random Fourier features J, a power of two >= 16.

    Attributes:
        true_lengthscale: l.
        frequencies: ``J x d`` frequencies ``w_j`` (already divided by l).
        amplitudes, phases: ``J`` each (amplitudes include the ``J^-1/2``).
        maximizer: the point (a list of d floats) where f* was found.
        domain_mean, domain_std: f's mean and standard deviation over the Sobol search set.
    """

    def __init__(self, name: str, dim: int, lengthscale: float, seed: int, features: int) -> None:
        if not lengthscale > 0 or features < 16 or features & (features - 1):
            raise ValueError(
                f"{name} needs lengthscale > 0 and features a power of two >= 16, "
                f"got lengthscale={lengthscale}, features={features}"
            )
        self.name, self.seed, self.features = name, int(seed), int(features)
        self.true_lengthscale = float(lengthscale)
        self.bounds = torch.tensor([[0.0] * dim, [1.0] * dim], dtype=DTYPE)
        unit_frequencies, self.amplitudes, self.phases = draw_features(dim, self.features, self.seed)
        self.frequencies = unit_frequencies / self.true_lengthscale
        self._rows = self.frequencies.T.contiguous()
        key = (dim, self.true_lengthscale, self.seed, self.features)
        if key not in _SEARCHED:
            _SEARCHED[key] = self._search_maximum()
        self._optimal_value, maximizer, self.domain_mean, self.domain_std = _SEARCHED[key]
        self.maximizer = list(maximizer)

    @property
    def optimal_value(self) -> float:
        """f*: a numerical estimate (see the module docstring)."""
        return self._optimal_value

    def evaluate_true(self, X: Tensor) -> Tensor:
        flat = X.to(device="cpu", dtype=DTYPE).reshape(-1, self.dim)
        chunk = max(1, CHUNK_ELEMENTS // self.features)
        parts = [fourier_sum(part, self._rows, self.amplitudes, self.phases) for part in flat.split(chunk)]
        return (torch.cat(parts) if parts else flat.new_zeros(0)).reshape(X.shape[:-1]).to(X)

    def _search_maximum(self) -> tuple[float, tuple[float, ...], float, float]:
        """f* by a Sobol search refined with L-BFGS-B; also f's mean and std over the search set."""
        candidates = sobol_points(
            search_points(self.dim, self.true_lengthscale),
            self.dim,
            stable_seed("gp-sample-search", self.dim, self.seed),
        )
        values = self.evaluate_true(candidates)
        best_value, best_point = values.max().item(), candidates[values.argmax()]
        frequencies, amplitudes, phases = (t.numpy() for t in (self.frequencies, self.amplitudes, self.phases))

        def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
            angle = frequencies @ x - phases
            return -amplitudes @ np.cos(angle), frequencies.T @ (amplitudes * np.sin(angle))

        for start in candidates[values.topk(min(REFINE_STARTS, len(values))).indices]:
            result = minimize(
                negative,
                start.numpy(),
                jac=True,
                method="L-BFGS-B",
                bounds=[(0.0, 1.0)] * self.dim,
                options={"ftol": 1e-15, "gtol": 1e-12},
            )
            point = torch.tensor(result.x, dtype=DTYPE).clamp(0, 1)
            value = self.evaluate_true(point).item()  # the task's own value there, not numpy's
            if value > best_value:
                best_value, best_point = value, point
        return best_value, tuple(best_point.tolist()), values.mean().item(), values.std().item()

    def describe(self) -> dict:
        return {
            **super().describe(),
            "true_lengthscale": self.true_lengthscale,
            "seed": self.seed,
            "features": self.features,
            "maximizer": self.maximizer,
            "domain_mean": self.domain_mean,
            "domain_std": self.domain_std,
            "lengthscale_for_standardised_y": self.true_lengthscale * self.domain_std ** (1 / NU),
        }


def gp2(lengthscale: float = 0.2, seed: int = 0, features: int = 16384) -> GPSample:
    """A Matérn-5/2 GP draw on [0, 1]^2 (lengthscale 0.2 by default; see the module docstring)."""
    return GPSample("gp2", 2, lengthscale, seed, features)


def gp5(lengthscale: float = 0.3, seed: int = 0, features: int = 4096) -> GPSample:
    """A Matérn-5/2 GP draw on [0, 1]^5 (lengthscale 0.3 by default; see the module docstring)."""
    return GPSample("gp5", 5, lengthscale, seed, features)
