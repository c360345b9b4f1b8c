"""One numerical code path on every x86-64 machine with AVX2 (protocol row "Numerics").

Four libraries compute the numbers that end in a record, and each picks its kernels by the CPU it
finds, so that the same seed rounds differently on an Intel Xeon with AVX-512 and on an AMD EPYC:

* **Intel MKL**, torch's BLAS, LAPACK and vector maths on CPU (the GP's Cholesky factors, solves and
  products). Its conditional numerical reproducibility (CNR) mode fixes the kernels: on Intel CPUs
  any branch can be asked for, but on other CPUs only ``AUTO`` (the CPU's own) and ``COMPATIBLE``
  (SSE2), and an Intel branch such as ``AVX2`` silently falls back to ``AUTO`` there (oneMKL
  Developer Guide, "Getting Started with Conditional Numerical Reproducibility"). ``COMPATIBLE`` is
  thus the one branch that gives the same results on Intel and non-Intel CPUs. In any CNR mode a
  result does not depend on where a matrix lies in memory, so a seed's numbers do not depend on the
  other seeds of its batch; they do depend on MKL's thread count, which the engine fixes
  (``threads_per_job``, recorded).
* **ATen**, torch's own vectorised kernels: ``ATEN_CPU_CAPABILITY=avx2`` (an AVX-512 CPU would run
  its ``avx512`` kernels).
* **OpenBLAS** inside NumPy and SciPy (BoTorch's batched L-BFGS-B, the tasks' f* searches):
  ``OPENBLAS_CORETYPE=Haswell``, OpenBLAS's AVX2 kernels (an AMD Zen CPU runs them already; an
  AVX-512 CPU would run ``SkylakeX``'s).
* **NumPy's** own SIMD loops (``np.cos`` in the GP-sample tasks' f* search): its AVX-512 targets
  switched off (``NPY_DISABLE_CPU_FEATURES``), so that NumPy runs its AVX2 loops at most.

One computation the four settings do not fix: torch's CPU square root is MKL's vector maths
(``vdSqrt``), within one unit in the last place but not correctly rounded, and it rounds differently
on an Intel Xeon and an AMD EPYC even under ``COMPATIBLE``. The engine's square roots are IEEE
754's (:func:`oscbo.model.rounding.sqrt`). Found and checked by running the golden study under a
software x86-64 (QEMU, which emulates exactly every instruction whose result IEEE 754 fixes): its
records equal the hardware's bit for bit (``tests/run/test_reproducibility.py``, slow).

Each is read once, when its library starts, so :mod:`oscbo` sets them on import (:func:`pin`),
before torch or NumPy start, overriding values already in the environment. They are pinned only
on an x86-64 CPU with AVX2 and FMA (Intel since 2013, AMD since 2017); elsewhere (ARM, an older
CPU) the kernels stay the machine's own and :func:`code_path` says so. ``OSCBO_NUMERICS=native``
leaves every variable as it is. :func:`code_path` reports what the libraries actually run with
(a library that started before :mod:`oscbo` was imported keeps its own kernels), and every record's
sidecar holds it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

#: Set ``OSCBO_NUMERICS=native`` to keep the machine's own kernels (nothing is pinned).
OPT_OUT = ("OSCBO_NUMERICS", "native")
#: The pinned path's MKL branch, torch CPU capability, OpenBLAS core and NumPy's highest SIMD target.
MKL_BRANCH, TORCH_CAPABILITY, OPENBLAS_CORE, NUMPY_SIMD = "COMPATIBLE", "AVX2", "Haswell", "X86_V3"
#: NumPy's dispatch targets above AVX2, switched off: names of NumPy >= 2.4, and of the earlier ones.
NUMPY_ABOVE_AVX2 = "X86_V4 AVX512_ICL AVX512_SPR"
NUMPY_ABOVE_AVX2_BEFORE_2_4 = (
    "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
)
#: The CPU features the pinned path needs (``/proc/cpuinfo`` flags).
REQUIRED_FLAGS = ("avx2", "fma")
#: mkl_service.h: ``MKL_CBWR_ALL`` queries every setting; the branch codes it returns.
_MKL_CBWR_ALL = -1
_MKL_BRANCHES = {
    0: "off",
    1: "off",
    2: "AUTO",
    3: "COMPATIBLE",
    4: "SSE2",
    6: "SSSE3",
    7: "SSE4_1",
    8: "SSE4_2",
    9: "AVX",
    10: "AVX2",
    11: "AVX512_MIC",
    12: "AVX512",
    13: "AVX512_MIC_E1",
    14: "AVX512_E1",
}


def cpu_supports_pinned_path() -> tuple[bool, str]:
    """Whether this CPU runs the pinned path, and if not why (one line)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False, f"a {platform.machine()} CPU, not x86-64"
    try:
        flags = next(line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").open() if line.startswith("flags"))
    except (OSError, StopIteration):
        return False, "the CPU's features cannot be read (no /proc/cpuinfo)"
    missing = [flag for flag in REQUIRED_FLAGS if flag not in flags]
    return (not missing), (f"the CPU lacks {', '.join(missing).upper()}" if missing else "")


def pinned_environment() -> dict[str, str]:
    """The environment variables of the pinned path."""
    try:
        numpy_major_minor = tuple(int(part) for part in metadata.version("numpy").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        numpy_major_minor = (2, 4)
    return {
        "MKL_CBWR": MKL_BRANCH,
        "ATEN_CPU_CAPABILITY": TORCH_CAPABILITY.lower(),
        "OPENBLAS_CORETYPE": OPENBLAS_CORE,
        "NPY_DISABLE_CPU_FEATURES": NUMPY_ABOVE_AVX2 if numpy_major_minor >= (2, 4) else NUMPY_ABOVE_AVX2_BEFORE_2_4,
    }


def pin() -> None:
    """Set :func:`pinned_environment` for the libraries that have not started yet (module docstring);
    on a CPU without the pinned path, only MKL's ``COMPATIBLE`` branch (it runs on any x86-64)."""
    if os.environ.get(OPT_OUT[0]) == OPT_OUT[1]:
        return
    supported, _ = cpu_supports_pinned_path()
    if supported:
        os.environ.update(pinned_environment())
    elif platform.machine().lower() in ("x86_64", "amd64"):
        os.environ["MKL_CBWR"] = MKL_BRANCH


def mkl_branch() -> str:
    """MKL's CNR branch in force (``COMPATIBLE``, ``AUTO``, ... with ``,STRICT`` when set), ``off``
    (MKL started before :mod:`oscbo` set it), or ``no MKL`` (a torch build on another BLAS, e.g. ARM)."""
    import torch

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        get = ctypes.CDLL(str(library)).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return "no MKL"
    get.restype = ctypes.c_int
    value = get(_MKL_CBWR_ALL)
    branch = _MKL_BRANCHES.get(value & 0xFFFF, f"code {value & 0xFFFF}")
    return branch + (",STRICT" if value & 0x10000 else "")


def code_path(device: str = "cpu") -> dict[str, Any]:
    """What the libraries run with, now: ``mkl`` (:func:`mkl_branch`), ``torch_cpu`` (ATen's CPU
    capability), ``openblas`` (the core type of every OpenBLAS loaded, e.g. NumPy's and SciPy's),
    ``numpy_simd`` (NumPy's enabled dispatch targets), ``pinned`` (all of them on the pinned path)
    and ``summary``, one line: ``"pinned: MKL COMPATIBLE, torch AVX2, OpenBLAS Haswell, NumPy
    X86_V3"``, or ``"not pinned (why): ..."``. A run on a GPU (``device``) is not pinned: its
    numbers come from CUDA's kernels, which depend on the GPU and the CUDA version."""
    import numpy  # noqa: F401  (its OpenBLAS is then among the loaded libraries)
    import threadpoolctl
    import torch

    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    openblas = sorted(
        {
            info.get("architecture") or "?"
            for info in threadpoolctl.threadpool_info()
            if info.get("internal_api") == "openblas"
        }
    )
    simd = [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]
    path = {
        "mkl": mkl_branch(),
        "torch_cpu": torch.backends.cpu.get_cpu_capability(),
        "openblas": ",".join(openblas) or "none loaded",
        "numpy_simd": ",".join(simd) or "baseline",
    }
    above = set(NUMPY_ABOVE_AVX2.split()) | set(NUMPY_ABOVE_AVX2_BEFORE_2_4.split())
    off_path = [
        name
        for name, ok in (
            ("MKL", path["mkl"] == MKL_BRANCH),
            ("torch", path["torch_cpu"] == TORCH_CAPABILITY),
            ("OpenBLAS", set(openblas) <= {OPENBLAS_CORE}),
            ("NumPy", not set(simd) & above),
        )
        if not ok
    ]
    shown = f"MKL {path['mkl']}, torch {path['torch_cpu']}, OpenBLAS {path['openblas']}, NumPy {path['numpy_simd']}"
    if not off_path and str(device).startswith("cpu"):
        path["pinned"], path["summary"] = True, f"pinned: {shown}"
        return path
    supported, why = cpu_supports_pinned_path()
    if not str(device).startswith("cpu"):
        why = f"runs on {device}: CUDA's kernels"
    elif os.environ.get(OPT_OUT[0]) == OPT_OUT[1]:
        why = f"{OPT_OUT[0]}={OPT_OUT[1]}"
    elif supported:
        why = f"{', '.join(off_path)} started before oscbo was imported"
    path["pinned"], path["summary"] = False, f"not pinned ({why}): {shown}"
    return path


#: Whether this process has said it runs off the pinned path (:func:`warn_unless_pinned`, once).
_WARNED: list[bool] = []


def warn_unless_pinned() -> dict[str, Any]:
    """:func:`code_path`, with a short warning, once per process, when this CPU could run the pinned
    path but does not (a library started before :mod:`oscbo` was imported): the records then hold
    this machine's own rounding, and without MKL's CNR mode a seed's last digits can depend on its
    batch. :func:`code_path` says what runs instead."""
    path = code_path()
    if not path["pinned"] and cpu_supports_pinned_path()[0] and os.environ.get(OPT_OUT[0]) != OPT_OUT[1]:
        if not _WARNED:
            _WARNED.append(True)
            warnings.warn(
                "oscbo: torch or NumPy started before oscbo, so the numerical code path is this machine's own, not "
                "the pinned one other machines reproduce: import oscbo first (oscbo.reproducibility.code_path() "
                "says what runs)",
                RuntimeWarning,
                stacklevel=2,
            )
    return path
