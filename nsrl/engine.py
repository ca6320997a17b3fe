"""One way to run a scheme: :func:`run`, for one run or many, on the engine that fits.

Two engines compute the same runs (tested equal, losses to 1e-8):

* ``"reference"``: the scheme objects' own loop (:func:`nsrl.schemes.base.reference_run`), one
  run at a time, with any scheme and any operator; it keeps the output policies and can
  measure the greedy errors;
* ``"batched"``: every run of one MDP at once (:mod:`nsrl.batched`), for the scheme classes
  that have a batched engine and the operators whose registry entry has a batched path (the
  paper's projected operator); it records losses, memory and steps.

``engine="auto"`` (the default) takes the batched engines for several runs whenever they can
compute everything asked for and the model has at most :data:`BATCHED_MAX_STATES` states, and
the reference loop otherwise, as scikit-learn's
``KMeans(algorithm=...)`` picks its engine behind one signature. Both return a
:class:`~nsrl.schemes.base.History` that says which engine produced it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from nsrl.greedy.base import GreedyOperator, check_operator
from nsrl.greedy.registry import OPERATORS, OperatorEntry, operator_entry
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import Policy
from nsrl.schemes import make_scheme
from nsrl.schemes.base import History, Scheme, reference_run

ENGINE_NAMES = ("auto", "reference", "batched")
# The batched engines hold a few dense n_S x n_S arrays per run (LU factors, inverses): built
# for the paper's sizes (n_S <= 200). Above this, "auto" takes the reference loop, whose exact
# backend works in O(S A b) memory (certified iterative solves above 300 states).
BATCHED_MAX_STATES = 2000


class OperatorSpec:
    """A greedy operator by registry name and options, built when a run starts.

    Each run gets a fresh operator (a sample-based operator's transition store is the run's
    own), built on the run's problem: the model (``mdp=`` of :func:`run`) or, where no model
    exists, the env (``env=``); the factory takes it as its first positional argument. The
    options are checked now, against the registry's declaration.

    Args:
        name: a registered operator (:func:`nsrl.greedy.registry.operator_names`).
        **options: its options (unknown ones are refused).

    Examples:
        >>> OperatorSpec("lstdq", budget=500)
        OperatorSpec('lstdq', budget=500, features=None, ridge=None)
    """

    def __init__(self, name: str, **options: object) -> None:
        self.entry = operator_entry(name)
        self.name, self.options = self.entry.name, self.entry.check(options)

    @classmethod
    def checked(cls, entry: OperatorEntry, options: dict) -> OperatorSpec:
        """The spec of ``entry`` with ``options`` already checked (a sweep's; not again)."""
        spec = cls.__new__(cls)
        spec.entry, spec.name, spec.options = entry, entry.name, dict(options)
        return spec

    def make(self, problem: FiniteMDP | Any) -> GreedyOperator:
        """A fresh operator on ``problem``: a model, or an env for a domain without one."""
        return self.entry.resolve()(problem, **self.options)

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"OperatorSpec({self.name!r}{options})"


def run(scheme: Scheme | str, operator: GreedyOperator | OperatorSpec | str,
        n_iterations: int = 100, *,
        rng: np.random.Generator | Sequence[np.random.Generator], engine: str = "auto",
        mdp: FiniteMDP | None = None, mu: npt.ArrayLike | None = None,
        pi0: Policy | None = None, measure_errors: bool = False, keep_outputs: bool = False,
        progress: bool = False, max_samples: int | None = None, solvers: Any = None,
        estimate: Any = None, env: Any = None) -> History:
    """Run ``scheme`` with ``operator`` for ``n_iterations``, once per Generator of ``rng``.

    Args:
        scheme: a scheme object or name (:func:`nsrl.make_scheme`).
        operator: a greedy operator object (shared by the runs), or an :class:`OperatorSpec`
            or a registered operator name (a fresh operator per run, built on ``env`` if given,
            else on ``mdp``).
        n_iterations: iterations K per run (paper: 100).
        rng: a numpy Generator (one run: the History's arrays have shape (K,)) or a sequence
            of them (one run each: shape (R, K), row r is run r).
        engine: ``"auto"`` (default), ``"reference"`` or ``"batched"`` (module docstring).
        mdp: the finite model (default: ``operator.mdp``); needed to build an operator from
            its name, and for exact losses.
        mu: distribution of the loss (uniform unless given; reference engine).
        pi0: initial policy (default: action 0 everywhere; reference engine).
        measure_errors: also record the greedy errors (reference engine).
        keep_outputs: keep every output policy in ``History.outputs`` (reference engine).
        progress: show a tqdm progress bar on stderr when it is a terminal (reference
            engine).
        max_samples: stop once the operator's transitions reach this many (one run only).
        solvers: the batched engines' :class:`~nsrl.batched.linalg.solvers.Solvers` (speed
            only: every method is exact).
        estimate: where no model gives the loss (a simulator), the output's quality after
            each iteration: ``estimate(policy) -> Score``, e.g.
            ``nsrl.greedy.sampling.quality.MonteCarlo(env, games=100)``; recorded in
            ``History.scores``, ``score_ci`` and ``games`` (reference engine).
        env: where no model exists, the env a registered operator (a name or an
            :class:`OperatorSpec`) is built on, fresh for each run; the losses stay NaN unless
            ``mdp`` is given too (reference engine).

    Returns:
        A :class:`~nsrl.schemes.base.History`; ``History.engine`` names the engine used.

    Raises:
        ValueError: a bad argument, or ``engine="batched"`` where it cannot run (the message
            says why); TypeError: a scheme class without a batched engine, forced batched.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = run("api", nsrl.ProjectedGreedy(mdp), 5, rng=np.random.default_rng(0))
        >>> h.losses.shape, h.engine
        ((5,), 'reference')
        >>> h = run("cpi+", "projected", 5, rng=[np.random.default_rng(i) for i in range(3)],
        ...         mdp=mdp)
        >>> h.losses.shape, h.engine
        ((3, 5), 'batched')
    """
    if engine not in ENGINE_NAMES:
        raise ValueError(f"engine should be one of {', '.join(ENGINE_NAMES)}, got {engine!r}.")
    scheme = make_scheme(scheme) if isinstance(scheme, str) else scheme
    operator = OperatorSpec(operator) if isinstance(operator, str) else operator
    several = not isinstance(rng, np.random.Generator)
    rngs = _generators(rng)
    if not isinstance(operator, OperatorSpec):
        check_operator(operator)
        if env is not None:
            raise ValueError("env= builds an operator given by name or OperatorSpec; this "
                             "operator object is built already: drop env=.")
        mdp = getattr(operator, "mdp", None) if mdp is None else mdp
    elif mdp is None and env is None:
        raise ValueError(f"operator {operator.name!r} is built when a run starts: pass mdp= "
                         f"(the model) or env= (a simulator without one).")
    reference_only = {"mu": mu is not None, "pi0": pi0 is not None,
                      "measure_errors": measure_errors, "keep_outputs": keep_outputs,
                      "progress": progress, "max_samples": max_samples is not None,
                      "estimate": estimate is not None, "env": env is not None}
    if several and max_samples is not None:
        raise ValueError("max_samples stops each run at its own iteration: give one "
                         "Generator per call (rng=np.random.default_rng(seed)).")
    batched = engine == "batched" or (engine == "auto" and several)
    why = _why_not_batched(scheme, operator, mdp, reference_only) if batched else ""
    if engine == "batched":
        from nsrl.batched import engine_for

        engine_for(scheme)  # TypeError naming the way out for a class without an engine
        if why:
            raise ValueError(f"the batched engines cannot run this: {why}; use engine='auto' "
                             f"or 'reference'.")
    if batched and not why:
        from nsrl.batched import DEFAULT, run_batched

        if isinstance(operator, OperatorSpec):
            spec = operator
        else:  # an operator of a registered class with a batched path (_why_not_batched)
            entry = _entry_of(operator)
            assert entry is not None
            spec = OperatorSpec(entry.name, **getattr(operator, "get_params")())  # noqa: B009
        batch = batched_state(spec.name)(mdp, **spec.options, solvers=solvers or DEFAULT)
        hist = run_batched(scheme, batch, rngs, n_iterations)
        return hist if several else hist.row(0)
    ops: Iterable[GreedyOperator]  # a fresh operator per run for a spec, built when it starts
    if isinstance(operator, OperatorSpec):
        problem = env if env is not None else mdp
        assert problem is not None  # refused above
        ops = (operator.make(problem) for _ in rngs)
    else:
        ops = [operator] * len(rngs)
    hists = [reference_run(scheme, op, n_iterations, rng=r, pi0=pi0, mdp=mdp, mu=mu,
                           measure_errors=measure_errors, keep_outputs=keep_outputs,
                           progress=progress, max_samples=max_samples, estimate=estimate)
             for r, op in zip(rngs, ops, strict=False)]
    return History.stack(hists) if several else hists[0]


def _entry_of(operator: object) -> OperatorEntry | None:
    """The registry entry whose factory is ``operator``'s class (None if there is none)."""
    return next((e for e in OPERATORS.entries() if e.factory is type(operator)), None)


def _generators(rng: object) -> list[np.random.Generator]:
    if isinstance(rng, np.random.Generator):
        return [rng]
    if isinstance(rng, Sequence) and rng and all(isinstance(r, np.random.Generator)
                                                 for r in rng):
        return list(rng)
    raise TypeError(f"rng should be a numpy Generator or a non-empty sequence of them, got "
                    f"{type(rng).__name__}; e.g. rng=np.random.default_rng(0).")


def _why_not_batched(scheme: Scheme, operator: GreedyOperator | OperatorSpec,
                     mdp: FiniteMDP | None, reference_only: dict) -> str:
    """Why the batched engines cannot compute this run ('' when they can)."""
    from nsrl.batched import has_engine  # loads the engines (they register on import)

    asked = [k for k, v in reference_only.items() if v]
    if asked:
        return f"{', '.join(asked)} need the reference loop"
    if mdp is not None and mdp.n_states > BATCHED_MAX_STATES:
        return (f"n_S = {mdp.n_states} is above {BATCHED_MAX_STATES} (the batched engines keep "
                f"dense n_S x n_S matrices per run)")
    if not has_engine(scheme):
        return f"{type(scheme).__name__} has no batched engine"
    entry: OperatorEntry | None
    if isinstance(operator, OperatorSpec):
        entry = operator.entry
    else:
        entry = _entry_of(operator)
        if entry is not None and (getattr(operator, "custom_features", False)
                                  or getattr(operator, "mdp", None) is not mdp):
            return "the operator projects on features or a model other than the MDP's"
    if entry is None or entry.batched is None:
        name = entry.name if entry else type(operator).__name__
        return f"the operator {name!r} has no batched path"
    if getattr(mdp, "n_features", None) is None:
        return "the MDP has no features Phi"
    return ""


def batched_state(name: str) -> Any:
    """The batched state class of the registered operator ``name`` (its entry-point string)."""
    batched = operator_entry(name).batched
    if batched is None:
        raise ValueError(f"operator {name!r} has no batched path; run it with "
                         f"engine='reference'.")
    module, _, attr = batched.partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["BATCHED_MAX_STATES", "ENGINE_NAMES", "OperatorSpec", "batched_state", "run"]
