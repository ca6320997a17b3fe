"""The registry of greedy operators: the one list the CLI, compare, sweeps and ``nsrl.run`` read.

As the scheme registry (:mod:`nsrl.schemes.registry`) names schemes, this one names operators.
An entry holds

* the options the operator takes, declared once (:mod:`nsrl.params`: type, range, default) and
  checked in one place (:meth:`OperatorEntry.check`; an unknown option is refused);
* the factory of the reference path, ``factory(mdp, **options) -> operator``;
* the batched path, where one exists: an entry-point string ``"module:name"`` of the batched
  state that :func:`nsrl.run` builds with the same options (it lives in a layer above this one,
  so it is named, not imported, as Gymnasium names its environments);
* whether it learns from samples, and the memory one greedy call needs (:meth:`nbytes`).

:func:`register_operator` adds one, e.g. an operator of your own, so that ``nsrl run
--operator``, ``nsrl compare --operators``, a sweep's ``operator`` and :func:`nsrl.run` all
accept its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nsrl.greedy.model_based import ExactGreedy, ProjectedGreedy
from nsrl.params import Param, param
from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import Entry, Registry

if TYPE_CHECKING:
    from nsrl.greedy.base import GreedyOperator
    from nsrl.model.mdp import FiniteMDP


def _no_memory(n_states: int, n_actions: int, transitions: int) -> int:
    return 0


def _no_constraint(options: dict) -> None:
    return None


@dataclass(frozen=True)
class OperatorEntry(Entry):
    """One registered greedy operator (:class:`nsrl.registry.Entry`, plus what is its own).

    Attributes:
        factory: ``factory(mdp, **options) -> operator`` (the reference path).
        batched: ``"module:name"`` of the batched engines' state for this operator, called
            as ``state(mdp, **options, solvers=...)``; None when only the reference path runs it.
        sample_based: whether it draws environment transitions (a budget per call).
        nbytes: ``nbytes(n_states, n_actions, transitions) -> bytes`` of one greedy call.
        constraint: ``constraint(options)`` raises ValueError for options that do not go
            together (each one alone is checked by its declaration).
        advantage: whether its ``Greedy`` results carry an estimate of the policy advantage
            (what CPI and CPI+ step on); an operator without one is refused by those schemes
            unless they are told where the advantage comes from.
        legacy: options whose default changed after results were published, with the value
            that reproduces those results: a sweep recorded by an earlier release reads them,
            and a sweep's fingerprint hashes such an option only where it differs from it.
        env_id: the Gymnasium id of the env it is built on when it needs a simulator rather
            than a model (``"Tetris-v0"`` for DPI and CBMPI); None: built on a model.
    """

    nbytes: Callable[..., int] | None = _no_memory
    batched: str | None = None
    sample_based: bool = False
    constraint: Callable[[dict], None] = _no_constraint
    advantage: bool = True
    legacy: Mapping[str, object] = field(default_factory=dict)
    env_id: str | None = None

    kind = "operators"

    def make(self, mdp: FiniteMDP, **options: object) -> GreedyOperator:
        """A fresh operator on ``mdp`` (the reference path), its options checked."""
        return self.resolve()(mdp, **self.check(options))

    def check(self, options: Mapping[str, object]) -> dict:
        """Every option, given or default, checked (unknown: refused), then the constraint."""
        checked = super().check(options)
        self.constraint(checked)
        return checked

    @property
    def memory(self) -> Callable[[int, int, int], int]:
        """``nbytes`` under its former name (read for one more release)."""
        return self.nbytes or _no_memory


OPERATORS: Registry[OperatorEntry] = Registry("operators", "nsrl.register_operator")


def register_operator(name: str, factory: Callable[..., GreedyOperator],
                      params: dict[str, Param] | None = None, *, replace: bool = False,
                      **entry: Any) -> OperatorEntry:
    """Register the operator ``name`` (see :class:`OperatorEntry` for ``entry``'s fields).

    Args:
        name: lower-case, without spaces.
        factory: ``factory(mdp, **options) -> operator``.
        params: its options, name -> :func:`nsrl.params.param`.
        replace: replace an operator already registered under ``name`` (refused otherwise).
        **entry: the other fields of :class:`OperatorEntry` (``memory`` is read as
            ``nbytes``).

    Raises:
        ValueError: a malformed name, or a name taken and ``replace`` False.

    Examples:
        >>> import nsrl
        >>> e = register_operator("greedy-0", lambda mdp: nsrl.ExactGreedy(mdp), summary="x")
        >>> type(make_operator("greedy-0", nsrl.garnet(5, 2, 1, seed=0))).__name__
        'ExactGreedy'
        >>> OPERATORS.unregister("greedy-0")
    """
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"an operator name should be lower-case without spaces, got {name!r}.")
    if "memory" in entry:
        entry["nbytes"] = entry.pop("memory")
    return OPERATORS.register(OperatorEntry(name, factory, dict(params or {}), **entry),
                              replace=replace)


def operator_names() -> tuple[str, ...]:
    """Every registered operator name (read live: installed plugins included)."""
    return OPERATORS.names()


def operator_entry(name: str) -> OperatorEntry:
    """The entry of ``name``, or ValueError naming the registered ones and how to add one."""
    return OPERATORS.lookup(name)


def make_operator(name: str, mdp: FiniteMDP, **options: object) -> GreedyOperator:
    """The operator ``name`` on ``mdp`` with ``options`` (checked; unknown ones refused).

    Examples:
        >>> import nsrl
        >>> make_operator("projected", nsrl.garnet(10, 2, 1, seed=0), noise=0.2).noise
        0.2
    """
    return operator_entry(name).make(mdp, **options)


def unused_options(names: Iterable[str], options: Iterable[str]) -> list[str]:
    """The options (names) that none of the operators ``names`` takes."""
    entries = [operator_entry(n) for n in names]
    return [k for k in options if not any(k in e.params for e in entries)]


def takers(option: str) -> list[str]:
    """The registered operators that take ``option``."""
    return [e.name for e in OPERATORS.entries() if option in e.params]


def options_for(names: Sequence[str], options: dict) -> dict[str, dict]:
    """Split ``options`` (given for several operators at once) by the operators that take them.

    Returns:
        operator name -> the options it declares.

    Raises:
        ValueError: an option that none of ``names`` takes (it would be silently ignored).
    """
    unused = unused_options(names, options)
    if unused:
        who = sorted({t for k in unused for t in takers(k)})
        raise ValueError(f"option(s) {', '.join(map(repr, unused))} are not taken by "
                         f"{', '.join(names)}; they are options of {', '.join(who) or 'none'}: "
                         f"drop them or choose such an operator.")
    return {n: {k: v for k, v in options.items() if k in operator_entry(n).params}
            for n in names}


# --- the built-in operators ----------------------------------------------------------------

# Transitions drawn per greedy call (LSTDQ's and the rollouts' ``budget``; ``samples`` before).
BUDGET = param(int, 10_000, ge=1)
# The sample-based operators' state features by name: Phi, or one-hot (a table); None: Phi if
# the model has it (``representation`` in sweeps before).
FEATURES = param(str | None, None, choices=("phi", "onehot"))
CRITICS = ("auto", "lstd", "regression", "none")
# LSTD-Q's ridge in transitions; None: its default (1e-3 for one-hot or sparse tables, 10 else)
RIDGE = param(float | None, None, ge=0)  # what ends the rollouts, by name
ROLLOUT_PARAMS = {
    "budget": BUDGET,
    "features": FEATURES,
    "horizon": param(int | str | None, None, ge=1, choices=("geometric",)),
    "m": param(int | None, None, ge=1),
    "critic": param(str, "auto", choices=CRITICS),
}


def _critic(name: str) -> object:
    """The rollout operators' ``critic=`` for a name of :data:`CRITICS`.

    "auto" is the operator's default (LSTD on a finite model), "lstd" LSTD(0) on the previous
    call's first transitions, "regression" a ``LinearRegression()`` on the previous call's Q
    estimates, "none" plain rollouts of the horizon H (no bootstrap).
    """
    if name == "regression":
        from sklearn.linear_model import LinearRegression

        return LinearRegression()
    return None if name == "none" else name


def _rollout(kind: str) -> Callable:
    """Factory of RolloutCSC (``"csc"``) or RolloutRegression (``"reg"``) on the native env."""

    def factory(mdp: FiniteMDP, budget: int, features: str | None, horizon: int | str | None,
                m: int | None, critic: str, classifier: str = "softmax") -> GreedyOperator:
        from sklearn.linear_model import Ridge

        from nsrl.envs import FiniteMDPVectorEnv
        from nsrl.greedy.rollout import RolloutCSC, RolloutRegression

        options: dict[str, Any] = {k: v for k, v in (("horizon", horizon), ("m", m))
                                   if v is not None}
        env = FiniteMDPVectorEnv(mdp, num_envs=1)
        if kind == "csc":
            return RolloutCSC(env, _classifier(classifier), budget=budget,
                              features=features, critic=_critic(critic), **options)
        return RolloutRegression(env, Ridge(alpha=1e-3), budget=budget, features=features,
                                 critic=_critic(critic), **options)

    return factory


# rollout-csc's classifier by name: "softmax", the multinomial logistic model on soft labels
# (nsrl.greedy.csc.SoftmaxCSC: the same objective as "logistic", minimised by Newton's method);
# "logistic", scikit-learn's LogisticRegression(max_iter=1000) on weighted rows, the default
# before this option (its L-BFGS stops short of the minimum: kept so that earlier results
# reproduce).
CLASSIFIERS = ("softmax", "logistic")


def _classifier(name: str) -> object:
    if name == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    from nsrl.greedy.csc import SoftmaxCSC

    return SoftmaxCSC()


def _one_critic(options: dict) -> None:
    if options["m"] is not None and options["critic"] == "none":
        raise ValueError("m needs a critic to end the rollouts at m; with critic='none' they "
                         "run the horizon H: drop m or pick a critic.")


def _lstdq(mdp: FiniteMDP, budget: int, features: str | None,
           ridge: float | None) -> GreedyOperator:
    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy.lstdq import LSTDQ

    return LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=budget, features=features,
                 ridge=ridge)


def _lstdq_memory(n_states: int, n_actions: int, transitions: int,
                  n_features: int | None = None) -> int:
    """LSTD-Q's bytes for one call (measured with tracemalloc on Garnets, n_S = 50-200).

    It draws and stores ~135-150 bytes per transition; on one-hot features, on top of its
    counts N(x, a, x') (~12 bytes per (x, a, x') entry), on p features (``n_features``), on top
    of its p A x p A system. Its store keeps at most 10^6 transitions between calls.
    """
    if n_features is not None:
        return 160 * transitions + 8 * (n_features * n_actions) ** 2
    return 160 * transitions + 16 * n_states * n_actions * n_states


def _rollout_memory(n_states: int, n_actions: int, transitions: int) -> int:
    """The rollout operators keep per-state arrays only (1.1-1.8 bytes per transition)."""
    return 4 * transitions


# DPI and CBMPI on Tetris (nsrl.greedy.tetris): built on a Tetris-v0 env, not on a model.
TETRIS_PARAMS = {
    "budget": param(int, 8_000_000, ge=1),
    "n_rollouts": param(int, 1, ge=1),
    "features": param(str, "dellacherie-thiery"),
    "fit": param(str, "softmax", choices=("softmax", "cmaes")),
    "rollout_states": param(str, "behaviour", choices=("behaviour", "occupancy")),
    "behaviour": param(str, "du"),
    "pool_games": param(int, 20, ge=1),
    "pool_pieces": param(int, 50_000, ge=1),
    "height_mix": param(bool, True),
    "occupancy_games": param(int, 50, ge=1),
    "cmaes_sigma": param(float, 0.5, gt=0),
    "cmaes_population": param(int | None, None, ge=2),
    "cmaes_iterations": param(int, 50, ge=1),
    "warm_start": param(bool, True),
    "value_games": param(int, 20, ge=1),
}


def _tetris(critic: str) -> Callable:
    def factory(env: Any, **options: Any) -> GreedyOperator:
        from nsrl.greedy.tetris import TetrisRollouts

        return TetrisRollouts(env, critic=critic, **options)

    return factory


def _tetris_memory(n_states: int, n_actions: int, transitions: int) -> int:
    """A call keeps, per rollout state, its placements' features and rollouts (~12 kB)."""
    return 64 * transitions + 50_000_000


