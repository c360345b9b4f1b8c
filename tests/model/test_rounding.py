"""The engine's square root is IEEE 754's, with torch's gradient, and the only one it takes
(matvec, beside it, is tested in tests/model/test_gp.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import torch

from oscbo import reproducibility
from oscbo.model import rounding

SRC = Path(__file__).resolve().parents[2] / "src" / "oscbo"


def inputs() -> torch.Tensor:
    return torch.rand(100_000, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 4 + 0.01


def test_sqrt_is_numpy_s_correctly_rounded_one_and_torch_s_is_not() -> None:
    x = inputs()
    ours = rounding.sqrt(x)
    assert ours.dtype == x.dtype and torch.equal(ours, torch.from_numpy(np.sqrt(x.numpy())))
    assert torch.equal(rounding.sqrt(x.reshape(100, 1000).mT), ours.reshape(100, 1000).mT)  # strided
    if reproducibility.mkl_branch() != "no MKL":  # torch's own is MKL's vdSqrt: off by one ulp somewhere
        assert (x.sqrt() != ours).any()
    with np.errstate(all="raise"):  # a negative input is NaN, silently, as torch's
        assert torch.isnan(rounding.sqrt(torch.tensor([-1.0], dtype=torch.float64))).all()


def test_sqrt_has_torch_s_gradient() -> None:
    x = inputs()[:50].reshape(5, 10)
    ours, theirs = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    weights = torch.linspace(-1, 2, 10, dtype=torch.float64)
    (rounding.sqrt(ours) * weights).sum().backward()
    (theirs.sqrt() * weights).sum().backward()
    # torch's backward divides by its own sqrt: equal where the two square roots are
    same = rounding.sqrt(x) == x.sqrt()
    assert same.any() and torch.equal(ours.grad[same], theirs.grad[same])
    torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-15, atol=0)
    with torch.no_grad():
        assert not rounding.sqrt(ours).requires_grad


#: A tensor's square root taken by torch, not by :func:`oscbo.model.rounding.sqrt`.
TORCH_SQRT = re.compile(
    r"\.sqrt_?\(\)|torch\.sqrt\(|\*\* ?0\.5\b|\.pow\(0\.5\)|torch\.cdist\(|linalg\.(vector_)?norm\("
)


def test_no_other_square_root_of_a_tensor_in_the_engine() -> None:
    """Every tensor square root goes through rounding.sqrt (math.sqrt of a float is libm's, the
    same on every x86-64 CPU); the one exception is tabular's cdist under OSCBO_NUMERICS=native."""
    found = {
        f"{path.relative_to(SRC)}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "rounding.py"
        for line in path.read_text().splitlines()
        if TORCH_SQRT.search(line.split("#")[0].replace("(1 - beta2**step) ** 0.5", ""))  # Adam's float
    }
    assert {line for line in found if "``" not in line} == {  # docstrings aside
        'tasks/tabular.py: distance = torch.cdist(Z, self._unit_designs, compute_mode="donot_use_mm_for_euclid_dist")'
    }
