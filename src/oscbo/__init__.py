"""oscbo: a reproducible replication of Online Sharp-Calibrated Bayesian Optimization.

Importing this package is cheap (no torch); the engine, methods and tasks load on use.
"""

__version__ = "0.1.0"
