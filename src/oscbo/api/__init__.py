"""oscbo on a user's own objective: ask/tell (:class:`Optimizer`), one call (:func:`optimize`),
OSCBO's lengthscale rule in a user's BoTorch loop (:class:`OSCBOLengthscale`), and the command
line (:mod:`oscbo.api.cli`). Each caps torch's and the BLAS pools' threads at one by default
(``threads=``), as the workflow's jobs do."""

from oscbo.api.lengthscale import OSCBOLengthscale
from oscbo.api.optimize import optimize
from oscbo.api.optimizer import Optimizer

__all__ = ["OSCBOLengthscale", "Optimizer", "optimize"]
