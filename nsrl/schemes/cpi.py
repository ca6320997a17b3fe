"""CPI (Kakade & Langford 2002), CPI(alpha) and CPI+ (Scherrer 2014, eq. cpi and section 5).

    pi_{k+1} <- (1 - alpha_{k+1}) pi_k + alpha_{k+1} G_eps(d_{pi_k,nu}, v_{pi_k})

**CPI's step and stopping rule.** Kakade & Langford state them for normalised values
((1 - gamma) sum_t gamma^t r_t, bounded by R = R_max). With ``A_hat`` the operator's
estimate of the policy advantage ``d_{pi_k,nu} (T_{pi'} v_{pi_k} - v_{pi_k})`` (value
units) and ``A = (1 - gamma) A_hat`` its normalised form, for an accuracy ``epsilon``
(normalised units):

* stop when ``A < 2 epsilon / 3`` (the output no longer changes);
* otherwise ``alpha = (1 - gamma) (A - epsilon / 3) / (4 R)``, capped at 1.

This is their Theorem 4.1 step: it guarantees ``nu v_{pi_{k+1}} >= nu v_{pi_k}`` when the
estimate is within epsilon / 3 of the true advantage, and it satisfies the paper's
``alpha_k >= (1 - gamma) epsilon / (12 R)``. The steps are tiny (the paper reports millions
of iterations), so runs are capped by their iteration count.

**CPI+** chooses the step by a line search over ``min(2^i alpha, 1)``, i = 0, 1, ..., where
alpha is CPI's step, keeping by default the candidate with the best estimate of ``nu v``
(``operator.value``); it shares CPI's stopping rule. **CPI(alpha)** uses a fixed step and
never stops. The step, the stopping test, the candidates and the choice among them are
:mod:`nsrl.schemes.rules`, which the batched engine (:mod:`nsrl.batched.cpi`) calls too.
"""

from __future__ import annotations

import numpy as np

from nsrl.exact import backend, q_values
from nsrl.greedy.base import Greedy, GreedyOperator, Occupancy, policy_advantage
from nsrl.params import param, set_params
from nsrl.policies import Policy, action_table, stationary_table
from nsrl.schemes import rules
from nsrl.schemes.api import ALPHA, fold_in
from nsrl.schemes.base import Step, greedy_step

_CPI_PARAMS = {
    "epsilon": param(float | None, None, gt=0),
    "r_max": param(float | None, None, gt=0),
    "advantage": param(str, "operator", choices=rules.ADVANTAGE_SOURCES),
}


class CPI:
    """Conservative Policy Iteration with Kakade & Langford's adaptive step and stopping rule.

    Args:
        epsilon: accuracy in normalised units (default ``1e-3 * R_max`` of the MDP, or 1e-3
            when the operator has no model).
        r_max: bound R on the rewards (default: the operator's MDP ``r_max``, else 1).
        advantage: what the step and stopping test read (``rules.ADVANTAGE_SOURCES``):
            ``"operator"`` (default: the greedy operator's estimate, ``Greedy.advantage``) or
            ``"exact"`` (the true ``d_{pi,nu} (T_{pi'} v_pi - v_pi)``, from the model).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = nsrl.run(CPI(), nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0))
        >>> bool(np.all(h.steps > 0))
        True
    """

    name = "CPI"
    params = _CPI_PARAMS
    # What the engines read (nsrl.schemes.rules): the step, the fold, CPI+'s line search.
    line_search: str | None
    fold, step_rule, line_search = "mix", "kakade", None
    epsilon: float | None  # these three are set by set_params
    r_max: float | None
    advantage: str

    def __init__(self, epsilon: float | None = None, r_max: float | None = None,
                 advantage: str = "operator") -> None:
        set_params(self, epsilon=epsilon, r_max=r_max, advantage=advantage)

    def start(self, pi0: Policy) -> None:
        """Set pi_0."""
        self.pi, self.stopped = pi0, False

    def problem(self, operator: GreedyOperator) -> tuple[float | None, float | None]:
        """(gamma, R_max) of the operator's problem, None where it does not say."""
        mdp = getattr(operator, "mdp", None)
        gamma = getattr(mdp, "gamma", None) or getattr(operator, "gamma", None)
        return gamma, getattr(mdp, "r_max", None)

    def step_of(self, g: Greedy, operator: GreedyOperator) -> float:
        """The step rule's step for the greedy result ``g`` (rules.step_size); 0: stop."""
        gamma, r_max = self.problem(operator)
        if gamma is None and self.step_rule == "kakade":
            raise ValueError("CPI needs gamma: the operator should expose .mdp or .gamma.")

        def advantage() -> float | np.ndarray:
            value = rules.read_advantage(self, g.advantage,
                                         lambda: exact_advantage(operator, self.pi, g.policy))
            if np.any(np.isnan(value)):
                raise ValueError(
                    f"{self.name}'s step reads the greedy operator's estimate of the policy "
                    f"advantage, but {type(operator).__name__} returned none (Greedy.advantage "
                    f"is NaN): give its Greedy results an advantage estimate, or take it from "
                    f"the model with advantage='exact' (make_scheme('{self.name.lower()}', "
                    f"advantage='exact'); in a sweep, scheme_options = {{advantage = "
                    f"\"exact\"}}).")
            return value

        return float(rules.step_size(self, advantage, gamma, r_max))

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """One iteration: greedy under d_{pi_k,nu}, the step (and line search), the fold."""
        if self.stopped:
            return Step(stopped=True, alpha=0.0)
        rho = Occupancy(self.pi)
        g = greedy_step(operator, self.pi, rho, rng)
        alpha = self.step_of(g, operator)
        if alpha == 0.0:
            self.stopped = True
            return Step(target=self.pi, rho=rho, greedy=g, alpha=0.0, stopped=True)
        if self.line_search is not None:
            alpha = self.search(alpha, g.policy, operator, rng)
        target, self.pi = self.pi, fold_in(self.pi, g.policy, alpha)
        return Step(target=target, rho=rho, greedy=g, alpha=alpha)

    def search(self, alpha: float, new: Policy, operator: GreedyOperator,
               rng: np.random.Generator) -> float:
        """The step of the candidates min(2^i alpha, 1) that ``line_search`` picks.

        Candidates are scored by ``operator.value`` (its estimate of nu v), smallest step
        first, then the current policy (rule ``"largest-improving"``).
        """
        _, steps = rules.line_search_steps([alpha])
        scores = [operator.value(fold_in(self.pi, new, a), rng) for a in steps]
        baseline = None
        if self.line_search == "largest-improving":
            baseline = [operator.value(self.pi, rng)] * len(steps)
        chosen = rules.choose_steps([0] * len(steps), scores, self.line_search or "best",
                                    baseline)
        return float(steps[int(chosen[0])])

    @property
    def output(self) -> Policy:
        """pi_k, a mixture of the greedy policies."""
        return self.pi


