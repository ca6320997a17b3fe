"""The classification step of DPI and CBMPI on Tetris: rollouts, then a linear policy's fit.

Classification-based policy iteration (Gabillon, Ghavamzadeh & Scherrer, NIPS 2013; Scherrer et
al., JMLR 2015) learns pi_w(s) = argmax over legal placements a of w . phi(s, a) from rollout
estimates Q(s, a) at N states: the new weights minimise the *cost-sensitive loss*

    L(w) = (1 / N) sum_s [ max_a Q(s, a) - Q(s, pi_w(s)) ],

the value lost at each state by the placement pi_w chooses. L is piecewise constant in w, so
the papers minimise it with CMA-ES (population 15 x #features, the better half recombined);
:func:`fit_cmaes` does so with the ``cma`` package. :func:`fit_softmax` minimises a smooth
surrogate instead: the expected cost of a softmax over the legal placements' scores, by
L-BFGS with its exact gradient, usually far cheaper per fit; the loss that matters is L itself,
reported for both (``benchmarks/bench_tetris_csc.py`` measures the two on the same rollouts).

The data: :func:`rollout_states` draws states from games of a behaviour controller (the papers
use DU's), :func:`rollout_problem` estimates Q(s, a) for every legal placement of each state by
playing it and then the current controller for ``m`` more pieces (gamma = 1; common pieces for
the placements of a state). Illegal placements are not played (NaN) and never chosen; a
placement that ends the game scores -1e100 in the policy, as the engine's controllers score it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from nsrl.tetris.controllers import Controller
from nsrl.tetris.engine import features_of_placements, rollouts
from nsrl.tetris.kernels import GAME_OVER_SCORE, TIE_MARGIN
from nsrl.tetris.state import States

__all__ = ["CMAESFit", "CSCProblem", "Fit", "SoftmaxFit", "fit_cmaes", "fit_softmax",
           "rollout_problem", "rollout_states", "surrogate"]


@dataclass(frozen=True)
class CSCProblem:
    """A cost-sensitive classification problem of Tetris (module doc).

    Attributes:
        phi: ``(N, A, d)`` afterstate features of every placement.
        legal: ``(N, A)`` legal placements.
        ends: ``(N, A)`` placements that end the game.
        q: ``(N, A)`` rollout estimates of Q (NaN where illegal).
        names: the features' names.
    """

    phi: np.ndarray
    legal: np.ndarray
    ends: np.ndarray
    q: np.ndarray
    names: tuple[str, ...]

    @cached_property
    def costs(self) -> np.ndarray:
        """``max_a Q(s, a) - Q(s, a)`` on legal placements, 0 elsewhere (never chosen)."""
        best = np.nanmax(np.where(self.legal, self.q, np.nan), axis=1, keepdims=True)
        return np.where(self.legal, best - np.nan_to_num(self.q), 0.0)

    def choose(self, weights: np.ndarray) -> np.ndarray:
        """pi_w's placement of each state, as the engine chooses.

        The first of ties, game-ending placements last, the score added in feature order.
        """
        w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        out = np.zeros((1, len(self.phi)), dtype=np.int64)
        _choices(self.phi, self.legal, self.ends, w, out)
        return out[0]

    def loss(self, weights: np.ndarray) -> float:
        """The cost-sensitive loss L(w) (module doc)."""
        return float(self.losses(np.asarray(weights, dtype=np.float64)[None])[0])

    def losses(self, population: np.ndarray) -> np.ndarray:
        """L(w) of each row w of ``population`` (compiled, one pass over the states)."""
        w = np.ascontiguousarray(np.atleast_2d(population), dtype=np.float64)
        out = np.zeros(len(w))
        _losses(self.phi, self.legal, self.ends, self.costs, w, out)
        return out


@numba.njit(cache=True)
def _best(phi: np.ndarray, legal: np.ndarray, ends: np.ndarray, w: np.ndarray,
          i: int) -> int:  # pragma: no cover - compiled
    """State i's placement under weights w, by the engine's rule (module doc)."""
    best, arg = -np.inf, 0
    for a in range(phi.shape[1]):
        if not legal[i, a]:
            continue
        score = GAME_OVER_SCORE
        if not ends[i, a]:
            score = 0.0
            for k in range(w.shape[0]):
                score += phi[i, a, k] * w[k]
        if score > best + TIE_MARGIN or best == -np.inf:
            best, arg = score, a
    return arg


@numba.njit(cache=True)
def _choices(phi: np.ndarray, legal: np.ndarray, ends: np.ndarray, w: np.ndarray,
             out: np.ndarray) -> None:  # pragma: no cover - compiled
    for j in range(w.shape[0]):
        for i in range(phi.shape[0]):
            out[j, i] = _best(phi, legal, ends, w[j], i)


@numba.njit(cache=True)
def _losses(phi: np.ndarray, legal: np.ndarray, ends: np.ndarray, costs: np.ndarray,
            w: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    # States outside, candidates innermost: a placement's features are read once for the
    # whole population, and the loops over the candidates (contiguous in wt) run in SIMD
    # lanes. Each candidate's score is summed in feature order from 0.0 and compared by
    # _best's rule, so every candidate chooses what _best chooses, bit for bit.
    n_pop, d = w.shape
    wt = np.ascontiguousarray(w.T)
    totals = np.zeros(n_pop)
    best = np.empty(n_pop)
    arg = np.zeros(n_pop, dtype=np.int64)
    score = np.empty(n_pop)
    for i in range(phi.shape[0]):
        first = True
        arg[:] = 0  # a state without a legal placement reads placement 0, as _best does
        for a in range(phi.shape[1]):
            if not legal[i, a]:
                continue
            if ends[i, a]:
                score[:] = GAME_OVER_SCORE
            else:
                score[:] = 0.0
                for k in range(d):
                    f = phi[i, a, k]
                    for j in range(n_pop):
                        score[j] += f * wt[k, j]
            if first:
                best[:] = score
                arg[:] = a
                first = False
            else:
                for j in range(n_pop):
                    if score[j] > best[j] + TIE_MARGIN:
                        best[j] = score[j]
                        arg[j] = a
        for j in range(n_pop):
            totals[j] += costs[i, arg[j]]
    for j in range(n_pop):
        out[j] = totals[j] / max(phi.shape[0], 1)


@dataclass(frozen=True)
class Fit:
    """A fit's result: the weights, the loss L they reach, the seconds and evaluations it took."""

    weights: np.ndarray
    loss: float
    seconds: float
    evaluations: int


