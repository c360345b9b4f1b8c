"""oscbo: a reproducible replication of Online Sharp-Calibrated Bayesian Optimization.

Importing this package is cheap (no torch); the engine, methods and tasks load on use.
It asks MKL for its strict reproducible mode before torch's first matrix computation
(see :mod:`oscbo.reproducibility`).
"""

from oscbo.reproducibility import request_strict_mkl

request_strict_mkl()

__version__ = "0.1.0"
