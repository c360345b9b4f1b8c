"""How far apart two colours look to every reader: CIELAB differences under normal vision and
simulated deuteranopia, protanopia and tritanopia, and how far apart lines drawn together must be."""

from __future__ import annotations

import functools
import math
from typing import Any

import matplotlib.colors
import numpy as np

#: How linear-light sRGB looks to a reader with each colour vision: Machado, Oliveira and
#: Fernandes (2009), severity 1.
VISIONS = {
    "normal vision": np.eye(3),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]]
    ),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]]
    ),
}
#: Two colours drawn together are at least this far apart (CIE76) under every vision of
#: :data:`VISIONS`; the main benchmark's eight methods are at least 16 apart.
APART = 15.0


@functools.cache
def seen(color: Any, vision: str) -> np.ndarray:
    """CIELAB (D65) of ``color`` as a reader with ``vision`` sees it (sRGB decoded to linear light,
    :data:`VISIONS`' matrix applied, clipped)."""
    srgb = np.array(matplotlib.colors.to_rgb(color))
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    rgb = np.clip(VISIONS[vision] @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def gap(a: Any, b: Any) -> float:
    """How far apart colours ``a`` and ``b`` are for the reader who tells them apart least: the
    smallest CIE76 difference under :data:`VISIONS`."""
    return min(math.dist(seen(a, vision), seen(b, vision)) for vision in VISIONS)