with origin(BUILT_IN):
    register_operator("exact", ExactGreedy, summary="the exact greedy step with the model")
    register_operator("projected", ProjectedGreedy, ProjectedGreedy.params,
                      batched="nsrl.batched.linalg.state:Batch",
                      summary="the paper's greedy(Pi_{Phi,rho}(v + noise))")
    register_operator("lstdq", _lstdq, {"budget": BUDGET, "features": FEATURES, "ridge": RIDGE},
                      sample_based=True, nbytes=_lstdq_memory,
                      summary="LSTD-Q on the env's transitions (no reset-to-state)")
    register_operator("rollout-csc", _rollout("csc"),
                      {**ROLLOUT_PARAMS, "classifier": param(str, "softmax", choices=CLASSIFIERS)},
                      sample_based=True, nbytes=_rollout_memory, constraint=_one_critic,
                      legacy={"classifier": "logistic"},
                      summary="rollouts + cost-sensitive classification (multinomial logistic)")
    register_operator("rollout-reg", _rollout("reg"), ROLLOUT_PARAMS, sample_based=True,
                      nbytes=_rollout_memory, constraint=_one_critic,
                      summary="rollouts + regression of Q (Ridge per action)")
    register_operator("cbmpi", _tetris("linear"),
                      {**TETRIS_PARAMS, "m": param(int, 5, ge=0),
                       "critic_features": param(str, "dellacherie-thiery+rbf-heights+constant"),
                       "critic_decay": param(float, 1.0, gt=0, le=1)},
                      sample_based=True, nbytes=_tetris_memory, env_id="Tetris-v0",
                      summary="Tetris: m-step rollouts, a linear critic, a linear policy (CBMPI)")
    register_operator("dpi", _tetris("none"), {**TETRIS_PARAMS, "m": param(int, 10, ge=0)},
                      sample_based=True, nbytes=_tetris_memory, env_id="Tetris-v0",
                      summary="Tetris: m-step rollouts, a linear policy fit (DPI)")
OPERATORS.seal()
BUILTIN = frozenset(OPERATORS)  # the built-in names (read for one more release)
