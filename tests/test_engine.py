"""nsrl.run: one entry point, two engines, one result type."""

import numpy as np
import pytest

import nsrl


@pytest.fixture(scope="module")
def mdp():
    return nsrl.garnet(15, 3, 2, seed=4)


def rngs(n):
    return [np.random.default_rng(i) for i in range(n)]


def test_auto_batches_several_runs_and_keeps_one_run_on_the_reference_loop(mdp):
    many = nsrl.run("cpi+", nsrl.ProjectedGreedy(mdp), 6, rng=rngs(3))
    one = nsrl.run("cpi+", nsrl.ProjectedGreedy(mdp), 6, rng=np.random.default_rng(2))
    assert many.engine == "batched" and many.losses.shape == (3, 6) and many.output is None
    assert one.engine == "reference" and one.losses.shape == (6,) and one.output is not None
    np.testing.assert_allclose(many.losses[2], one.losses, atol=1e-8)  # run 2 is the same run


@pytest.mark.parametrize("asked", [{"measure_errors": True}, {"keep_outputs": True},
                                   {"mu": None, "pi0": nsrl.constant(1)}])
def test_what_only_the_reference_loop_records_sends_auto_there(mdp, asked):
    h = nsrl.run("api", "projected", 3, rng=rngs(2), mdp=mdp, **asked)
    assert h.engine == "reference" and h.losses.shape == (2, 3) and len(h.output) == 2
    with pytest.raises(ValueError, match="need the reference loop"):
        nsrl.run("api", "projected", 3, rng=rngs(2), mdp=mdp, engine="batched", **asked)


def test_operators_without_a_batched_path_run_on_the_reference_loop(mdp):
    h = nsrl.run("psdp", "exact", 3, rng=rngs(2), mdp=mdp)
    assert h.engine == "reference"
    with pytest.raises(ValueError, match="'exact' has no batched path"):
        nsrl.run("psdp", nsrl.ExactGreedy(mdp), 3, rng=rngs(2), engine="batched")
    custom = nsrl.ProjectedGreedy(mdp, features=np.ones((15, 1)))
    assert nsrl.run("api", custom, 3, rng=rngs(2)).engine == "reference"


def test_a_spec_builds_a_fresh_operator_per_run(mdp):
    """Each run's LSTD-Q keeps its own transitions: run r equals run r made alone."""
    spec = nsrl.OperatorSpec("lstdq", budget=300, features="onehot")
    both = nsrl.run("api", spec, 3, rng=rngs(2), mdp=mdp)
    alone = nsrl.run("api", nsrl.make_operator("lstdq", mdp, budget=300, features="onehot"), 3,
                     rng=np.random.default_rng(1))
    np.testing.assert_array_equal(both.samples[1], alone.samples)
    np.testing.assert_array_equal(both.losses[1], alone.losses)


def test_bad_arguments_are_named(mdp):
    with pytest.raises(ValueError, match="engine should be one of auto, reference, batched"):
        nsrl.run("api", "projected", 3, rng=rngs(1), mdp=mdp, engine="gpu")
    with pytest.raises(ValueError, match="pass mdp="):
        nsrl.run("api", "projected", 3, rng=rngs(1))
    with pytest.raises(TypeError, match="sequence of them"):
        nsrl.run("api", "projected", 3, rng=[0, 1], mdp=mdp)
    with pytest.raises(ValueError, match="max_samples"):
        nsrl.run("api", "projected", 3, rng=rngs(2), mdp=mdp, max_samples=10)


def test_models_above_the_batched_size_run_on_the_reference_loop(mdp, monkeypatch):
    """The path a 10^5-state sweep takes (reference loop, iterative exact backend), at 15."""
    import nsrl.engine
    from nsrl.exact import ExactBackend

    batched = nsrl.run("psdp", "projected", 4, rng=rngs(2), mdp=mdp)
    monkeypatch.setattr(nsrl.engine, "BATCHED_MAX_STATES", 10)
    monkeypatch.setattr(ExactBackend, "__init__", _iterative_init(ExactBackend.__init__))
    big = nsrl.garnet(15, 3, 2, seed=4)  # a new model: a new backend, iterative
    large = nsrl.run("psdp", "projected", 4, rng=rngs(2), mdp=big)
    assert batched.engine == "batched" and large.engine == "reference"
    np.testing.assert_allclose(large.losses, batched.losses, atol=1e-7)
    with pytest.raises(ValueError, match="n_S = 15 is above 10"):
        nsrl.run("psdp", "projected", 4, rng=rngs(2), mdp=big, engine="batched")


def _iterative_init(init):
    def wrapped(self, mdp, memo_size=32):
        init(self, mdp, memo_size)
        self.dense = False
    return wrapped
