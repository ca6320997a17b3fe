"""PSDP_inf (Scherrer 2014, eq. psdp; Bagnell et al. 2003 for the finite horizon).

    sigma_0 = empty,  pi_{k+1} <- G_eps(nu, v_{sigma_k}),  sigma_{k+1} = pi_{k+1} sigma_k

The value of the empty policy is r for a state reward (the paper's setting) and 0 when the
reward depends on the action (docs/decisions.md). The output after k iterations is the loop
(sigma_k)^inf; the memory is k.
"""

from __future__ import annotations

import numpy as np

from nsrl.greedy.base import GreedyOperator, Nu
from nsrl.policies import NonStationary, Policy
from nsrl.schemes.base import Step, greedy_step


class PSDP:
    """PSDP_inf: greedy w.r.t. the finite-horizon value v_{sigma_k}, output (sigma_k)^inf.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = nsrl.run(PSDP(), nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0))
        >>> h.memory.tolist()
        [1, 2, 3]
    """

    name = "PSDP"
    params: dict = {}
    fold, step_rule = "prepend", "full"  # what the engines read (nsrl.schemes.rules)

    def start(self, pi0: Policy | None) -> None:
        """PSDP starts from the empty policy; ``pi0`` is not used."""
        self.sigma = NonStationary.empty()
        self._output: NonStationary | None = None

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """pi_{k+1} <- G(nu, v_{sigma_k}); sigma_{k+1} = pi_{k+1} sigma_k."""
        g = greedy_step(operator, self.sigma, Nu(), rng)
        target, self.sigma = self.sigma, self.sigma.prepend(g.policy)
        self._output = self.sigma.looped()
        return Step(target=target, rho=Nu(), greedy=g)

    @property
    def output(self) -> NonStationary | None:
        """(sigma_k)^inf, the policy that loops over sigma_k."""
        return self._output
