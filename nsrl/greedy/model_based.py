"""Model-based greedy operators: the exact one, and the paper's noisy projection.

The paper's approximate greedy operator (Scherrer 2014, suppl. "Domain and Approximations"):
``G_eps(rho, v) = greedy(Pi_{Phi,rho}(v + u(iota)))``: perturb v with uniform white noise of
amplitude iota, project it on span(Phi) by rho-weighted least squares, take the exact greedy
policy of the projection with the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from nsrl.exact import backend, greedy_actions, q_values
from nsrl.greedy.base import Greedy, Rho, policy_advantage, rho_array
from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory
from nsrl.params import param, set_params
from nsrl.policies import AnyPolicy, Deterministic, NonStationary, stationary_table


def tie_broken_argmax(q: np.ndarray, tie: float) -> np.ndarray:
    """Per row, the lowest index whose q is within ``tie`` of the row's maximum.

    Examples:
        >>> tie_broken_argmax(np.array([[1.0, 1.0 + 1e-12, 0.0]]), 1e-9)
        array([0])
        >>> tie_broken_argmax(np.array([[1.0, 1.0 + 1e-12, 0.0]]), 0.0)
        array([1])
    """
    if tie <= 0.0:
        return np.argmax(q, axis=1)
    return np.argmax(q >= q.max(axis=1, keepdims=True) - tie, axis=1)


class _ModelOperator:
    """Shared plumbing of the operators that know the model."""

    def __init__(self, mdp: FiniteMDP) -> None:
        self.mdp = mdp
        self._backend = backend(mdp)
        # Values above the dense size are certified within value_tol, not exact: two solves
        # of one value (other warm starts, other schemes before it in the shard) may differ
        # by 2 value_tol, and a q by 2 gamma value_tol. Actions whose q are that close are
        # ties, broken to the lowest index, so that the greedy policy does not depend on
        # which solve came first. Dense values are exact: plain argmax, bit for bit as before.
        b = self._backend
        self._tie = 0.0 if b.dense else 4.0 * mdp.gamma * b.value_tol

    def rho_array(self, rho: Rho) -> np.ndarray:
        """The distribution rho as an array over states."""
        return rho_array(self.mdp, rho)

    def value(self, policy: AnyPolicy, rng: np.random.Generator | None = None) -> float:
        """nu v_pi, exactly."""
        return float(self.mdp.start @ self._backend.value(policy))

    def _result(self, target: AnyPolicy, rho_arr: np.ndarray, v_hat: np.ndarray) -> Greedy:
        q = q_values(self.mdp, v_hat)
        actions = tie_broken_argmax(q, self._tie)
        advantage = float("nan")
        if not isinstance(target, NonStationary):
            table = stationary_table(target, self.mdp)
            advantage = float(policy_advantage(rho_arr, q, table, actions))
        return Greedy(Deterministic(actions), advantage)


class ExactGreedy(_ModelOperator):
    """The exact greedy operator: greedy(v_target) with the model (epsilon = 0).

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.garnet(10, 2, 2, seed=0)
        >>> op = ExactGreedy(mdp)
        >>> op.greedy(nsrl.constant(), nsrl.Nu(), None).policy.actions.shape
        (10,)
    """

    def greedy(self, target: AnyPolicy, rho: Rho,
               rng: np.random.Generator | None = None) -> Greedy:
        """The exact greedy policy w.r.t. v_target; ties go to the lowest action."""
        v = self._backend.value(target)
        return self._result(target, self.rho_array(rho), v)


NOISE_MODELS = ("relative", "absolute", "span")
VALUE_ESTIMATES = ("exact", "estimated")
# The law of Phi's entries. The paper says only "p features"; the Garnet draws them U[0, 1]
# and the operator maps each entry x by the law (same instance seed, same draws):
# "uniform" x (U[0, 1]); "centred" 2x - 1 (U[-1, 1]); "gaussian" the normal quantile of x
# (N(0, 1)); "binary" 1[x >= 1/2] (Bernoulli(1/2)).
FEATURE_LAWS = ("uniform", "centred", "gaussian", "binary")
# Relative noise amplitudes beyond this only drown the values more (at 1e6 the greedy choice
# is already uniformly random) and approach float64 overflow (noise 1e308: OverflowError).
NOISE_MAX = 1e6


def perturb(v: np.ndarray, u: np.ndarray, noise_model: str) -> np.ndarray:
    """v + u(iota) by the noise model, for ``u`` drawn U[-iota, iota] (one per state).

    ``"relative"``: ``v(s) (1 + u(s))``, the paper's "10%" read as relative (default);
    ``"absolute"``: ``v(s) + u(s)``; ``"span"``: ``v(s) + u(s) (max v - min v)``, noise scaled to
    the value's span. Works on a batch ``v[..., s]`` too (the batched engines call it).
    """
    if noise_model == "relative":
        return v * (1.0 + u)
    if noise_model == "absolute":
        return v + u
    if noise_model == "span":
        return v + u * (v.max(axis=-1, keepdims=True) - v.min(axis=-1, keepdims=True))
    raise ValueError(f"noise_model should be one of {', '.join(NOISE_MODELS)}, got "
                     f"{noise_model!r}; e.g. noise_model='relative'.")


def projection_features(phi: np.ndarray, constant_feature: bool,
                        feature_law: str = "uniform") -> np.ndarray:
    """Phi mapped by ``feature_law``, with a column of ones appended when ``constant_feature``.

    The laws are :data:`FEATURE_LAWS`. With the constant feature, the projection keeps the
    rho-mean of the projected value.

    Examples:
        >>> projection_features(np.array([[0.25], [0.75]]), True, "centred").tolist()
        [[-0.5, 1.0], [0.5, 1.0]]
    """
    if feature_law == "centred":
        phi = 2.0 * phi - 1.0
    elif feature_law == "gaussian":
        from scipy.special import ndtri  # the N(0, 1) quantile; U[0, 1] entries are in (0, 1)

        phi = ndtri(np.clip(phi, 1e-12, 1.0 - 1e-12))
    elif feature_law == "binary":
        phi = (phi >= 0.5).astype(np.float64)
    elif feature_law != "uniform":
        raise ValueError(f"feature_law should be one of {', '.join(FEATURE_LAWS)}, got "
                         f"{feature_law!r}; e.g. feature_law='uniform'.")
    return np.hstack([phi, np.ones((phi.shape[0], 1))]) if constant_feature else phi


class ProjectedGreedy(_ModelOperator):
    """The paper's operator greedy(Pi_{Phi,rho}(v + u(iota))).

    Args:
        mdp: the FiniteMDP (its ``features`` are Phi unless ``features`` is given).
        noise: amplitude iota of the uniform white noise (paper: 0.1).
        noise_model: how the noise enters (:func:`perturb`): ``"relative"`` (default, our
            reading of the paper's "10%"), ``"absolute"`` or ``"span"``.
        constant_feature: append a constant feature to Phi (the paper does not).
        feature_law: the law of Phi's entries (:data:`FEATURE_LAWS`): ``"uniform"``
            (default, the Garnet's U[0, 1]), ``"centred"``, ``"gaussian"`` or ``"binary"``,
            each a map of the same draws (:func:`projection_features`).
        value_estimate: what :meth:`value` returns (CPI+'s line-search scores): ``"exact"``
            (default, nu v_pi from the model) or ``"estimated"`` (nu Pi_{Phi,nu}(v_pi + u),
            the operator's own noisy estimate, which draws noise). ``value=`` is its old
            spelling (deprecated).
        features: Phi, shape (n_states, p); defaults to ``mdp.features``.

    The projection is the rho-weighted least-squares fit
    ``theta = argmin sum_s rho(s) (Phi theta - v_hat)(s)^2``, solved with ``lstsq`` on
    ``sqrt(rho) Phi`` so that a rho with small support (a rank-deficient system) still has
    the minimum-norm solution.
    """

    # The options, declared once: this class, the batched engines, sweeps and the CLI read them
    # (the sweep field, the keyword, the attribute and the flag ``--value-estimate`` are one name).
    params = {
        "noise": param(float, 0.1, ge=0, le=NOISE_MAX),
        "noise_model": param(str, "relative", choices=NOISE_MODELS),
        "constant_feature": param(bool, False),
        "value_estimate": param(str, "exact", choices=VALUE_ESTIMATES),
        "feature_law": param(str, "uniform", choices=FEATURE_LAWS),
    }
    # set from params by set_params (declared here for type checkers)
    noise: float
    noise_model: str
    constant_feature: bool
    value_estimate: str
    feature_law: str

    def __init__(self, mdp: FiniteMDP, noise: float = params["noise"].default,
                 noise_model: str = params["noise_model"].default,
                 constant_feature: bool = params["constant_feature"].default,
                 value_estimate: str = params["value_estimate"].default,
                 features: npt.ArrayLike | None = None,
                 feature_law: str = params["feature_law"].default, **deprecated: Any) -> None:
        super().__init__(mdp)
        p = mdp.n_features if features is None else np.shape(features)[-1]
        if p:  # Phi, sqrt(rho) Phi, the SVD's U (kept) and its workspace, before any draw
            check_memory(4 * 8.0 * mdp.n_states * p,
                         f"the projected operator on {mdp.n_states} states x {p} features",
                         "draw the model with fewer features (garnet(..., n_features=100)) or "
                         "use a sample-based operator (LSTDQ with features='onehot')")
        phi = mdp.features if features is None else np.asarray(features, dtype=np.float64)
        if phi is None:
            raise ValueError(
                "ProjectedGreedy needs features Phi: the MDP has none; pass features= "
                "(an (n_states, p) array) or use nsrl.garnet(...), which draws them."
            )
        if phi.ndim != 2 or phi.shape[0] != mdp.n_states:
            raise ValueError(f"features should have shape ({mdp.n_states}, p), got {phi.shape}.")
        given = {"noise": noise, "noise_model": noise_model, "constant_feature": constant_feature,
                 "value_estimate": value_estimate, "feature_law": feature_law}
        if "value" in deprecated:  # the old spelling, given explicitly: it is what was meant
            given.pop("value_estimate")
        set_params(self, **given, **deprecated)
        self.features = projection_features(phi, self.constant_feature, self.feature_law)
        # the last rho, and once it came twice, (U, 1 / s with the cutoff's zeros, V^T) of
        # sqrt(rho) Phi's thin SVD
        self._kept: tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray] | None] \
            | None = None
        self.custom_features = features is not None  # the batched engines project on mdp's Phi

    def get_params(self) -> dict:
        """The declared options as set (:attr:`params`), e.g. to build the batched path."""
        return {name: getattr(self, name) for name in self.params}

    def perturb(self, v: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
        """v + u(iota) by the noise model (:func:`perturb`); one uniform per state."""
        if self.noise == 0.0:
            return np.array(v)
        if rng is None:
            raise ValueError("ProjectedGreedy draws noise: pass rng=np.random.Generator.")
        return perturb(v, rng.uniform(-self.noise, self.noise, size=v.shape), self.noise_model)

    def project(self, v: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """Pi_{Phi,rho} v: the rho-weighted least-squares projection on span(Phi).

        The minimum-norm least-squares solution: ``lstsq`` on ``sqrt(rho) Phi`` for a new
        rho; when the same rho comes again (nu, for API, NSPI(m) and PSDP at every call), its
        thin SVD is computed once and kept, with ``lstsq``'s rank cutoff (singular values
        below ``eps max(n, p) s_max`` dropped), and each later call costs two products with
        Phi's size instead of a factorisation.
        """
        w = np.sqrt(rho)
        kept = self._kept
        if kept is None or not np.array_equal(kept[0], rho):
            self._kept = (np.array(rho), None)
            theta = np.linalg.lstsq(w[:, None] * self.features, w * v, rcond=None)[0]
            return self.features @ theta
        svd = kept[1]
        if svd is None:
            u, s, vt = np.linalg.svd(w[:, None] * self.features, full_matrices=False)
            cutoff = np.finfo(np.float64).eps * max(self.features.shape) * s[0]
            svd = (u, np.divide(1.0, s, out=np.zeros_like(s), where=s > cutoff), vt)
            self._kept = (kept[0], svd)
        u, inverse, vt = svd
        return self.features @ (vt.T @ (inverse * (u.T @ (w * v))))

    def greedy(self, target: AnyPolicy, rho: Rho, rng: np.random.Generator) -> Greedy:
        """The paper's step: greedy(Pi_{Phi,rho}(v_target + u(iota)))."""
        rho_arr = self.rho_array(rho)
        v_hat = self.project(self.perturb(self._backend.value(target), rng), rho_arr)
        return self._result(target, rho_arr, v_hat)

    def value(self, policy: AnyPolicy, rng: np.random.Generator | None = None) -> float:
        """nu v_pi: exact, or the noisy projected estimate (``value_estimate="estimated"``)."""
        v = self._backend.value(policy)
        if self.value_estimate == "exact":
            return float(self.mdp.start @ v)
        return float(self.mdp.start @ self.project(self.perturb(v, rng), self.mdp.start))


__all__ = ["FEATURE_LAWS", "NOISE_MAX", "NOISE_MODELS", "VALUE_ESTIMATES", "ExactGreedy",
           "ProjectedGreedy", "greedy_actions", "perturb", "projection_features",
           "tie_broken_argmax"]
