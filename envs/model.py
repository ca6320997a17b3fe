"""What every nsrl env offers besides the Gymnasium API: the exact model and its sampler."""

from __future__ import annotations

import numbers
import os

import numpy as np

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
            mdp = FiniteMDP.load(mdp)
        if not isinstance(mdp, FiniteMDP):
            raise TypeError(
                f"mdp should be an nsrl.FiniteMDP or the path (str) of one saved by "
                f"FiniteMDP.save, got {type(mdp).__name__}; build one with nsrl.garnet(...) or "
                "FiniteMDP.from_gymnasium(env)."
            )
        self.mdp = mdp
        self.observation = observations.check_mode(observation, mdp)
        self.backend = kernels.resolve_backend(backend) if backend is not None else None
        self._phi = observations.feature_table(mdp) if observation == "features" else None

    def sample(self, states, actions, rng: np.random.Generator):
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

    def observe(self, states) -> np.ndarray:
        """Observations of a batch of states (shape (n,) or (n, d)) in this env's mode."""
        states = kernels.check_indices("states", states, self.mdp.n_states)
        return observations.encode(states, self.mdp, self.observation, self._phi)


def check_state(value, n_states: int, size: int | None = None) -> np.ndarray:
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


def read_options(options, n_states: int, size: int | None = None) -> np.ndarray | None:
    """Return the start states asked for in ``reset(options=...)``, or None."""
    if options is None:
        return None
    if not isinstance(options, dict) or set(options) - {"state"}:
        raise ValueError(
            f'options should be None or a dict with the single key "state", got {options!r}.'
        )
    return check_state(options["state"], n_states, size) if "state" in options else None


def check_reset_mask(mask, size: int) -> np.ndarray:
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


def read_vector_options(options, n_states: int, size: int):
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
