"""GP-UCB at the true kernel: the lengthscale of the prior a known-truth task was drawn from, held
fixed (paper section 6: the reference point of the regret bound, GP-UCB with known hyperparameters).

Only a task that declares its lengthscale (``true_lengthscale`` in its description: the GP-sample
tasks of :mod:`oscbo.tasks.gp_sample`) can run it; elsewhere it is not run, and says why. It is
the same UCB and the same model as every GP method, with theta the task's own lengthscale l from
round 1 on (not the MLL fit on D_0): for the unit-scale model on standardised y, the kernel that
fits one draw is ``l s^(1/nu)`` (the task's ``lengthscale_for_standardised_y``), shown beside it.
"""

from __future__ import annotations

from oscbo.methods.base import Method, MethodUnavailableError, Observations


class GPUCBTrue(Method):
    """theta = the task's true lengthscale in every round; UCB with beta = 2."""

    name = "gp-ucb-true"

    def start(self, data: Observations) -> None:
        self.theta = self.true_lengthscale(data)
        if self.theta is None:
            raise MethodUnavailableError(
                f"gp-ucb-true needs a task whose true lengthscale is known (a GP-sample task); "
                f"{self.task.get('name', 'this task')} declares none"
            )
