"""What every nsrl env offers besides the Gymnasium API: the exact model and its sampler."""

from __future__ import annotations

import dataclasses
import numbers
import os
from pathlib import Path

import numpy as np
import numpy.typing as npt
from gymnasium.envs.registration import EnvSpec

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP

from . import observations


class ModelAccess:
    """Mixin: ``mdp``, ``sample(states, actions, rng)`` and ``observe(states)``.

    The host class sets ``self.mdp``, ``self.observation`` and ``self.backend`` (via
    :meth:`_init_model`) before using these methods.
    """

    mdp: FiniteMDP
    observation: str
    backend: str | None

    def _init_model(self, mdp: FiniteMDP | str, observation: str, backend: str | None) -> None:
        if isinstance(mdp, str | os.PathLike):
            # A path keeps the env spec serialisable (JSON), e.g. for minari datasets.
            mdp = FiniteMDP.load(model_path(mdp))
        elif isinstance(mdp, dict):  # the inline form a JSON spec holds (see ModelSpec)
            from .export import from_dict

            mdp = from_dict(mdp)
        if not isinstance(mdp, FiniteMDP):
            raise TypeError(
                f"mdp should be an nsrl.FiniteMDP or the path (str) of one saved by "
                f"FiniteMDP.save, got {type(mdp).__name__}; build one with nsrl.garnet(...) or "
                "FiniteMDP.from_gymnasium(env)."
            )
        self.mdp = mdp
        self.observation = observations.check_mode(observation, mdp)
        self.backend = kernels.resolve_backend(backend) if backend is not None else None
        self._phi: np.ndarray | None = (observations.feature_table(mdp)
                                        if observation == "features" else None)

    @property
    def spec(self) -> EnvSpec | None:
        """The env's spec, which can always be written as JSON (see :class:`ModelSpec`)."""
        return self.__dict__.get("_spec")

    @spec.setter
    def spec(self, spec: EnvSpec | None) -> None:
        self._spec = ModelSpec.of(spec)

    @property
    def P(self) -> dict:  # noqa: N802 - Gymnasium's toy_text name
        """The model as Gymnasium's toy_text table: ``P[s][a] = [(prob, s', reward, False)]``.

        What planners written for FrozenLake or Taxi read (e.g. bettermdptools); built once
        from the sparse successor lists (see :func:`nsrl.envs.export.transition_table`).
        """
        if "_table" not in self.__dict__:
            from .export import transition_table

            self._table = transition_table(self.mdp)
        return self._table

    def sample(self, states: npt.ArrayLike, actions: npt.ArrayLike,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Pure batched generative model; does not touch the env's own state or RNG.

        Args:
            states: int array of shape (n,), entries in [0, n_states).
            actions: int array of shape (n,), entries in [0, n_actions).
            rng: Generator of the n uniforms (the same numbers as ``step`` would draw).

        Returns:
            ``(next_states, rewards)``, int64 and float64 arrays of shape (n,); the reward of
            a transition is R[s, a] (r(s) of the state left, for a Garnet).
        """
        return kernels.sample(self.mdp, states, actions, rng, backend=self.backend)

    def observe(self, states: npt.ArrayLike) -> np.ndarray:
        """Observations of a batch of states (shape (n,) or (n, d)) in this env's mode."""
        states = kernels.check_indices("states", states, self.mdp.n_states)
        return observations.encode(states, self.mdp, self.observation, self._phi)


def model_path(path: str | os.PathLike[str]) -> str:
    """The file of a model given as a path: as given, or with ``.npz`` appended as numpy does.

    ``nsrl garnet --out g`` writes ``g.npz``, so ``mdp="g"`` finds it.
    """
    path = Path(path)
    if not path.exists() and path.suffix != ".npz" and path.with_name(path.name + ".npz").is_file():
        path = path.with_name(path.name + ".npz")
    return str(path)


class ModelSpec(EnvSpec):
    """An :class:`~gymnasium.envs.registration.EnvSpec` whose ``to_json`` takes any model.

    ``mdp=`` given as a path is recorded as the absolute path of the file (a
    ``pathlib.Path`` is not JSON); an in-memory ``FiniteMDP`` is written inline by
    ``to_json`` (:func:`nsrl.envs.export.to_dict`, exact floats), so that ``minari`` can store
    and recover the env of a dataset whatever form the model was given in.
    """

    @classmethod
    def of(cls, spec: EnvSpec | None) -> EnvSpec | None:
        """``spec`` as a ModelSpec, its ``mdp`` path made a plain absolute string."""
        if spec is None or isinstance(spec, cls):
            return spec
        kwargs = dict(spec.kwargs)
        if isinstance(kwargs.get("mdp"), str | os.PathLike):
            kwargs["mdp"] = os.path.abspath(model_path(kwargs["mdp"]))
        fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(EnvSpec) if f.init}
        return cls(**{**fields, "kwargs": kwargs})

    def to_json(self) -> str:
        """The spec as JSON, an in-memory model inline."""
        kwargs = dict(self.kwargs)
        if isinstance(kwargs.get("mdp"), FiniteMDP):
            from .export import to_dict

            kwargs["mdp"] = to_dict(kwargs["mdp"])
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(EnvSpec) if f.init}
        return EnvSpec(**{**fields, "kwargs": kwargs}).to_json()