def rollout_states(behaviour: Controller, n: int, *, width: int, height: int,
                   max_pieces: int, seed: int, overflow: str = "end") -> States:
    """``n`` states of the behaviour controller's games, each after a uniform number of pieces.

    State i is where the behaviour's game from the empty board stands after
    ``1 + k_i`` pieces, ``k_i ~ U{0, ..., max_pieces}``; a game that ended sooner is replaced
    by its start (an empty board), so every state is live. A function of ``seed``.
    """
    rng = np.random.default_rng(seed)
    first = rng.integers(7, size=n)
    depths = rng.integers(max_pieces + 1, size=n)
    seeds = rng.integers(2**62, size=n)
    boards, pieces = np.zeros((n, height), dtype=np.int64), first.copy()
    for k in np.unique(depths):
        idx = np.flatnonzero(depths == k)
        start = States(np.zeros((len(idx), height), dtype=np.int64), first[idx], width)
        ends = rollouts(start, np.full(len(idx), -1), behaviour, int(k), seeds[idx],
                        overflow=overflow).end_states
        live = ends.pieces >= 0
        boards[idx[live]], pieces[idx[live]] = ends.boards[live], ends.pieces[live]
    return States(boards, pieces, width)


def rollout_problem(states: States, policy: Controller, *, features: str, m: int, seed: int,
                    overflow: str = "end") -> CSCProblem:
    """Q(s, a) of every legal placement: the placement, then ``policy`` for ``m`` pieces.

    The placements of one state see the same pieces (one seed per state: common random
    numbers, so their differences carry less noise). ``features`` names the policy class's
    features (those of ``phi``), which need not be ``policy``'s own.
    """
    p = features_of_placements(states, features, overflow=overflow)
    n, actions = p.mask.shape
    legal = p.mask.astype(bool)
    rows, cols = np.nonzero(legal)
    seeds = np.asarray(np.random.default_rng(seed).integers(2**62, size=int(n)))
    sub = States(states.boards[rows], states.pieces[rows], states.width)
    out = rollouts(sub, cols, policy, m, seeds[rows], overflow=overflow)
    q = np.full((n, actions), np.nan)
    q[rows, cols] = out.returns
    return CSCProblem(p.phi, legal, p.ends.astype(bool), q, tuple(p.names))


