"""Arithmetic whose rounding depends neither on the CPU nor on the batch (protocol row "Numerics").

* :func:`sqrt`: torch's CPU square root of a float tensor is MKL's vector-maths ``vdSqrt``, not the
  processor's ``sqrt`` instruction. It is within one unit in the last place, not correctly rounded
  (on 1.4 % of inputs in [0.01, 4] here), and which inputs it misses depends on the CPU: even under
  MKL's ``COMPATIBLE`` branch an Intel Xeon and an AMD EPYC part on a seed's first BO round, as does
  a software x86-64 (QEMU), where every instruction whose result IEEE 754 fixes is emulated exactly.
  This one is NumPy's, IEEE 754's correctly rounded square root, the same on every machine.
* :func:`matvec`: torch's matrix-vector product takes another kernel for a batch of one than for a
  larger batch, and the two round differently; a product and a row sum do not.

``OSCBO_NUMERICS=native`` (:mod:`oscbo.reproducibility`) keeps torch's own square root, as the
runs made before the pinned code path used it.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch import Tensor

from oscbo.reproducibility import OPT_OUT

#: ``OSCBO_NUMERICS=native``: torch's own square root (read once, on import, like the pinned path).
NATIVE = os.environ.get(OPT_OUT[0]) == OPT_OUT[1]


def _ieee_sqrt(x: Tensor) -> Tensor:
    with np.errstate(invalid="ignore"):  # sqrt of a negative number is NaN, silently, as torch's
        return torch.from_numpy(np.sqrt(x.detach().numpy()))


class _Sqrt(torch.autograd.Function):
    """The square root with torch's backward, ``grad / (2 sqrt(x))``."""

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        result = _ieee_sqrt(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (result,) = ctx.saved_tensors
        return grad / (2 * result)


def sqrt(x: Tensor) -> Tensor:
    """``x.sqrt()``, correctly rounded on a CPU (module docstring); a GPU tensor's is CUDA's, which
    is correctly rounded in float64 already."""
    if NATIVE or x.device.type != "cpu":
        return x.sqrt()
    return _Sqrt.apply(x) if x.requires_grad and torch.is_grad_enabled() else _ieee_sqrt(x)


def matvec(matrix: Tensor, vector: Tensor) -> Tensor:
    """``matrix @ vector`` for ``... x m x n`` and ``... x n``, as a product and a row sum (module
    docstring)."""
    return (matrix * vector.unsqueeze(-2)).sum(-1)
