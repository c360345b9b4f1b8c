"""Reproducible, order-independent seeds: each random stream is named by what it is for.

torch is imported by the functions that use it: the analysis seeds its resamples here, and the
workflow's DAG, the summaries and the report run without loading it (about 2 s a process).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from torch import Tensor


def stable_seed(*parts: object) -> int:
    """A 31-bit integer determined by ``parts`` alone (unlike ``hash``, stable across runs)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def generator(*parts: object) -> torch.Generator:
    """A CPU generator seeded with :func:`stable_seed` of ``parts``."""
    import torch

    return torch.Generator().manual_seed(stable_seed(*parts))


def sobol_points(count: int, dim: int, seed: int, device: torch.device | None = None) -> Tensor:
    """``count x dim`` scrambled Sobol points in [0, 1]^dim, reproducible from ``seed``."""
    import torch
    from torch.quasirandom import SobolEngine

    engine = SobolEngine(dim, scramble=True, seed=seed)
    return engine.draw(count, dtype=torch.float64).to(device)