def fit_cmaes(problem: CSCProblem, x0: np.ndarray, *, sigma0: float = 0.5,
              population: int | None = None, iterations: int = 50, seed: int = 0) -> Fit:
    """Minimise L(w) by CMA-ES (the papers' optimiser; ``cma`` package).

    Args:
        problem: the rollouts' problem.
        x0: the starting weights (e.g. the previous iteration's: a warm start).
        sigma0: CMA-ES's initial step size.
        population: candidates per generation (default 15 x #features, as the papers).
        iterations: generations.
        seed: CMA-ES's seed (the fit is a function of it).

    Returns:
        The best weights seen and their loss.
    """
    import cma  # type: ignore[import-untyped]

    x0 = np.asarray(x0, dtype=np.float64)
    pop = population or 15 * len(x0)
    start = time.process_time()
    es = cma.CMAEvolutionStrategy(x0, sigma0, {"popsize": pop, "seed": seed + 1,
                                               "maxiter": iterations, "verbose": -9})
    best, best_loss, evaluations = x0, problem.loss(x0), 1
    while not es.stop():
        candidates = es.ask()
        losses = problem.losses(np.asarray(candidates)).tolist()
        evaluations += len(candidates)
        es.tell(candidates, losses)
        i = int(np.argmin(losses))
        if losses[i] < best_loss:
            best, best_loss = np.asarray(candidates[i], dtype=np.float64), float(losses[i])
    return Fit(best, best_loss, time.process_time() - start, evaluations)


def surrogate(problem: CSCProblem, *, temperature: float = 1.0, ridge: float = 1e-6
              ) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``w -> (surrogate value, its gradient)``: the softmax's expected cost (see fit_softmax)."""
    phi = problem.phi / temperature
    allowed = problem.legal & ~problem.ends
    allowed = np.where(allowed.any(axis=1, keepdims=True), allowed, problem.legal)
    cost = problem.costs
    n = len(cost)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        scores = np.where(allowed, phi @ w, -np.inf)
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        expected = (p * cost).sum(axis=1)
        value = float(expected.mean()) + ridge * float(w @ w)
        weight = p * (cost - expected[:, None]) / n  # d expected / d score
        grad = np.einsum("na,nad->d", weight, phi) + 2 * ridge * w
        return value, grad

    return objective


def fit_softmax(problem: CSCProblem, x0: np.ndarray, *, temperature: float = 1.0,
                ridge: float = 1e-6, max_iterations: int = 200) -> Fit:
    """Minimise the softmax surrogate of L by L-BFGS (exact gradient); report L itself.

    The surrogate is the mean over states of sum_a p_w(a | s) cost(s, a), with p_w the
    softmax of ``w . phi(s, a) / temperature`` over the legal placements that do not end the
    game (all of them where every one does), plus ``ridge |w|^2``.
    """
    from scipy.optimize import minimize

    objective = surrogate(problem, temperature=temperature, ridge=ridge)
    start = time.process_time()
    res = minimize(objective, np.asarray(x0, dtype=np.float64), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iterations})
    w = np.asarray(res.x)
    return Fit(w, problem.loss(w), time.process_time() - start, int(res.nfev))


