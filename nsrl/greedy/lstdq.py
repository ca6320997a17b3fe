"""LSTD-Q (Lagoudakis & Parr 2003), ridge-regularised, for every target kind of the schemes.

Q is linear in state-action features ``psi(x, a) = e_a (x) phi(x)`` (one block of the state
features phi per action). From transitions (x, a, r, x') the fixed point of the projected
Bellman equation ``Q = Pi(r + gamma P^pi Q)`` solves ``(C + lambda I) theta = b`` with

    C = E[psi (psi - gamma psi_bar')^T],   b = E[psi r],
    psi_bar' = sum_a' pi(a' | x') psi(x', a')   (0 after a termination),

the expectation over the data (weights optional), lambda the ridge. The targets:

* **stationary or mixture** pi: as above; a mixture's ``pi(a' | x')`` is the weighted sum of
  its components' actions (no sampling of a component);
* **periodic loop** (sigma)^inf = p_0 ... p_{m-1} of NSPI(m) (the extension to
  non-stationary policies in the paper's footnote to eq. nspi): phase-augmented features.
  With ``W_j(x, a) = r + gamma E v_j(x')`` the value of taking a and then following the loop
  from phase j, ``W_j(x, a) = r + gamma E W_{j+1 mod m}(x', p_j(x'))``: each transition
  enters the m phase blocks of one (m d)-dimensional LSTD system; the greedy step is
  greedy w.r.t. v_0, i.e. ``argmax_a W_0(x, a)``;
* **finite sequence** sigma_k = p_0 ... p_{k-1} of PSDP: the same recursion ends with
  ``W_k(x, a) = r + gamma E v_empty(x')`` (v_empty = r for state rewards, read as
  ``W_{k+1} = r`` averaged over actions; 0 otherwise). The system is block triangular, so
  it is solved backwards: k + 1 (or k + 2) ridge regressions.

No reset-to-state is needed: data come from walks from the env's reset (``nsrl.greedy.sampling``),
so LSTD-Q runs on any Gymnasium env with discrete actions.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from nsrl.greedy.base import Greedy, Occupancy
from nsrl.greedy.features import EstimatorPolicy, make_features
from nsrl.greedy.sampling import action_probs, make_sampler
from nsrl.policies import NonStationary


def sa_features(phi: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """sum_a probs[:, a] psi(x, a): shape (n, n_actions * p); one-hot probs give psi(x, a)."""
    return (probs[:, :, None] * phi[:, None, :]).reshape(len(phi), -1)


class Design:
    """The weighted design E_w[psi(x, a) y^T] with psi(x, a) = e_a (x) phi(x), by blocks.

    psi is one-hot over actions, so its products are computed per action block: the Gram
    matrix is block diagonal, and ``cross`` costs n p k instead of n A p k.
    """

    def __init__(self, phi, actions, n_actions: int, weights):
        w = weights / weights.sum()
        self.p, self.n_actions = phi.shape[1], n_actions
        self.blocks = [(np.flatnonzero(actions == a), a) for a in range(n_actions)]
        self.wphi = w[:, None] * phi
        self.phi = phi

    def cross(self, y) -> np.ndarray:
        """E_w[psi y^T]: shape (A p,) for y of shape (n,), (A p, k) for (n, k)."""
        out = np.zeros((self.n_actions * self.p,) + np.shape(y)[1:])
        for idx, a in self.blocks:
            out[a * self.p:(a + 1) * self.p] = self.wphi[idx].T @ y[idx]
        return out

    def gram(self) -> np.ndarray:
        """E_w[psi psi^T], block diagonal."""
        d = self.n_actions * self.p
        out = np.zeros((d, d))
        for idx, a in self.blocks:
            sl = slice(a * self.p, (a + 1) * self.p)
            out[sl, sl] = self.wphi[idx].T @ self.phi[idx]
        return out


class RidgeSolver:
    """argmin_theta E_w[(psi theta - y)^2] + ridge |theta|^2 for many targets y.

    The Gram matrix is factored once: the backward recursion of a finite sequence solves
    one regression per policy on the same features.
    """

    def __init__(self, design: Design, ridge: float):
        self.design = design
        self.factor = cho_factor(design.gram() + ridge * np.eye(design.gram().shape[0]))

    def __call__(self, y) -> np.ndarray:
        """theta for the targets y."""
        return cho_solve(self.factor, self.design.cross(y))


def lstdq_loop(design: Design, psi_next, rewards, gamma, ridge: float) -> np.ndarray:
    """Phase-augmented LSTD-Q: ``psi_next[j]`` is psi_bar' under p_j; returns theta_0..m-1."""
    m, d = len(psi_next), design.n_actions * design.p
    C, b = design.gram(), design.cross(rewards)
    system = ridge * np.eye(m * d)
    for j, nxt in enumerate(psi_next):
        k = (j + 1) % m
        system[j * d:(j + 1) * d, j * d:(j + 1) * d] += C
        system[j * d:(j + 1) * d, k * d:(k + 1) * d] -= gamma * design.cross(nxt)
    return np.linalg.solve(system, np.tile(b, m)).reshape(m, d)


class LinearQ:
    """Q(., a) = phi theta_a, with a scikit-learn-like ``predict``."""

    def __init__(self, theta: np.ndarray):
        self.theta = np.asarray(theta)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """phi(x) theta_a for a batch of features."""
        return x @ self.theta


