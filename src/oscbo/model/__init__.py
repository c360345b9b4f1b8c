"""The surrogate and the acquisition, shared by every GP method: the numerical core.

* :mod:`oscbo.model.kernel`: the Matérn kernel on distances computed once;
* :mod:`oscbo.model.linalg`: Cholesky, whitening, MLL, posterior variance (hand-written backwards);
* :mod:`oscbo.model.gp`: the GP of a round, theta_0 and the per-round lengthscale fits;
* :mod:`oscbo.model.posterior`: the protocol every round's model fills;
* :mod:`oscbo.model.acquisition`: UCB, LogEI and the batched multi-start optimiser;
* :mod:`oscbo.model.losses`: L^s and L^c (eqs. 6, 7).
* :mod:`oscbo.model.rounding`: the square root and the matrix-vector product, rounded the same on
  every CPU and whatever the batch.

Float64 throughout (:data:`DTYPE`); every tensor has the seeds first, ``S x n x d``.
"""

import torch

#: The precision of every tensor of a run.
DTYPE = torch.float64
