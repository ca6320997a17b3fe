"""The recipes of docs/pipelines.md, run as written (each skips when its library is absent).

The scripts of examples/pipelines/ hold their own checks (assertions on what they produce);
these tests run those whose libraries are cheap to install (``pip install -e ".[pipelines]"``)
and check that the docs page shows each script verbatim, so that the page is what is tested.
"""

import re
import runpy
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "pipelines"
DOC = ROOT / "docs" / "pipelines.md"

# script -> the module it needs (skipped without it)
TESTED = {
    "checkers.py": "stable_baselines3",
    "torchrl_rollout.py": "torchrl",
    "minari_dataset.py": "minari",
    "mdptoolbox_vstar.py": "hiive.mdptoolbox",
}


def run_recipe(name, monkeypatch, tmp_path, capsys):
    pytest.importorskip(TESTED[name])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the recipes' mkdtemp go here
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    runpy.run_path(str(SCRIPTS / name), run_name="__main__")
    return capsys.readouterr().out


def code_blocks(text):
    return [m.group(1) for m in re.finditer(r"```(?:python|bash)\n(.*?)```", text, re.S)]


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.iterdir() if p.is_file()))
def test_the_docs_page_shows_every_recipe_verbatim(name):
    script = (SCRIPTS / name).read_text()
    assert script in code_blocks(DOC.read_text()), f"docs/pipelines.md lacks {name} as written"


def test_checkers_pass_on_garnet_and_taxi_by_object_and_by_path(monkeypatch, tmp_path, capsys):
    out = run_recipe("checkers.py", monkeypatch, tmp_path, capsys)
    assert out.count("passes gymnasium's and SB3's check_env") == 5


def test_torchrl_drives_the_native_vector_env_without_and_with_same_step(
    monkeypatch, tmp_path, capsys
):
    out = run_recipe("torchrl_rollout.py", monkeypatch, tmp_path, capsys)
    assert "DISABLED  batch (16, 12), 32 truncations at steps [4, 9]" in out
    assert "SAME_STEP batch (16, 12), 32 truncations at steps [4, 9]" in out


def test_torchrl_refuses_the_default_next_step_mode():
    pytest.importorskip("torchrl")
    import gymnasium as gym
    from torchrl.envs import GymWrapper

    with pytest.raises(RuntimeError, match="SAME_STEP or DISABLED"):
        GymWrapper(gym.make_vec("Garnet-v0", num_envs=2, n_states=10))


def test_minari_dataset_recovers_its_environment_from_the_npz_path(
    monkeypatch, tmp_path, capsys
):
    out = run_recipe("minari_dataset.py", monkeypatch, tmp_path, capsys)
    assert "20 episodes, 1000 transitions, every one possible under P" in out
    assert f"{{'mdp': '{tmp_path}" in out and "same MDP: True" in out


def test_mdptoolbox_v_star_equals_nsrl_v_star(monkeypatch, tmp_path, capsys):
    out = run_recipe("mdptoolbox_vstar.py", monkeypatch, tmp_path, capsys)
    assert [line.split()[0] for line in out.splitlines()] == [
        "Garnet(100,", "Garnet(300,", "FrozenLake-v1", "Taxi-v4"
    ]


def test_minari_stores_and_recovers_an_env_made_from_an_in_memory_model(tmp_path, monkeypatch):
    """The spec of FiniteMDP-v0 over a FiniteMDP object is JSON (the model inline): minari
    writes the dataset (it used to fail with a JSON TypeError, leaving an empty folder)."""
    minari = pytest.importorskip("minari")
    import gymnasium as gym
    import numpy as np
    from minari.data_collector import EpisodeBuffer

    import nsrl

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    mdp = nsrl.garnet(12, 2, 2, seed=5)
    env = gym.make("FiniteMDP-v0", mdp=mdp, max_episode_steps=5)
    obs, _ = env.reset(seed=0)
    observations, actions, rewards = [obs], [], []
    for a in (0, 1, 1, 0, 1):
        obs, r, *_ = env.step(a)
        observations.append(obs), actions.append(a), rewards.append(r)
    buffer = EpisodeBuffer(id=0, observations=observations, actions=actions, rewards=rewards,
                           terminations=[False] * 5, truncations=[False] * 4 + [True])
    minari.create_dataset_from_buffers("nsrl/inline-v0", [buffer], env=env, eval_env=env,
                                       algorithm_name="fixed", author="nsrl", author_email="-",
                                       code_permalink="-", description="-", data_format="arrow")
    recovered = minari.load_dataset("nsrl/inline-v0").recover_environment()
    assert recovered.unwrapped.mdp == mdp
    episode = next(minari.load_dataset("nsrl/inline-v0").iterate_episodes())
    assert np.array_equal(episode.rewards, mdp.R[episode.observations[:-1], episode.actions])


def test_jaxdp_export_is_column_stochastic_and_equals_the_dense_model():
    """to_jaxdp gives jaxdp.MDP's fields (transition[a, s', s], reward[a, s, s']) from the
    sparse successors alone; checked against the dense P without importing jaxdp."""
    from types import SimpleNamespace

    import numpy as np

    import nsrl
    from nsrl.envs import to_jaxdp

    mdp = nsrl.garnet(15, 3, 4, seed=4)
    sparse_only = SimpleNamespace(**{k: getattr(mdp, k) for k in (
        "successors", "R", "gamma", "n_states", "n_actions", "start")})
    fields = to_jaxdp(sparse_only)
    assert sorted(fields) == ["initial", "reward", "terminal", "transition"]
    assert fields["transition"].shape == fields["reward"].shape == (3, 15, 15)
    assert all(v.dtype == np.float64 for v in fields.values())
    transition, reward = fields["transition"], fields["reward"]
    assert np.allclose(transition.sum(axis=1), 1.0, rtol=0, atol=1e-12)  # columns: sum over s'
    for a in range(3):
        for s in range(15):
            assert np.array_equal(transition[a, :, s], mdp.P[s, a])
            assert np.all(reward[a, s] == mdp.R[s, a])
    assert np.array_equal(fields["initial"], mdp.start) and not fields["terminal"].any()
    # jaxdp's expected reward einsum("asx,axs->as") and one Bellman backup match the model's
    v = np.arange(15.0)
    r_sa = np.einsum("asx,axs->as", reward, transition)
    assert np.allclose(r_sa, mdp.R.T, rtol=0, atol=1e-12)
    assert np.allclose(np.einsum("axs,x->as", transition, v), (mdp.P @ v).T, rtol=0,
                       atol=1e-12)
