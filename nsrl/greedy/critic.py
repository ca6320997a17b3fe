"""Critics for truncated rollouts: the value gamma^m V_hat(s_m) that ends an m-step rollout.

Classification-based modified policy iteration (CBMPI; Scherrer, Ghavamzadeh, Gabillon,
Lesner & Geist, JMLR 2015) estimates ``Q_pi(s, a)`` by the return of an m-step rollout (take
a, then follow pi) plus ``gamma^m V_hat(s_m)``, where V_hat comes from earlier data. The
rollout variance then grows with m instead of the effective horizon 1 / (1 - gamma); the
bias is ``gamma^m`` times the critic's error, and cancels exactly where that error is a
constant (every action of a state bootstraps at the same step m).

**The tail.** After the first action and m - 1 steps of the target, what remains to be
followed from ``s_m`` is the target's *tail* (:func:`tail`): the target itself when it is
stationary; the loop rotated to the phase reached, ``(m - 1) mod period``, for a periodic
loop (NSPI, PSDP's output); and for PSDP's finite sequence ``sigma_k = pi_k ... pi_1`` the
suffix ``sigma_{k-m+1} = pi_{k-m+1} ... pi_1``, an earlier target. A finite sequence that
ends before m has no tail: its rollouts run to the end (no critic, no bias).

**RegressionCritic** (the default) fits V_hat of a tail whose first policy is ``pi_0`` on the
Q estimates an earlier greedy call recorded: ``y(s) = sum_a pi_0(a|s) Q_hat(s, a)`` at that
call's states, regressed on the state features by a clone of any scikit-learn regressor.
The call used is the one that *returned* ``pi_0`` when there is one, else the latest:

* PSDP: sigma_{k-m+1} = pi_{k-m+1} sigma_{k-m}, and the call that returned pi_{k-m+1} had
  target sigma_{k-m}: ``y`` is an unbiased sample of v_{sigma_{k-m+1}}(s) (given unbiased
  Q there), so the estimate is consistent;
* API: the tail is pi_k, returned by the previous call of target pi_{k-1}: ``y`` estimates
  ``T_{pi_k} v_{pi_{k-1}}`` (a modified-policy-iteration value, as in CBMPI): exact once the
  policy stops changing, biased while it changes;
* CPI's mixtures and NSPI's loops: likewise one improvement step behind.

:class:`ExactCritic` returns the exact value of the tail from the model: with it the m-step
estimate is unbiased for every target (a test oracle, and the best a critic can do).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import clone, is_regressor
from sklearn.utils.validation import has_fit_parameter

from nsrl.policies import NonStationary


def tail(target, m: int):
    """What is left to follow at s_m, after the first action and m - 1 steps of ``target``.

    Returns None when a finite sequence ends before (it needs no critic).
    """
    if not isinstance(target, NonStationary):
        return target
    if target.loop:
        r = (m - 1) % len(target)
        return target if r == 0 else NonStationary(target.policies[r:] + target.policies[:r],
                                                   loop=True)
    if m - 1 >= len(target):
        return None
    out = target
    for _ in range(m - 1):  # PSDP's suffixes are the parents: the exact backend caches them
        out = out.parent
        if out is None:
            return NonStationary(target.policies[m - 1:], loop=False)
    return out


def first_policy(policy):
    """The stationary policy acting first."""
    return policy.policies[0] if isinstance(policy, NonStationary) else policy


@dataclass
class Record:
    """What a greedy call leaves for the critic: its target, result, states and Q estimates.

    Repeated states are merged: ``q`` is the mean estimate of ``counts`` draws.
    """

    target: object
    policy: object
    states: np.ndarray
    obs: np.ndarray
    q: np.ndarray
    counts: np.ndarray
    first: tuple | None = None  # (s, a, r, s') of every rollout's first transition


def fit_weighted(estimator, x, y, counts=None):
    """Least squares on rows that stand for ``counts`` draws each (means of repeated states).

    Weighting a mean by its count has the same minimiser as the repeated rows; an estimator
    whose ``fit`` takes no ``sample_weight`` gets the rows repeated.
    """
    if counts is None or np.all(counts == 1):
        return estimator.fit(x, y)
    if has_fit_parameter(estimator, "sample_weight"):
        return estimator.fit(x, y, sample_weight=counts)
    rows = np.repeat(np.arange(len(y)), np.asarray(counts, dtype=np.int64))
    return estimator.fit(x[rows], y[rows])


class RegressionCritic:
    """V_hat of a tail by regression on the Q estimates of an earlier greedy call.

    Args:
        regressor: any scikit-learn regressor (cloned at each fit).
        features: the state-feature map (a :class:`nsrl.greedy.features.StateFeatures`).
        sampler: the operator's sampler (for the action probabilities of the tail's first
            policy at the recorded states).
        memory: how many recorded calls are kept (PSDP with m needs the last m).
    """

    def __init__(self, regressor, features, sampler, memory: int):
        self.regressor, self.features, self.sampler = regressor, features, sampler
        self.records: list[Record] = []
        self.memory = int(memory)

    def record(self, rec: Record) -> None:
        """Keep the data of a finished greedy call (its Q estimates, not its transitions)."""
        self.records = (self.records + [replace(rec, first=None)])[-self.memory:]

    def source(self, tail_policy) -> Record | None:
        """The recorded call whose Q estimates give V of ``tail_policy``, or None."""
        pi0 = first_policy(tail_policy)
        for rec in reversed(self.records):
            if rec.policy is pi0:
                return rec
        return self.records[-1] if self.records else None

    def fit(self, tail_policy, rng):
        """A regressor fitted to V of ``tail_policy``, or None without data."""
        from nsrl.greedy.sampling import action_probs

        rec = self.source(tail_policy)
        if rec is None:
            return None
        probs = action_probs(self.sampler, first_policy(tail_policy), rec.states, rec.obs, rng)
        y = (probs * rec.q).sum(axis=1)
        return fit_weighted(clone(self.regressor), self.features(rec.obs), y, rec.counts)

    def values(self, tail_policy, states, obs, rng) -> np.ndarray | None:
        """V_hat(tail) at ``states`` (observations ``obs``), or None without data."""
        reg = self.fit(tail_policy, rng)
        if reg is None:
            return None
        return np.asarray(reg.predict(self.features(obs)), dtype=np.float64)

    def ready(self, tail_policy) -> bool:
        """Whether :meth:`values` has data for ``tail_policy``."""
        return bool(self.records)


class LSTDCritic:
    """LSTD(0) with one-hot features: the value of a stationary tail on the empirical model.

    The data are the first transitions ``(s, a, r, s')`` of the previous greedy call's
    rollouts: every action of every sampled state, kept as counts. For a stationary tail
    pi, pair (s, a) gets the weight ``A pi(a|s)`` (first actions are uniform over the A
    actions), and V is the exact value of pi on the weighted empirical model,
    ``(I - gamma P_hat_pi) V = r_hat_pi``, on the states the call sampled: LSTD(0) with
    one-hot features is this solve. Unlike the regression critic, V does not chain earlier
    critics (the previous call's transitions evaluate the current target directly), so it
    is consistent for any stationary target as the previous call's budget grows. States the
    call did not sample, and tails that are not stationary (loops, PSDP's sequences), get
    the values of a :class:`RegressionCritic` on the same records. Needs model-index states.
    """

    def __init__(self, fallback: RegressionCritic, n_states: int, n_actions: int):
        self.fallback, self.S, self.A = fallback, int(n_states), int(n_actions)
        self.stats = None

    def record(self, rec: Record) -> None:
        """Keep the call's first transitions as counts (only the latest call's)."""
        self.fallback.record(rec)
        if rec.first is None:
            self.stats = None
            return
        s, a, r, s1 = (np.asarray(x) for x in rec.first)
        sa = s.astype(np.int64) * self.A + a
        keys, counts = np.unique(sa * self.S + s1, return_counts=True)
        self.stats = (np.bincount(sa, minlength=self.S * self.A),
                      np.bincount(sa, r, minlength=self.S * self.A), keys, counts)

    def ready(self, tail_policy) -> bool:
        """Whether :meth:`values` has data."""
        return self.fallback.ready(tail_policy)

    def values(self, tail_policy, states, obs, rng) -> np.ndarray | None:
        """V_hat(tail) at ``states``."""
        if isinstance(tail_policy, NonStationary) or self.stats is None:
            return self.fallback.values(tail_policy, states, obs, rng)
        from nsrl.greedy.sampling import action_probs

        n_sa, r_sa, keys, counts = self.stats
        S, sampler, everything = self.S, self.fallback.sampler, np.arange(self.S)
        w_sa = self.A * action_probs(sampler, tail_policy, everything,
                                     sampler.observe(everything), rng).reshape(-1)
        n = np.bincount(everything.repeat(self.A), w_sa * n_sa, minlength=S)
        has = n > 0
        r_hat = np.bincount(everything.repeat(self.A), w_sa * r_sa, minlength=S)[has] / n[has]
        v = np.zeros(S)
        rest = np.flatnonzero(~has)  # no data: the regression critic's values
        if len(rest):
            v[rest] = self.fallback.values(tail_policy, rest, sampler.observe(rest), rng)
        v[has] = _empirical_value(keys, counts, w_sa, n, has, r_hat, v, S, self.A,
                                  sampler.gamma)
        return v[np.asarray(states, dtype=np.int64)]


_DENSE_CRITIC_MAX = 2000  # dense solve up to here, sparse LU above


def _empirical_value(keys, counts, w_sa, n, has, r_hat, v, S, A, gamma) -> np.ndarray:
    """V on the states with data: ``(I - gamma P_hat) V = r_hat + gamma P_hat V_rest``.

    Up to :data:`_DENSE_CRITIC_MAX` states a dense P_hat (S x S) and LAPACK, as before; above,
    the same system sparse (P_hat has at most one entry per distinct transition observed) and
    SuperLU: a dense S x S matrix is 60 GiB at 9 x 10^4 states.
    """
    if S <= _DENSE_CRITIC_MAX:
        P = np.zeros((S, S))
        np.add.at(P, (keys // (S * A), keys % S), w_sa[keys // S] * counts)
        P = P[has] / n[has, None]
        lhs = np.eye(int(has.sum())) - gamma * P[:, has]
        return np.linalg.solve(lhs, r_hat + gamma * P[:, ~has] @ v[~has])
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    s, s1 = keys // (S * A), keys % S
    keep = has[s]
    pos = np.cumsum(has) - 1  # row of each state with data
    P = sp.csr_matrix(((w_sa[keys // S] * counts)[keep] / n[s[keep]], (pos[s[keep]], s1[keep])),
                      shape=(int(has.sum()), S))
    lhs = sp.identity(P.shape[0], format="csc") - gamma * P[:, has].tocsc()
    return spsolve(lhs, r_hat + gamma * (P[:, ~has] @ v[~has]))


class ExactCritic:
    """The exact value of the tail, from the model (an oracle, for tests and studies)."""

    def __init__(self, mdp):
        from nsrl.exact import backend

        self.mdp, self._backend = mdp, backend(mdp)

    def record(self, rec: Record) -> None:
        """Nothing to learn."""

    def ready(self, tail_policy) -> bool:
        """Always."""
        return True

    def values(self, tail_policy, states, obs, rng) -> np.ndarray:
        """v_tail at ``states`` (model indices)."""
        return self._backend.value(tail_policy)[np.asarray(states, dtype=np.int64)]


def _is_regressor(x) -> bool:
    try:  # recent scikit-learn raises on objects that are not estimators at all
        return bool(is_regressor(x))
    except (AttributeError, TypeError):
        return False


def make_critic(critic, features, sampler, memory: int):
    """The critic object for the ``critic=`` argument of a rollout operator (None: none).

    ``critic`` is None, "lstd" (needs a finite model: :class:`LSTDCritic`, with a
    LinearRegression fallback), a scikit-learn regressor (:class:`RegressionCritic`), or an
    object with ``record``, ``ready`` and ``values`` (e.g. :class:`ExactCritic`).
    """
    if critic is None:
        return None
    if hasattr(critic, "values") and hasattr(critic, "record") and hasattr(critic, "ready"):
        return critic
    if isinstance(critic, str) and critic == "lstd":
        if sampler.mdp is None:
            raise ValueError("critic='lstd' needs an env with a finite model (state indices); "
                             "pass a scikit-learn regressor, e.g. critic=LinearRegression().")
        from sklearn.linear_model import LinearRegression

        return LSTDCritic(RegressionCritic(LinearRegression(), features, sampler, memory),
                          sampler.mdp.n_states, sampler.n_actions)
    if isinstance(critic, str) or not _is_regressor(critic):
        raise TypeError(
            f"critic should be 'lstd', a scikit-learn regressor (e.g. LinearRegression()), "
            f"an nsrl.greedy.critic.ExactCritic, or None for plain truncated rollouts; got "
            f"{critic!r}."
        )
    return RegressionCritic(critic, features, sampler, memory)