class CMAESFit:
    """The cost-sensitive fit by CMA-ES, as an estimator (``__init__`` only stores).

    What the DPI/CBMPI operator takes as ``fit=`` (``nsrl.greedy.tetris.TetrisRollouts``);
    ``fit(problem, x0, rng)`` runs :func:`fit_cmaes` and sets ``weights_``, ``loss_`` and
    ``result_`` (the :class:`Fit`).

    Args:
        population: candidates per generation (None: 15 x #features, the papers').
        sigma: the initial step size.
        iterations: generations.
        seed: CMA-ES's seed; None: drawn from the ``rng`` given to ``fit`` (the run's), so a
            run is a function of its Generator.

    Examples:
        >>> CMAESFit(iterations=10).get_params()
        {'population': None, 'sigma': 0.5, 'iterations': 10, 'seed': None}
    """

    def __init__(self, population: int | None = None, sigma: float = 0.5,
                 iterations: int = 50, seed: int | None = None) -> None:
        self.population, self.sigma, self.iterations, self.seed = (population, sigma,
                                                                   iterations, seed)

    def get_params(self, deep: bool = True) -> dict:
        """The options, scikit-learn's way."""
        return {"population": self.population, "sigma": self.sigma,
                "iterations": self.iterations, "seed": self.seed}

    def set_params(self, **params: object) -> CMAESFit:
        """Set options, scikit-learn's way (unknown ones refused)."""
        _set(self, params)
        return self

    def fit(self, problem: CSCProblem, x0: np.ndarray,
            rng: np.random.Generator | None = None) -> CMAESFit:
        """Minimise L from ``x0`` (seeded by ``seed``, else by ``rng``)."""
        if self.seed is not None:
            seed = int(self.seed)
        elif rng is not None:
            seed = int(rng.integers(2**31 - 1))
        else:
            raise ValueError("CMAESFit needs seed= or an rng to fit with (the run's).")
        self.result_ = fit_cmaes(problem, x0, sigma0=self.sigma, population=self.population,
                                 iterations=self.iterations, seed=seed)
        self.weights_, self.loss_ = self.result_.weights, self.result_.loss
        return self


class SoftmaxFit:
    """The softmax surrogate's fit (:func:`fit_softmax`), as an estimator.

    Args:
        temperature: the softmax's temperature.
        ridge: the weights' ridge.
        max_iterations: L-BFGS's iterations.

    Examples:
        >>> SoftmaxFit().get_params()["temperature"]
        1.0
    """

    def __init__(self, temperature: float = 1.0, ridge: float = 1e-6,
                 max_iterations: int = 200) -> None:
        self.temperature, self.ridge, self.max_iterations = temperature, ridge, max_iterations

    def get_params(self, deep: bool = True) -> dict:
        """The options, scikit-learn's way."""
        return {"temperature": self.temperature, "ridge": self.ridge,
                "max_iterations": self.max_iterations}

    def set_params(self, **params: object) -> SoftmaxFit:
        """Set options, scikit-learn's way (unknown ones refused)."""
        _set(self, params)
        return self

    def fit(self, problem: CSCProblem, x0: np.ndarray,
            rng: np.random.Generator | None = None) -> SoftmaxFit:
        """Minimise the surrogate from ``x0`` (deterministic: ``rng`` is not read)."""
        self.result_ = fit_softmax(problem, x0, temperature=self.temperature, ridge=self.ridge,
                                   max_iterations=self.max_iterations)
        self.weights_, self.loss_ = self.result_.weights, self.result_.loss
        return self


def _set(estimator: object, params: dict) -> None:
    known = estimator.get_params()  # type: ignore[attr-defined]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"{type(estimator).__name__} got unknown option(s) {unknown}; it "
                         f"takes {', '.join(known)}.")
    for key, value in params.items():
        setattr(estimator, key, value)
