"""SB3 PPO, A2C and DQN as learners judged by exact loss against environment transitions.

A *learner* is ``learner(mdp, budget, seed) -> [(samples_used, policy), ...]``: checkpoints
of the policy it would output after ``samples_used`` environment transitions, each policy
tabulated on ``mdp`` (:func:`nsrl.sb3.from_sb3`) so that its exact loss can be computed.
These are the entries ``ppo``, ``a2c`` and ``dqn`` that ``nsrl compare --sb3 LIST`` adds.

What the SB3 agents see differs from nsrl's sample-based schemes: they learn from episodes
that start from the env's reset distribution nu and follow their own behaviour, whereas the
rollout operators use a generative model (reset to any chosen state and action). Their
transitions are counted the same way: every call to the simulator is one sample.

The hyperparameters below are SB3's defaults (RL Zoo style) except where noted; they are
data (:data:`CONFIGS`), so a sweep can change them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from nsrl.exact import check_mdp
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import Deterministic, Stochastic
from nsrl.sb3 import from_sb3
from nsrl.sb3.vecenv import SB3VecEnv


@dataclass(frozen=True)
class SB3Config:
    """How an SB3 learner is built.

    Attributes:
        algo: "ppo", "a2c" or "dqn".
        num_envs: parallel envs of the VecEnv.
        kwargs: keyword arguments of the SB3 algorithm (gamma is the MDP's).
    """

    algo: str
    num_envs: int = 16
    kwargs: dict = field(default_factory=dict)


CONFIGS = {
    # PPO: 64 envs x 32 steps = 2048 transitions per update (SB3's default batch), 4 epochs
    # of minibatches of 256; many envs make SB3's per-step Python overhead small.
    "ppo": SB3Config("ppo", 64, {"n_steps": 32, "batch_size": 256, "n_epochs": 4}),
    # A2C: SB3 defaults (5 steps per env and update, RMSprop 7e-4) on 32 envs.
    "a2c": SB3Config("a2c", 32, {"n_steps": 5}),
    # DQN: 16 envs, one gradient step of 128 transitions per vector step (16 transitions):
    # 8 replayed transitions per new one, as SB3's defaults (batch 32, train_freq 4).
    "dqn": SB3Config("dqn", 16, {"train_freq": 1, "gradient_steps": 1, "batch_size": 128,
                                 "learning_starts": 1000, "buffer_size": 200_000,
                                 "target_update_interval": 2000, "exploration_fraction": 0.2,
                                 "learning_rate": 5e-4}),
}
ALGOS = {"ppo": PPO, "a2c": A2C, "dqn": DQN}


def checkpoints(budget: int, n: int = 12, first: int = 1000) -> np.ndarray:
    """About ``n`` log-spaced sample counts from ``first`` to ``budget`` (included)."""
    if budget < 1:
        raise ValueError(f"budget should be a positive number of transitions, got {budget}.")
    first = min(first, budget)
    return np.unique(np.geomspace(first, budget, n).round().astype(np.int64))


class _Snapshots(BaseCallback):
    """Tabulate the policy each time the transition count passes a checkpoint."""

    def __init__(self, mdp: FiniteMDP, marks: Iterable[int], observation: str) -> None:
        super().__init__()
        self.mdp, self.marks, self.observation = mdp, list(marks), observation
        self.taken: list[tuple[int, Deterministic | Stochastic]] = []

    def _on_step(self) -> bool:
        while self.marks and self.num_timesteps >= self.marks[0]:
            self.marks.pop(0)
            self.taken.append((self.num_timesteps, from_sb3(self.model, self.mdp,
                                                             self.observation)))
        return True


def make_model(config: SB3Config, env: VecEnv, gamma: float, seed: int) -> BaseAlgorithm:
    """The SB3 model of ``config`` on ``env`` (an SB3 VecEnv), on CPU, seeded."""
    if config.algo not in ALGOS:
        raise ValueError(f"algo should be one of {sorted(ALGOS)}, got {config.algo!r}.")
    return ALGOS[config.algo]("MlpPolicy", env, gamma=gamma, seed=seed, device="cpu",
                              verbose=0, **config.kwargs)


def learn(algo: str | SB3Config, mdp: FiniteMDP, budget: int, seed: int, *,
          env: VecEnv | None = None, observation: str = "index",
          max_episode_steps: int | None = 1000,
          n_checkpoints: int = 12) -> list[tuple[int, Deterministic | Stochastic]]:
    """Train an SB3 agent for ``budget`` transitions and return its tabulated checkpoints.

    Args:
        algo: "ppo", "a2c", "dqn" (defaults of :data:`CONFIGS`) or an :class:`SB3Config`.
        mdp: the finite model, for tabulation (and the env, unless ``env`` is given).
        budget: environment transitions to train for.
        seed: seed of the agent and of its env.
        env: an SB3 VecEnv to train on instead of ``SB3VecEnv(mdp, ...)`` (e.g. a
            ``DummyVecEnv`` of ``FrozenLake-v1``); its states must be ``mdp``'s.
        observation: observation mode of the default env and of the tabulation.
        max_episode_steps: truncation horizon of the default env (Garnet-v0's 1000).
        n_checkpoints: about how many log-spaced checkpoints to take.

    Returns:
        ``[(samples_used, policy), ...]`` in increasing order of samples.
    """
    check_mdp(mdp)
    config = CONFIGS[algo] if isinstance(algo, str) and algo in CONFIGS else algo
    if not isinstance(config, SB3Config):
        raise ValueError(f"algo should be one of {sorted(CONFIGS)} or an SB3Config, got {algo!r}.")
    torch.set_num_threads(1)  # small networks: threads only add contention
    if env is None:
        env = SB3VecEnv(mdp, config.num_envs, observation, max_episode_steps)
    else:
        config = replace(config, num_envs=env.num_envs)
    model = make_model(config, env, mdp.gamma, seed)
    snaps = _Snapshots(mdp, checkpoints(budget, n_checkpoints), observation)
    model.learn(int(budget), callback=snaps)
    if not snaps.taken or snaps.taken[-1][0] < model.num_timesteps:
        snaps.taken.append((model.num_timesteps, from_sb3(model, mdp, observation)))
    return snaps.taken


Learner = Callable[[FiniteMDP, int, int], list[tuple[int, Deterministic | Stochastic]]]


def _learner(algo: str) -> Learner:
    def learner(mdp: FiniteMDP, budget: int, seed: int,
                ) -> list[tuple[int, Deterministic | Stochastic]]:
        return learn(algo, mdp, budget, seed)

    learner.__name__ = learner.__qualname__ = f"sb3_{algo}"
    learner.__doc__ = f"SB3 {algo.upper()} on SB3VecEnv(mdp): checkpoints (samples, policy)."
    return learner


sb3_ppo, sb3_a2c, sb3_dqn = (_learner(algo) for algo in ("ppo", "a2c", "dqn"))
LEARNERS = {"ppo": sb3_ppo, "a2c": sb3_a2c, "dqn": sb3_dqn}  # nsrl.experiments.learners names them
