"""Bitwise reproducible numbers, whatever else shares a seed's batch (protocol row "Seeds").

A seed's trajectory must not depend on which seeds share its lockstep batch. Batched torch
code keeps every seed's arithmetic apart, but on CPU torch calls Intel MKL for matrix
products, Cholesky factors and triangular solves, and MKL picks its code path by where a
matrix lies in memory (its alignment): seed 3 of a batch of 20 and seed 3 alone then round
differently (measured with torch 2.13: about one batched Cholesky backward in seven, and
OSCBO turns 1e-16 into 1e-3 within four rounds). MKL's conditional numerical
reproducibility mode ``AUTO,STRICT`` removes that dependence. It is read when MKL starts,
so :mod:`oscbo` asks for it on import (``MKL_CBWR``, unless the user set it) and
:func:`mkl_mode` reports what MKL actually runs with; the engine records it in every run.

The mode is lost if torch ran a matrix computation before :mod:`oscbo` was imported.
Then the records are still correct but a seed's last digits can depend on its batch;
:func:`mkl_mode` says so and the engine warns.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from pathlib import Path

#: What :mod:`oscbo` asks of MKL: its default code path, strictly alignment-independent.
MKL_MODE = "AUTO,STRICT"
#: mkl_service.h: ``MKL_CBWR_ALL`` queries every setting; ``MKL_CBWR_STRICT`` is a flag bit.
_MKL_CBWR_ALL = -1
_MKL_CBWR_STRICT = 0x10000


def request_strict_mkl() -> None:
    """Ask MKL for :data:`MKL_MODE` when it starts (no effect once it has started)."""
    os.environ.setdefault("MKL_CBWR", MKL_MODE)


def mkl_mode() -> str:
    """``strict``, ``not strict`` (MKL started before :mod:`oscbo` asked), or ``no MKL``
    (a torch build on another BLAS, e.g. on ARM, where this guarantee is not checked)."""
    import torch

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        get = ctypes.CDLL(str(library)).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return "no MKL"
    get.restype = ctypes.c_int
    return "strict" if get(_MKL_CBWR_ALL) & _MKL_CBWR_STRICT else "not strict"


def warn_unless_strict() -> str:
    """:func:`mkl_mode`, with a warning when MKL runs but not in its strict mode."""
    mode = mkl_mode()
    if mode == "not strict":
        warnings.warn(
            "MKL started before oscbo was imported, without MKL_CBWR=AUTO,STRICT: a seed's last "
            "digits may depend on the other seeds of its batch. Import oscbo first, or set "
            "MKL_CBWR=AUTO,STRICT in the environment.",
            RuntimeWarning,
            stacklevel=2,
        )
    return mode
