"""What every scheme shares: the step record, the run loop and its history.

A scheme (Scherrer 2014, section 2) decides *what* to be greedy about, *under which
distribution*, and *how* the greedy policy is folded into the current one. It has

* ``start(pi0)``: set the initial policy (PSDP ignores it: it starts from the empty policy);
* ``step(operator, rng) -> Step``: one iteration, one call (or none) to the operator;
* ``output``: the policy the scheme would return now (its loss is what is recorded).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from nsrl.exact import backend, q_values
from nsrl.exact.iterative import NotCertifiedError
from nsrl.greedy.base import Greedy, GreedyOperator, Nu, Rho, check_operator, rho_array
from nsrl.model.mdp import FiniteMDP
from nsrl.params import Param
from nsrl.policies import AnyPolicy, Policy, action_table
from nsrl.schemes import rules


@dataclass
class Step:
    """One iteration of a scheme.

    Attributes:
        target: the policy whose value the greedy step was about (None if no call was made).
        rho: the distribution given to the greedy operator.
        greedy: what the operator returned (None if no call was made).
        alpha: the step size folded in (CPI family, API(alpha)); NaN for full steps.
        stopped: True once a scheme with a stopping rule (CPI, CPI+) has stopped.
    """

    target: AnyPolicy | None = None
    rho: Rho = field(default_factory=Nu)
    greedy: Greedy | None = None
    alpha: float = float("nan")
    stopped: bool = False


@dataclass
class History:
    """Per-iteration records of a run (index k-1 holds iteration k), or of several runs.

    The result of :func:`nsrl.run` on either engine. For several runs every array has a
    leading run axis (row r is run r) and ``output`` is the list of the runs' outputs.

    Attributes:
        losses: exact loss mu (v* - v_out) of the output after each iteration (NaN without a
            finite model).
        memory: number of deterministic policies the output stores.
        steps: the step size taken (CPI family, API(alpha)); NaN for full steps.
        samples: cumulative environment transitions drawn by the operator.
        errors: with ``measure_errors``, the greedy error rho (T v - T_{pi'} v) of each call,
            measured with the model (0 for the exact operator); NaN when no call was made.
        output: the final output policy (None from the batched engines, which build none).
        outputs: every output policy, when ``keep_outputs`` was asked.
        engine: which engine computed it, ``"reference"`` or ``"batched"``.
        scores: with ``estimate=`` (where no model gives the loss), the Monte-Carlo score of
            the output after each iteration (:class:`nsrl.greedy.sampling.quality.MonteCarlo`:
            mean return of its games); NaN otherwise.
        score_ci: the half-width of the score's 95% interval (NaN without ``estimate=``).
        games: the number of games each score averages (0 without ``estimate=``).
    """

    losses: np.ndarray
    memory: np.ndarray
    steps: np.ndarray
    samples: np.ndarray
    errors: np.ndarray
    # One run of the reference engine: its output policy, what `nsrl.loss(mdp, h.output)`
    # takes. `| Any`: several runs give a list, the batched engines None, which the type
    # cannot tell apart; `object` made every use of the one-run case a type error.
    output: AnyPolicy | Any = None
    outputs: list = field(default_factory=list)
    engine: str = "reference"
    scores: np.ndarray = None  # type: ignore[assignment]  # filled in __post_init__
    score_ci: np.ndarray = None  # type: ignore[assignment]
    games: np.ndarray = None  # type: ignore[assignment]

    ARRAYS = ("losses", "memory", "steps", "samples", "errors", "scores", "score_ci", "games")

    def __post_init__(self) -> None:
        shape = np.shape(self.losses)
        for name in ("scores", "score_ci"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(shape, np.nan))
        if self.games is None:
            self.games = np.zeros(shape, dtype=np.int64)

    @classmethod
    def stack(cls, runs: list[History]) -> History:
        """The runs' histories as one, with a leading run axis."""
        arrays = {name: np.stack([getattr(h, name) for h in runs]) for name in cls.ARRAYS}
        return cls(**arrays, output=[h.output for h in runs],
                   outputs=[h.outputs for h in runs], engine=runs[0].engine)

    def row(self, r: int) -> History:
        """Run ``r`` of a history of several runs."""
        output = self.output[r] if isinstance(self.output, list) else self.output
        outputs = self.outputs[r] if self.outputs else []
        return History(**{n: getattr(self, n)[r] for n in self.ARRAYS}, output=output,
                       outputs=outputs, engine=self.engine)


class Scheme(Protocol):
    """What the engines run: a scheme object (see :func:`nsrl.schemes.make_scheme`).

    ``fold`` and ``step_rule`` name its update for the batched engines (nsrl.schemes.rules).
    """

    name: str
    params: dict[str, Param]
    fold: str
    step_rule: str

    def start(self, pi0: Policy) -> None:
        """Set pi_0."""

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """One iteration."""

    @property
    def output(self) -> AnyPolicy | None:
        """The policy the scheme outputs after its iterations so far (None before any)."""


def greedy_error(mdp: FiniteMDP, step: Step) -> float:
    """rho (T v - T_{pi'} v) for v = v_target: how far from greedy the returned policy was."""
    if step.greedy is None or step.target is None:
        return float("nan")
    v = backend(mdp).value(step.target)
    q = q_values(mdp, v)
    chosen = q[np.arange(mdp.n_states), action_table(step.greedy.policy, mdp)]
    try:
        rho = rho_array(mdp, step.rho)
    except NotCertifiedError:  # a diagnostic: an uncertified d_(pi,nu) must not end the run
        return float("nan")
    return float(rho @ (q.max(axis=1) - chosen))


def greedy_step(operator: GreedyOperator, target: AnyPolicy, rho: Rho,
                rng: np.random.Generator) -> Greedy:
    """``operator.greedy(target, rho, rng)``, what it returned checked at the boundary.

    Every scheme's step calls operators through this, so that a plugin operator returning
    None, a wrong-shaped policy or out-of-range actions is refused in one line naming its
    class, before a scheme or the exact backend fails deep inside on it. With a model
    (``operator.mdp``) the policy's actions (deterministic) or table (else) are checked on it.

    Raises:
        TypeError: the result is not a :class:`nsrl.greedy.Greedy` holding a policy.
        ValueError: the policy does not fit the operator's model.
    """
    g = operator.greedy(target, rho, rng)
    name = type(operator).__name__
    if not isinstance(g, Greedy):
        raise TypeError(f"{name}.greedy returned {type(g).__name__}, expected an "
                        f"nsrl.greedy.Greedy; return Greedy(policy=nsrl.Deterministic(actions)).")
    policy = g.policy
    if not all(hasattr(policy, a) for a in ("act", "table", "memory")):
        raise TypeError(f"{name}.greedy returned a Greedy whose policy is "
                        f"{type(policy).__name__}, expected a stationary policy (act, table, "
                        f"memory); e.g. nsrl.Deterministic(actions).")
    mdp = getattr(operator, "mdp", None)
    if isinstance(mdp, FiniteMDP):
        _check_fits(name, policy, mdp)
    return g


def _check_fits(name: str, policy: Policy, mdp: FiniteMDP) -> None:
    """Raise ValueError unless ``policy`` (from ``name``.greedy) is a policy on ``mdp``."""
    expected = f"expected {mdp.n_states} states with actions in [0, {mdp.n_actions})"
    try:
        if hasattr(policy, "action_table"):
            got = np.asarray(policy.action_table(mdp))
            fits = got.shape == (mdp.n_states,) and got.dtype.kind in "iu" and (
                got.size == 0 or (got.min() >= 0 and got.max() < mdp.n_actions))
            what = f"actions of shape {got.shape}" + (
                f" in [{got.min()}, {got.max()}]" if got.size and got.dtype.kind in "iuf" else "")
        else:
            got = np.asarray(policy.table(mdp))
            fits = got.shape == (mdp.n_states, mdp.n_actions) and bool(
                np.isfinite(got).all()) and bool((got >= 0).all())
            what = f"a table of shape {got.shape}"
    except (ValueError, IndexError, TypeError) as exc:
        raise ValueError(f"{name}.greedy returned a policy that does not fit its model "
                         f"({expected}): {exc}") from None
    if not fits:
        raise ValueError(f"{name}.greedy returned {type(policy).__name__} with {what}, "
                         f"{expected}; fix the operator's greedy().")


def reference_run(
    scheme: Scheme,
    operator: GreedyOperator,
    n_iterations: int = 100,
    *,
    rng: np.random.Generator,
    pi0: Policy | None = None,
    mdp: FiniteMDP | None = None,
    mu: npt.ArrayLike | None = None,
    measure_errors: bool = False,
    keep_outputs: bool = False,
    progress: bool = False,
    max_samples: int | None = None,
    estimate: Callable[[AnyPolicy], Any] | None = None,
) -> History:
    """The reference engine: one run of ``scheme`` with ``operator``, one iteration at a time.

    The loop that :func:`nsrl.run` calls for ``engine="reference"``; the scheme objects take
    every decision (section 2), the exact backend gives the losses.

    Args:
        scheme: a scheme object (see :func:`nsrl.schemes.make_scheme`).
        operator: a greedy operator (exact, projected, or sample-based).
        n_iterations: number of iterations K (paper: 100).
        rng: the run's Generator; it drives the operator's noise or samples.
        pi0: initial policy (default: action 0 everywhere).
        mdp: the finite model for exact losses (default: ``operator.mdp`` if it has one).
        mu: distribution of the loss (uniform unless given).
        measure_errors: also record the greedy errors (needs the model).
        keep_outputs: keep every output policy in ``History.outputs``.
        progress: show a tqdm progress bar on stderr when it is a terminal.
        max_samples: stop after the iteration at which the operator's transitions reach this
            many (a sample budget); the History then holds only the iterations run.
        estimate: where no model gives the loss, ``estimate(output) -> Score`` after each
            iteration (e.g. :class:`nsrl.greedy.sampling.quality.MonteCarlo`), recorded in
            ``History.scores``, ``score_ci`` and ``games``; it does not draw from ``rng``.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = reference_run(nsrl.API(), nsrl.ExactGreedy(mdp), 5, rng=np.random.default_rng(0))
        >>> len(h.losses)
        5
    """
    check_operator(operator)
    if not isinstance(n_iterations, (int, np.integer)) or n_iterations < 1:
        raise ValueError(f"n_iterations should be a positive int, got {n_iterations!r}.")
    if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(
            max_samples, (int, np.integer)) or max_samples < 1):
        raise ValueError(f"max_samples should be a positive int or None, got {max_samples!r}.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng should be a numpy Generator, got {type(rng).__name__}.")
    mdp = getattr(operator, "mdp", None) if mdp is None else mdp
    scheme.start(rules.start_policy() if pi0 is None else pi0)
    nan = np.full(n_iterations, np.nan)
    hist = History(
        losses=nan.copy(),
        memory=np.zeros(n_iterations, dtype=np.int64),
        steps=nan.copy(),
        samples=np.zeros(n_iterations, dtype=np.int64),
        errors=nan.copy(),
    )
    total = 0
    # Sample-based operators count every transition in `samples_used`, value estimates for
    # CPI+'s line search included; Greedy.samples only covers the greedy calls.
    counted = getattr(operator, "samples_used", None)
    iterations: Iterable[int] = range(n_iterations)
    if progress:
        from tqdm.auto import tqdm

        # As the sweep runner's bar: drawn on a terminal only (a log file gets no bar).
        iterations = tqdm(iterations, desc=getattr(scheme, "name", "run"), unit="it",
                          disable=not sys.stderr.isatty())
    for k in iterations:
        step = scheme.step(operator, rng)
        total += step.greedy.samples if step.greedy is not None else 0
        if counted is not None:
            total = getattr(operator, "samples_used", counted) - counted
        out = scheme.output
        assert out is not None  # a scheme has an output once it has stepped
        hist.samples[k], hist.memory[k], hist.steps[k] = total, out.memory, step.alpha
        if mdp is not None:
            hist.losses[k] = backend(mdp).loss(out, mu)
            if measure_errors:
                hist.errors[k] = greedy_error(mdp, step)
        if estimate is not None:
            score = estimate(out)
            hist.scores[k], hist.score_ci[k], hist.games[k] = score.mean, score.ci, score.games
        if keep_outputs:
            hist.outputs.append(out)
        if max_samples is not None and total >= max_samples:
            for name in History.ARRAYS:
                setattr(hist, name, getattr(hist, name)[:k + 1])
            break
    hist.output = scheme.output
    return hist