def check_state(value: npt.ArrayLike, n_states: int, size: int | None = None) -> np.ndarray:
    """Validate ``options["state"]``: an int, or (when ``size`` is given) an int array (size,)."""
    if isinstance(value, bool) or not (
        isinstance(value, numbers.Integral) or (size is not None and np.ndim(value) == 1)
    ):
        want = "an int" if size is None else f"an int or an int array of shape ({size},)"
        raise TypeError(f'options["state"] should be {want}, got {value!r}.')
    states = np.asarray(value)
    if states.ndim == 0:
        states = np.full(1 if size is None else size, states)
    try:
        return kernels.check_indices('options["state"]', states, n_states, size=size or 1)
    except ValueError as exc:
        raise ValueError(f"{exc} States are indices 0..{n_states - 1}.") from None


def read_options(options: object, n_states: int, size: int | None = None) -> np.ndarray | None:
    """Return the start states asked for in ``reset(options=...)``, or None."""
    if options is None:
        return None
    if not isinstance(options, dict) or set(options) - {"state"}:
        raise ValueError(
            f'options should be None or a dict with the single key "state", got {options!r}.'
        )
    return check_state(options["state"], n_states, size) if "state" in options else None


def check_reset_mask(mask: object, size: int) -> np.ndarray:
    """Validate ``options["reset_mask"]`` as SyncVectorEnv does: a bool array (size,), any True."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        got = f"dtype {mask.dtype}" if isinstance(mask, np.ndarray) else type(mask).__name__
        raise TypeError(
            f'options["reset_mask"] should be a numpy bool array of shape ({size},), got {got}.'
        )
    if mask.shape != (size,):
        raise ValueError(
            f'options["reset_mask"] should have shape ({size},), got shape {mask.shape}.'
        )
    if not mask.any():
        raise ValueError('options["reset_mask"] should mark at least one copy True, got none.')
    return mask


def read_vector_options(options: object, n_states: int,
                        size: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(reset_mask, states)`` asked for in a vector env's ``reset(options=...)``; None if not."""
    if options is None:
        return None, None
    if not isinstance(options, dict) or set(options) - {"state", "reset_mask"}:
        raise ValueError(
            'options should be None or a dict with keys "state" and/or "reset_mask", '
            f"got {options!r}."
        )
    mask = check_reset_mask(options["reset_mask"], size) if "reset_mask" in options else None
    states = check_state(options["state"], n_states, size) if "state" in options else None
    return mask, states
