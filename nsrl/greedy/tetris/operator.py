"""The greedy operator of DPI and CBMPI on Tetris (Scherrer et al., JMLR 2015, 3.3 and 6.2).

One call, ``greedy(target, rho, rng)``:

1. N rollout states (:mod:`nsrl.greedy.tetris.states`): a behaviour controller's (DU's)
   states with the height mix, or, with ``rollout_states="occupancy"`` and rho = d_{pi,nu}
   (the CPI family), the states of pi's own games. N = budget / ((m + 1) M |A|), |A| = 32
   the papers' count of placements, so that the budget counts every rollout placement as the
   papers do (pieces have 9 to 34 placements on 10 columns: a call draws fewer samples than
   its budget).
2. From each state, each legal placement a is played, then the target for m more placements
   (its phase 0 first: a mixture draws its component at every placement, a sequence steps
   through its policies), M times with common pieces per state (one piece stream per state
   and repetition). Q(s, a) is the mean of the lines they remove plus, for CBMPI
   (``critic="linear"``), the critic's value of the last afterstate when the rollout was cut
   at m (a game that ends adds nothing, nor does a finite sequence that ran out).
3. The critic (CBMPI): least squares of the m-step return from s_1, the afterstate of the
   target's own placement in s, on ``critic_features`` of s_1 (D-T + the 5 height RBFs + a
   constant, the papers' best), its targets built with the previous call's critic, as the
   papers reuse the target's own rollout (JMLR 2015, footnote 4). Values are clipped at 0
   (lines). The first call's critic is 0 (the papers' v_0): its Q are m-step returns. With
   ``critic_decay`` below 1 (not the papers'), the critic's value at the cut is discounted by
   it, which bounds the critic's horizon.
   DPI (``critic="none"``) keeps every rollout's lines alone.
4. The policy: pi_w = argmax_a w . phi(s, a) on ``features``, w minimising the cost-sensitive
   loss L(w) = mean_s [max_a Q(s, a) - Q(s, pi_w(s))], by the softmax surrogate
   (``fit="softmax"``, L-BFGS) or by CMA-ES (``fit="cmaes"``, the papers'; population
   15 x #features), started from the previous call's weights when ``warm_start``.

``Greedy.advantage`` is the rollouts' estimate of the mean over the states of
Q(s, pi'(s)) - sum_a pi(a|s) Q(s, a) (pi the target at phase 0). ``value(policy, rng)``
is the policy's mean lines over ``value_games`` games from the empty board, the same games
between two greedy calls (CPI+'s line search). ``samples_used`` counts every placement of
the rollouts and of those games; the behaviour controller's games that make the pool are
counted apart, in ``behaviour_samples`` (the papers do not count them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsrl.greedy.base import Greedy, Nu, Occupancy, Rho
from nsrl.greedy.tetris.policies import tetris_policy, to_program
from nsrl.greedy.tetris.quality import board_of
from nsrl.greedy.tetris.states import draw, visited_states
from nsrl.policies import AnyPolicy
from nsrl.tetris.controllers import SHIPPED
from nsrl.tetris.engine import features_of_placements
from nsrl.tetris.features import feature_names
from nsrl.tetris.learn import CMAESFit, CSCProblem, Fit, SoftmaxFit
from nsrl.tetris.programs import Program, component_actions, program_games, program_rollouts
from nsrl.tetris.state import States

__all__ = ["CRITIC_FEATURES", "NOMINAL_ACTIONS", "TetrisRollouts"]

CRITIC_FEATURES = "dellacherie-thiery+rbf-heights+constant"
NOMINAL_ACTIONS = 32  # |A| in the papers' budget B = (m + 1) N M |A|
CRITICS = ("linear", "none")
FITS = ("softmax", "cmaes")
STATES = ("behaviour", "occupancy")


@dataclass(frozen=True)
class CallRecord:
    """What one greedy call did: its states, samples, fit and critic."""

    n_states: int
    samples: int
    fit: Fit
    critic_weights: np.ndarray | None
    seconds: float


class TetrisRollouts:
    """DPI (``critic="none"``) or CBMPI (``critic="linear"``) on a ``Tetris-v0`` board.

    Args:
        env: a ``Tetris-v0`` env: its board and overflow rule.
        budget: rollout placements per call, the papers' B (module doc).
        m: placements of the target after the first one.
        critic: ``"linear"`` (CBMPI) or ``"none"`` (DPI).
        n_rollouts: M, rollouts per state and placement.
        features: the policy's feature set (the papers' D-T).
        critic_features: the critic's feature set.
        fit: ``"softmax"`` or ``"cmaes"`` (the ``cmaes_*`` options), or an estimator of
            :mod:`nsrl.tetris.learn` (``SoftmaxFit(...)``, ``CMAESFit(population=,
            sigma=, iterations=, seed=)``) or anything with ``fit(problem, x0, rng)`` setting
            ``result_``.
        rollout_states: ``"behaviour"`` (every call draws from the behaviour pool) or
            ``"occupancy"`` (rho = d_{pi,nu} draws from pi's own games).
        behaviour: the shipped controller whose games make the pool (``"du"``).
        pool_games: games of the behaviour controller in the pool.
        pool_pieces: each such game (and each of pi's, for ``"occupancy"``) is cut here.
        height_mix: even out the heights of the pool's states (module doc of states).
        occupancy_games: pi's games for ``rollout_states="occupancy"``.
        cmaes_sigma, cmaes_population, cmaes_iterations: CMA-ES's step size, population
            (None: 15 x #features) and generations.
        warm_start: start each fit from the previous call's weights.
        value_games: games of ``value()``.
        critic_decay: CBMPI's critic value at the cut is multiplied by this factor in (0, 1],
            in the rollouts' Q and in the critic's own targets, so that its horizon, which
            grows by m placements per call at 1 (the papers'), stays near m / (1 -
            critic_decay) placements. 1: the papers' critic.
    """

    def __init__(self, env: Any, *, budget: int = 8_000_000, m: int = 5,
                 critic: str = "linear", n_rollouts: int = 1,
                 features: str = "dellacherie-thiery", critic_features: str = CRITIC_FEATURES,
                 fit: str | Any = "softmax", rollout_states: str = "behaviour",
                 behaviour: str = "du",
                 pool_games: int = 20, pool_pieces: int = 50_000, height_mix: bool = True,
                 occupancy_games: int = 50, cmaes_sigma: float = 0.5,
                 cmaes_population: int | None = None, cmaes_iterations: int = 50,
                 warm_start: bool = True, value_games: int = 20,
                 critic_decay: float = 1.0) -> None:
        self.width, self.height, self.overflow = board_of(env)
        for name, value, low in (("budget", budget, 1), ("m", m, 0), ("n_rollouts", n_rollouts, 1),
                                 ("pool_games", pool_games, 1), ("pool_pieces", pool_pieces, 1),
                                 ("occupancy_games", occupancy_games, 1),
                                 ("cmaes_iterations", cmaes_iterations, 1),
                                 ("value_games", value_games, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name} should be an int >= {low}, got {value!r}.")
        if isinstance(critic_decay, bool) or not isinstance(critic_decay, (int, float)) or \
                not 0.0 < critic_decay <= 1.0:
            raise ValueError(f"critic_decay should be a number in (0, 1] (1: the papers' "
                             f"critic), got {critic_decay!r}.")
        for name, word, choices in (("critic", critic, CRITICS),
                                    ("rollout_states", rollout_states, STATES)):
            if word not in choices:
                raise ValueError(f"{name} should be one of {', '.join(choices)}, got {word!r}.")
        if isinstance(fit, str) and fit not in FITS or not isinstance(fit, str) and not (
                hasattr(fit, "fit") and hasattr(fit, "get_params")):
            raise ValueError(f"fit should be one of {', '.join(FITS)} or an estimator such as "
                             f"nsrl.tetris.learn.CMAESFit(...), got {fit!r}.")
        if behaviour not in SHIPPED:
            raise ValueError(f"behaviour should be a shipped controller "
                             f"({', '.join(sorted(SHIPPED))}), got {behaviour!r}.")
        self.names = feature_names(features, self.width)  # unknown sets refused here
        self.critic_names = feature_names(critic_features, self.width)
        self.n_states = int(budget) // ((int(m) + 1) * int(n_rollouts) * NOMINAL_ACTIONS)
        if self.n_states < 1:
            raise ValueError(f"budget {budget} is below one state's rollouts ((m + 1) M |A| = "
                             f"{(m + 1) * n_rollouts * NOMINAL_ACTIONS}); raise it.")
        self.budget, self.m, self.critic, self.n_rollouts = int(budget), int(m), critic, \
            int(n_rollouts)
        self.features, self.critic_features, self.fit = features, critic_features, fit
        self.rollout_states, self.behaviour = rollout_states, behaviour
        self.height_mix = bool(height_mix)
        self.pool_games, self.pool_pieces = int(pool_games), int(pool_pieces)
        self.occupancy_games = int(occupancy_games)
        self.cmaes_sigma, self.cmaes_population = float(cmaes_sigma), cmaes_population
        self.cmaes_iterations = int(cmaes_iterations)
        self.warm_start, self.value_games = bool(warm_start), int(value_games)
        self.critic_decay = float(critic_decay)
        self.gamma = 1.0  # games end: the lines are summed undiscounted
        self.samples_used = 0
        self.behaviour_samples = 0
        self.records: list[CallRecord] = []
        self._pool: States | None = None
        self._critic: np.ndarray | None = None
        self._weights: np.ndarray | None = None
        self._value_seed: int | None = None
        self.last_problem: CSCProblem | None = None  # the last call's (for inspection)

    # --- the greedy step -------------------------------------------------------------------
    def greedy(self, target: AnyPolicy, rho: Rho, rng: np.random.Generator) -> Greedy:
        """An approximately greedy Tetris policy w.r.t. the target's value (module doc)."""
        start = time.process_time()
        program = to_program(target, self.width, self.features)
        states = self._draw_states(rho, rng)
        p = features_of_placements(states, self.features, overflow=self.overflow)
        legal = p.mask.astype(bool)
        probs = self._target_probs(states, program, legal.shape[1])
        own = _draw_actions(probs, rng)
        q, samples, xy = self._q(states, legal, p.lines, program, own, rng)
        if self.critic == "linear" and xy is not None:
            self._critic = _least_squares(*xy)
        problem = CSCProblem(p.phi, legal, p.ends.astype(bool), np.where(legal, q, np.nan),
                             self.names)
        fit = self._fit(problem, rng)
        self._weights, self.last_problem = fit.weights, problem
        chosen = problem.choose(fit.weights)
        rows = np.arange(len(states))
        advantage = float(np.mean(q[rows, chosen] - (probs * np.where(legal, q, 0.0)).sum(1))) \
            if probs.any() else float("nan")
        self._value_seed = int(rng.integers(2**62))
        self.samples_used += samples
        self.records.append(CallRecord(len(states), samples, fit, None if self._critic is None
                                       else self._critic.copy(), time.process_time() - start))
        policy = tetris_policy(self.features, fit.weights, width=self.width, height=self.height,
                               overflow=self.overflow)
        return Greedy(policy, advantage, samples)

    def _q(self, states: States, legal: np.ndarray, first_lines: np.ndarray, program: Program,
           own: np.ndarray, rng: np.random.Generator
           ) -> tuple[np.ndarray, int, tuple[np.ndarray, np.ndarray] | None]:
        """Q of every legal placement, the placements drawn, and the critic's (x, y)."""
        rows, cols = np.nonzero(legal)
        sub = States(states.boards[rows], states.pieces[rows], states.width)
        seeds = rng.integers(2**62, size=(self.n_rollouts, len(states)))
        critic = self.critic == "linear"
        q, samples = np.zeros(legal.shape), 0
        xs, ys = [], []
        for j in range(self.n_rollouts):
            out = program_rollouts(sub, cols, program, self.m, seeds[j, rows],
                                   overflow=self.overflow,
                                   critic_features=self.critic_features if critic else None)
            tail = np.zeros(len(rows))
            if critic and self._critic is not None:
                assert out.critic_phi is not None
                tail = self.critic_decay * np.where(
                    out.status == 0, np.maximum(out.critic_phi @ self._critic, 0.0), 0.0)
            ret = out.returns + tail
            q[rows, cols] += ret / self.n_rollouts
            samples += int(out.steps.sum())
            if critic and len(program.order):
                keep = (cols == own[rows]) & ((out.status != 1) | (out.steps > 1))
                assert out.first_phi is not None
                xs.append(out.first_phi[keep])
                ys.append((ret - first_lines[rows, cols])[keep])
        xy = (np.concatenate(xs), np.concatenate(ys)) if xs and sum(map(len, xs)) else None
        return q, samples, xy

    def _fit(self, problem: CSCProblem, rng: np.random.Generator) -> Fit:
        x0 = self._weights if self.warm_start and self._weights is not None else np.zeros(
            len(self.names))
        estimator = self.fit
        if isinstance(estimator, str):
            estimator = CMAESFit(self.cmaes_population, self.cmaes_sigma,
                                 self.cmaes_iterations) if estimator == "cmaes" else SoftmaxFit()
        return estimator.fit(problem, x0, rng).result_

    # --- states ------------------------------------------------------------------------------
    def _draw_states(self, rho: Rho, rng: np.random.Generator) -> States:
        if not isinstance(rho, (Nu, Occupancy)):
            raise TypeError(f"rho should be Nu() or Occupancy(policy) on Tetris, got {rho!r}.")
        if self.rollout_states == "occupancy" and isinstance(rho, Occupancy):
            visited, placed = visited_states(
                to_program(rho.policy, self.width, self.features), games=self.occupancy_games,
                max_pieces=self.pool_pieces, width=self.width, height=self.height,
                seed=int(rng.integers(2**62)), overflow=self.overflow)
            self.samples_used += placed
            return draw(visited, self.n_states, rng, height_mix=False)
        if self._pool is None:
            self._pool, placed = visited_states(
                to_program(_shipped(self.behaviour, self.width, self.height), self.width),
                games=self.pool_games, max_pieces=self.pool_pieces, width=self.width,
                height=self.height, seed=int(rng.integers(2**62)), overflow=self.overflow)
            self.behaviour_samples += placed
        return draw(self._pool, self.n_states, rng, height_mix=self.height_mix)

    def _target_probs(self, states: States, program: Program, n_actions: int) -> np.ndarray:
        """pi(a | s) of the target at phase 0 (zeros if it has no phase: PSDP's start)."""
        probs = np.zeros((len(states), n_actions))
        if not len(program.order):
            return probs
        actions = component_actions(states, program, overflow=self.overflow)
        g = int(program.order[0])
        members = range(int(program.group_start[g]), int(program.group_start[g + 1]))
        cum = program.member_cum
        rows = np.arange(len(states))
        for j in members:
            weight = cum[j] - (cum[j - 1] if j > program.group_start[g] else 0.0)
            np.add.at(probs, (rows, actions[:, program.member_comp[j]]), weight)
        return probs

    # --- values ------------------------------------------------------------------------------
    def value(self, policy: AnyPolicy, rng: np.random.Generator) -> float:
        """Mean lines of ``policy`` over ``value_games`` games (the same until the next call)."""
        seed = self._value_seed if self._value_seed is not None else int(rng.integers(2**62))
        lines, pieces = program_games(to_program(policy, self.width, self.features),
                                      self.value_games, width=self.width, height=self.height,
                                      seed=seed, overflow=self.overflow)
        self.samples_used += int(pieces.sum())
        return float(lines.mean())


def _shipped(name: str, width: int, height: int) -> AnyPolicy:
    controller = SHIPPED[name]
    return tetris_policy(controller.features, controller.vector(width), width=width,
                         height=height)


def _draw_actions(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``probs`` (-1 where the row is all zeros)."""
    cum = probs.cumsum(axis=1)
    u = rng.random(len(probs)) * cum[:, -1]
    out = (cum <= u[:, None]).sum(axis=1)
    return np.where(cum[:, -1] > 0, np.minimum(out, probs.shape[1] - 1), -1)


def _least_squares(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """argmin_w |x w - y|^2 (the minimum-norm solution where x has dependent columns)."""
    return np.linalg.lstsq(x, y, rcond=None)[0]
