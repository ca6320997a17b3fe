"""The performance bounds of Table 1 (Scherrer 2014), non-asymptotic, for measured errors.

Each bound is the last line of the paper's proof *before* the errors are replaced by their
maximum and the iteration count is chosen, so it holds at every iteration k for the errors
``eps_1 .. eps_k`` actually made. ``e_k = T v - T_{pi'_k} v`` is the greedy error vector of
step k (v: the value the step was greedy about, pi'_k: the deterministic policy returned) and
``eps_k`` bounds ``rho e_k``: rho = nu for API, API(alpha), PSDP, NSPI(m) and
rho = d_{pi_{k-1},nu} for CPI, CPI(alpha), CPI+ (the distribution the greedy operator is
given, eq. defgreedy). :func:`nsrl.run` with ``measure_errors=True`` records exactly these
``rho e_k`` in ``History.errors``.

Notation: ``g`` = gamma; ``c``, ``c*`` the coefficients c(i), c_pi*(i);
``h_m(i) = sum_{j>=0} g^(i+jm) c(i+jm)``; ``B_m(k) = sum_l max_{p in block l} eps_p``
over the blocks ``{k-lm-m+1, ..., k-lm}`` of [1, k]. The "V_max" terms of the paper are
replaced by the sup norms the inductions actually start from (all computed with the model,
none depends on the errors): ``D0 = ||v* - v_pi0||``, ``D_empty = ||v* - v_empty||`` and, for
PSDP's output loop, ``D_loop = max(v_empty - r_min / (1-g))`` (``v_empty - v_loop`` is at
most this, as every value is >= r_min / (1-g)).

Bounds on ``mu (v* - v_out(k))`` (appendix "Proofs for Table 1" and the supplement):

* PSDP: ``sum_{i<k} g^i c*(i) eps_{k-i} + g^k (D_empty + D_loop)``            [C(1)_pi*]
  and ``C_pi*/(1-g) sum_{i<=k} eps_i + g^k (D_empty + D_loop)``                [C_pi*]
  (eq. eq1 with mu (g P*)^i <= g^i c*(i) nu, resp. <= C_pi*/(1-g) nu; the loop over
  sigma_k loses at most ``g^k D_loop``).
* NSPI(m) (API = NSPI(1) has the first two), from eq. nspi:eq4:
  ``sum_{i<k} h_m(i) eps_{k-i} + g^k D0``                                      [C(2,m,0)]
  ``C(1,0)/(1-g) B_m(k) + g^k D0``                                             [C(1,0)/m]
  ``sum_{i<k} (g^i c*(i) + h_m(i) - g^i c(i)) eps_{k-i} + g^k D0``             [C(1)_pi*+...]
  ``C_pi*/(1-g) sum_{i<=k} eps_i + g^m C(1,m)/(1-g) B_m(k) + g^k D0``          [C_pi*+...]
  (the paper's table writes the last constant as g^m C(2,m,0)/(m(1-g^m)); following the
  proof's "same lines" from eq. nspi:eq3 to nspi:eq6 gives g^m C(1,m)/(1-g), used here.)
* API(alpha): ``C(1,0)/(1-g) sum_{i<=k} alpha_i eps_i + delta_k D0``            [C(1,0)]
* CPI, CPI(alpha), CPI+: ``C(1,0)/(1-g)^2 sum_{i<=k} alpha_i eps_i + delta_k D0`` [C(1,0)]
  with ``delta_k = prod_{i<=k} (1 - alpha_i (1-g))`` (supplement, Theorem 1; the extra
  1/(1-g) converts d-errors: ``d_{pi,nu} >= (1-g) nu``).
* CPI family, Kakade & Langford (2002): for the current policy itself,
  ``mu (v* - v_pi) <= C_pi*/(1-g)^2 d_{pi,nu}(T v_pi - v_pi)`` (performance difference
  lemma; see :func:`kakade_langford_bound`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from nsrl.exact import backend, check_mdp, q_values
from nsrl.model.mdp import FiniteMDP, check_distribution
from nsrl.policies import AnyPolicy, NonStationary, Policy
from nsrl.schemes import API, CPI, NSPI, PSDP, APIAlpha, History
from nsrl.schemes.base import Scheme
from nsrl.theory.concentrability import Concentrability, concentrability


def _convolve(h: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """out[k-1] = sum_{i<k} h(i) eps_{k-i} for k = 1..K (eps[p-1] = eps_p); inf * 0 = inf.

    An infinite coefficient stays infinite even against a zero error: nu e = 0 says nothing
    about e where nu = 0, which is where mu P ... puts the mass that makes c infinite.
    """
    K = eps.size
    h = h[:K]
    out = np.convolve(np.where(np.isinf(h), 0.0, h), eps)[:K]
    if np.isinf(h).any():
        out[int(np.argmax(np.isinf(h))) :] = np.inf
    return out


def _times(constant: float, x: np.ndarray) -> np.ndarray:
    """constant * x with inf * 0 = inf (see :func:`_convolve`)."""
    return np.full(x.shape, np.inf) if np.isinf(constant) else constant * x


def _block_max(eps: np.ndarray, m: int) -> np.ndarray:
    """B_m(k) = sum_l max_{p in {k-lm-m+1..k-lm}, p >= 1} eps_p, for k = 1..K."""
    out = np.empty(eps.size)
    for k in range(1, eps.size + 1):
        ends = np.arange(k, 0, -m)
        out[k - 1] = sum(float(eps[max(e - m, 0) : e].max()) for e in ends)
    return out


def _h(conc: Concentrability, K: int, m: int) -> np.ndarray:
    """h_m(i) = sum_{j>=0} g^(i+jm) c(i+jm) for i < K, as upper bounds (tail by c_tail)."""
    g, n = conc.gamma, conc.n_terms
    out = np.empty(K)
    for i in range(K):
        idx = np.arange(i, max(n, i + 1), m)
        values = conc.c_at(idx)
        if np.isinf(values).any() or np.isinf(conc.c_tail):
            out[i] = np.inf
            continue
        nxt = idx[-1] + m  # every index from here on is bounded by c_tail
        out[i] = float(g ** idx.astype(float) @ values) + g**nxt * conc.c_tail / (1 - g**m)
    return out


def _geometric(conc: Concentrability, K: int, which: str) -> np.ndarray:
    """g^i c*(i) (which="star") or g^i c(i), i < K (upper bounds beyond n)."""
    i = np.arange(K)
    values = conc.c_pi_star_at(i) if which == "star" else conc.c_at(i)
    return np.where(np.isinf(values), np.inf, conc.gamma**i * np.where(np.isinf(values), 0, values))


def _nspi(conc: Concentrability, eps: np.ndarray, m: int, d0: float,
          with_pi_star: bool = True) -> dict[str, np.ndarray]:
    g, K = conc.gamma, eps.size
    start = g ** np.arange(1, K + 1) * d0
    h = _h(conc, K + m, m)
    rows = {
        f"C(2,{m},0)": _convolve(h, eps) + start,
        f"C(1,0)/{m}": _times(conc.C1(0) / (1 - g), _block_max(eps, m)) + start,
    }
    if with_pi_star:
        # h_m(i) - g^i c(i) = sum_{j>=1} g^(i+jm) c(i+jm) = h_m(i+m)
        h_star = _geometric(conc, K, "star") + h[m : m + K]
        rows[f"C(1)_pi*+C(2,{m},{m})"] = _convolve(h_star, eps) + start
        second = _times(g**m * conc.C1(m) / (1 - g), _block_max(eps, m))
        rows[f"C_pi*+C(1,{m})"] = _times(conc.C_pi_star / (1 - g), np.cumsum(eps)) + second + start
    return rows


def _psdp(conc: Concentrability, eps: np.ndarray, d_empty: float,
          d_loop: float) -> dict[str, np.ndarray]:
    g, K = conc.gamma, eps.size
    start = g ** np.arange(1, K + 1) * (d_empty + d_loop)
    return {
        "C(1)_pi*": _convolve(_geometric(conc, K, "star"), eps) + start,
        "C_pi*": _times(conc.C_pi_star / (1 - g), np.cumsum(eps)) + start,
    }


def _conservative(conc: Concentrability, eps: np.ndarray, alphas: npt.ArrayLike, d0: float,
                  d_errors: bool) -> dict[str, np.ndarray]:
    g = conc.gamma
    alphas = np.asarray(alphas, dtype=np.float64)
    if alphas.shape != eps.shape or np.any(np.isnan(alphas)) or np.any(alphas < 0):
        raise ValueError(
            f"a conservative scheme needs one step alpha_k >= 0 per iteration, got {alphas!r}; "
            f"pass History.steps."
        )
    weighted = np.where(alphas > 0, alphas * np.nan_to_num(eps, nan=0.0), 0.0)
    factor = conc.C1(0) / (1 - g) ** (2 if d_errors else 1)
    delta = np.cumprod(1 - alphas * (1 - g))
    return {"C(1,0)": _times(factor, np.cumsum(weighted)) + delta * d0}


def _check_errors(errors: npt.ArrayLike, conservative: bool) -> np.ndarray:
    eps = np.asarray(errors, dtype=np.float64)
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError(f"errors should be a non-empty 1-d array (eps_1..eps_K), got {eps!r}.")
    if np.any(eps < 0) or (not conservative and np.any(np.isnan(eps))):
        raise ValueError(
            "errors should be non-negative and measured at every iteration; run with "
            "nsrl.run(..., measure_errors=True) and pass History.errors."
        )
    return eps


def initial_gaps(mdp: FiniteMDP, pi0: AnyPolicy | None = None) -> dict[str, float]:
    """The sup norms that replace the paper's V_max (see the module docstring).

    Args:
        mdp: a FiniteMDP.
        pi0: the initial policy of the run (default: action 0 everywhere, as in nsrl.run).

    Returns:
        ``{"D0": ||v* - v_pi0||, "D_empty": ||v* - v_empty||, "D_loop": max(v_empty - r_min /
        (1 - gamma))}``.
    """
    from nsrl.schemes import rules

    b = backend(check_mdp(mdp))
    v_star = b.optimal_value()
    v0 = b.value(rules.start_policy() if pi0 is None else pi0)
    v_empty = mdp.terminal_value
    return {
        "D0": float(np.max(v_star - v0)),
        "D_empty": float(np.max(v_star - v_empty)),
        "D_loop": float(np.max(v_empty) - mdp.R.min() / (1 - mdp.gamma)),
    }


def _resolve(scheme: Scheme | str) -> API | CPI | NSPI | PSDP:
    if isinstance(scheme, str):
        from nsrl.schemes import make_scheme

        scheme = make_scheme(scheme)
    if not isinstance(scheme, (API, CPI, NSPI, PSDP)):
        raise TypeError(
            f"expected a scheme (API, APIAlpha, CPI, CPIAlpha, CPIPlus, PSDP, NSPI) or its "
            f"name, got {type(scheme).__name__}."
        )
    return scheme


def table1_bounds(scheme: Scheme | str, errors: npt.ArrayLike, conc: Concentrability,
                  gaps: dict, steps: npt.ArrayLike | None = None) -> dict[str, np.ndarray]:
    """The Table 1 bounds of ``scheme`` after every iteration k = 1..K, by row.

    Args:
        scheme: a scheme object or name ("api", "api(0.1)", "cpi+", "psdp", "nspi(5)", ...).
        errors: ``eps_1 .. eps_K``, the greedy errors rho e_k (``History.errors``).
        conc: the coefficients for the loss distribution mu and the scheme's nu.
        gaps: :func:`initial_gaps` of the MDP (and of the run's pi0).
        steps: the steps ``alpha_1 .. alpha_K`` (``History.steps``), for the conservative
            schemes (API(alpha), CPI, CPI(alpha), CPI+).

    Returns:
        ``{row: array}``: each row of Table 1 for the scheme (named by its constant), the
        bound on mu (v* - v_out) after iteration k at index k-1. Formulas and sources: module
        docstring.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(10, 2, 2, gamma=0.9, seed=0)
        >>> conc = nsrl.concentrability(mdp)
        >>> rows = table1_bounds("api", np.zeros(3), conc, initial_gaps(mdp))
        >>> sorted(rows)
        ['C(1,0)', 'C(2,1,0)']
    """
    scheme = _resolve(scheme)
    conservative = isinstance(scheme, (APIAlpha, CPI))
    eps = _check_errors(errors, conservative)
    if isinstance(scheme, PSDP):
        return _psdp(conc, eps, gaps["D_empty"], gaps["D_loop"])
    if isinstance(scheme, NSPI):
        return _nspi(conc, eps, scheme.m, gaps["D0"])
    if conservative:
        if steps is None:
            raise ValueError(f"{scheme.name} is conservative: pass steps=History.steps.")
        return _conservative(conc, eps, steps, gaps["D0"], d_errors=isinstance(scheme, CPI))
    rows = _nspi(conc, eps, 1, gaps["D0"], with_pi_star=False)  # API = NSPI(1)
    return {"C(2,1,0)": rows["C(2,1,0)"], "C(1,0)": rows["C(1,0)/1"]}


def kakade_langford_bound(mdp: FiniteMDP, policy: AnyPolicy, conc: Concentrability,
                          nu: npt.ArrayLike | None = None) -> float:
    """C_pi*/(1-g)^2 d_{pi,nu}(T v_pi - v_pi), a bound on mu (v* - v_pi) (Kakade & Langford 2002).

    From the performance difference lemma, ``mu (v* - v_pi) = d_{pi*,mu} (T_{pi*} v_pi -
    v_pi) / (1-g) <= C_pi*/(1-g) nu (T v_pi - v_pi)`` and ``d_{pi,nu} >= (1-g) nu``. It holds
    for every stationary (possibly mixed) policy; ``conc`` must be for the same (mu, nu).
    """
    if isinstance(policy, NonStationary):
        raise TypeError("the Kakade-Langford bound is for stationary policies.")
    nu = mdp.start if nu is None else check_distribution("nu", nu, mdp.n_states)
    b = backend(check_mdp(mdp))
    v = b.value(policy)
    advantage = np.clip(q_values(mdp, v).max(axis=1) - v, 0.0, None)
    d = b.occupancy(policy, nu)
    return float(_times(conc.C_pi_star / (1 - mdp.gamma) ** 2, np.array(d @ advantage)))


def run_bounds(scheme: Scheme | str, history: History, mdp: FiniteMDP, *,
               mu: npt.ArrayLike | None = None, conc: Concentrability | None = None,
               pi0: Policy | None = None, tol: float = 1e-4) -> dict:
    """Evaluate every Table 1 bound of ``scheme`` on a run recorded with ``measure_errors``.

    Args:
        scheme: the scheme that ran (object or name).
        history: its :class:`nsrl.History` (``errors`` and ``steps``; ``outputs`` too, for
            the Kakade-Langford row of the CPI family, if the run kept them).
        mdp: the FiniteMDP of the run (nu = its start distribution).
        mu: the loss distribution of the run (uniform unless given).
        conc: precomputed :func:`concentrability` for (mu, nu), or None to compute it.
        pi0: the run's initial policy (default action 0, as in nsrl.run).
        tol: accuracy of the constants when they are computed here.

    Returns:
        ``{row: array}`` as :func:`table1_bounds`, plus ``"best"``: their minimum.
    """
    scheme = _resolve(scheme)
    if conc is None:
        m = getattr(scheme, "m", 1)  # exact c(i) for every i the bounds use
        conc = concentrability(mdp, mu, m=(m,), tol=tol, min_terms=len(history.errors) + m + 1)
    rows = table1_bounds(scheme, history.errors, conc, initial_gaps(mdp, pi0), history.steps)
    if isinstance(scheme, CPI) and len(history.outputs) == len(history.errors):
        rows["C_pi* (Kakade-Langford)"] = np.array(
            [kakade_langford_bound(mdp, pi, conc) for pi in history.outputs]
        )
    rows["best"] = np.min(np.stack(list(rows.values())), axis=0)
    return rows