class LSTDQ:
    """LSTD-Q greedy operator (see the module docstring).

    Args:
        env: any Gymnasium env with discrete actions, or the native vector env (fast path).
        budget: transitions drawn per greedy call.
        features: state features (see :func:`nsrl.greedy.features.make_features`).
        ridge: the ridge lambda (on the normalised system).
        explore: for rho = d_{pi,nu} (CPI family), the probability of a uniform action in
            the behaviour that collects data (the rest follows pi); rho = nu uses uniform
            actions only. Visited states follow d_{b,nu} of that behaviour b.
        value_rollouts: rollouts per ``value`` call (default: budget (1 - gamma)).
        gamma: discount, for an env without a model.

    Examples:
        >>> import numpy as np, nsrl
        >>> from nsrl.envs import FiniteMDPVectorEnv
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 2, seed=0), num_envs=1)
        >>> op = LSTDQ(env, budget=2000)
        >>> op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(0)).samples
        2000
    """

    def __init__(self, env, budget: int, *, features=None, ridge: float = 1e-6,
                 explore: float = 0.3, value_rollouts=None, gamma=None):
        self.sampler = make_sampler(env, gamma)
        self.gamma, self.n_actions = self.sampler.gamma, self.sampler.n_actions
        if self.sampler.mdp is not None:
            self.mdp = self.sampler.mdp
        if isinstance(budget, bool) or int(budget) != budget or budget < 1:
            raise ValueError(f"budget should be a positive int (transitions), got {budget!r}.")
        if not (ridge >= 0 and 0.0 <= explore <= 1.0):
            raise ValueError(f"need ridge >= 0 and explore in [0, 1], got {ridge}, {explore}.")
        self.budget, self.ridge, self.explore = int(budget), float(ridge), float(explore)
        self.features = make_features(features, env, self.sampler.mdp)
        self.value_rollouts, self.samples_used = value_rollouts, 0

    def _psi_bar(self, pi, data, phi_next, rng) -> np.ndarray:
        probs = action_probs(self.sampler, pi, data.next_states, data.next_obs, rng)
        return sa_features(phi_next, probs) * (~data.done)[:, None]

    def solve(self, target, data, rng, weights=None) -> np.ndarray:
        """theta_0 of shape (n_actions, p), ``W_0(x, a) = phi(x) theta_0[a]``, from ``data``.

        ``data`` is a :class:`nsrl.greedy.sampling.Transitions`; W_0 is Q_target for a stationary
        target; ``weights`` weigh the transitions (e.g. P(x' | x, a) for exhaustive data).
        """
        phi, phi_next = self.features(data.obs), self.features(data.next_obs)
        r = np.asarray(data.rewards, dtype=np.float64)
        w = np.ones(len(r)) if weights is None else np.asarray(weights, dtype=np.float64)
        design = Design(phi, np.asarray(data.actions), self.n_actions, w)
        if not isinstance(target, NonStationary) or target.loop:
            pols = target.policies if isinstance(target, NonStationary) else [target]
            nxt = [self._psi_bar(p, data, phi_next, rng) for p in pols]
            return lstdq_loop(design, nxt, r, self.gamma, self.ridge)[0].reshape(
                self.n_actions, -1)
        regress, y = RidgeSolver(design, self.ridge), r
        if self.sampler.state_reward:  # v_empty(x') = r(x'): W_{k+1} = r, any action
            uniform = np.full((len(r), self.n_actions), 1.0 / self.n_actions)
            live = (~data.done)[:, None]
            y = r + self.gamma * (sa_features(phi_next, uniform) * live) @ regress(r)
        theta = regress(y)
        for p in reversed(target.policies):
            theta = regress(r + self.gamma * self._psi_bar(p, data, phi_next, rng) @ theta)
        return theta.reshape(self.n_actions, -1)

    def greedy(self, target, rho, rng) -> Greedy:
        """Greedy w.r.t. the LSTD-Q estimate of Q_target from ``budget`` fresh transitions."""
        behaviour = rho.policy if isinstance(rho, Occupancy) else None
        explore = self.explore if behaviour is not None else 1.0
        data = self.sampler.transitions(self.budget, rng, behaviour, explore)
        theta = self.solve(target, data, rng)
        policy = EstimatorPolicy(self.features, regressors=[LinearQ(t) for t in theta],
                                 observe=self.sampler.observe)
        q = self.features(data.obs) @ theta.T
        advantage = float("nan")
        if not isinstance(target, NonStationary):
            probs = action_probs(self.sampler, target, data.states, data.obs, rng)
            chosen = q[np.arange(len(q)), policy.act(data.obs)]
            advantage = float(np.mean(chosen - (probs * q).sum(axis=1)))
        self.samples_used += len(data.rewards)
        return Greedy(policy, advantage, len(data.rewards))

    def value(self, policy, rng) -> float:
        """Monte-Carlo estimate of nu v_policy (geometric horizon); its samples are counted."""
        n = self.value_rollouts or max(1, int(self.budget * (1.0 - self.gamma)))
        returns, count = self.sampler.from_start(policy, n, rng)
        self.samples_used += count
        return float(returns.mean())