def exact_advantage(operator: GreedyOperator, pi: Policy, new: Policy) -> float:
    """d_{pi,nu} (T_{pi'} v_pi - v_pi), pi' = ``new``, with the operator's model (value units)."""
    mdp = getattr(operator, "mdp", None)
    if mdp is None:
        raise ValueError("CPI(advantage='exact') needs the model: the operator has no .mdp; "
                         "use advantage='operator' with a model-free operator.")
    b = backend(mdp)
    return float(policy_advantage(b.occupancy(pi), q_values(mdp, b.value(pi)),
                                  stationary_table(pi, mdp), action_table(new, mdp)))


class CPIPlus(CPI):
    """CPI+: CPI whose step is chosen among min(2^i alpha_CPI, 1) by estimated nu-value.

    Args:
        epsilon, r_max, advantage: as :class:`CPI`.
        line_search: how the step is picked among the candidates (``rules.LINE_SEARCH_RULES``):
            ``"best"`` (default: the best estimated nu-value, the smaller step on ties),
            ``"largest-improving"`` or ``"doubling"``.
        alpha_min: the smallest candidate step instead of CPI's own (None, the default:
            CPI's step and its stopping rule). Where gamma = 1 (games that end, such as
            Tetris) CPI's step ``(1 - gamma)(A - epsilon/3)/(4R)`` is 0 and CPI+ would stop at
            once; with ``alpha_min`` the candidates are min(2^i alpha_min, 1) and it never
            stops, as CPI(alpha) does not.
    """

    name = "CPI+"
    params = _CPI_PARAMS | {"line_search": param(str, "best", choices=rules.LINE_SEARCH_RULES),
                            "alpha_min": param(float | None, None, gt=0, le=1)}
    alpha_min: float | None

    def __init__(self, epsilon: float | None = None, r_max: float | None = None,
                 advantage: str = "operator", line_search: str = "best",
                 alpha_min: float | None = None) -> None:
        set_params(self, epsilon=epsilon, r_max=r_max, advantage=advantage,
                   line_search=line_search, alpha_min=alpha_min)


class CPIAlpha(CPI):
    """CPI(alpha): CPI with a fixed step alpha and no stopping rule (paper: alpha = 0.1)."""

    params = {"alpha": ALPHA}
    alpha: float  # set by set_params
    step_rule = "fixed"
    advantage = "operator"  # not read: the step is fixed

    def __init__(self, alpha: float = 0.1) -> None:
        set_params(self, alpha=alpha)
        self.name = f"CPI({self.alpha:g})"
