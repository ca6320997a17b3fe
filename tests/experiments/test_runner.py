"""Runner and storage: same numbers for any worker count and backend, resume, corruption."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from nsrl.experiments.loader import load_sweep
from nsrl.experiments.runner import run_sweep
from nsrl.experiments.storage import Store
from nsrl.experiments.summary import _wall_time
from nsrl.experiments.sweep import Sweep
from nsrl.experiments.worker import compute_shard

TINY = Sweep(name="tiny", n_states=(12,), n_actions=(2, 3), branching=(1, 2), n_mdps=2,
             n_runs=3, n_iterations=8, schemes=("api", "cpi+", "psdp", "nspi(3)"))
KEYS = ["n_states", "n_actions", "branching", "mdp", "scheme", "run", "iteration"]


def table(out) -> pd.DataFrame:
    df = pd.read_parquet(os.path.join(out, "shards"))
    return df.sort_values(KEYS).reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """TINY computed sequentially, in one process: the ground truth of this module."""
    out = tmp_path_factory.mktemp("ref")
    run_sweep(TINY, out, jobs=1, backend="sequential", progress=False)
    return table(out)


def test_table_is_tidy_and_complete(reference):
    assert list(reference.columns) == ["n_states", "n_actions", "branching", "mdp", "run",
                                       "scheme", "iteration", "loss", "memory", "step"]
    assert len(reference) == len(TINY.shards()) * 4 * 3 * 8
    assert not reference.duplicated(KEYS).any()
    assert set(reference["scheme"]) == {"API", "CPI+", "PSDP", "NSPI(3)"}


def test_loky_two_workers_give_identical_results(tmp_path, reference):
    run_sweep(TINY, tmp_path, jobs=2, progress=False)
    pd.testing.assert_frame_equal(table(tmp_path), reference)


def test_dask_backend_gives_identical_results(tmp_path, reference):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        run_sweep(TINY, tmp_path, backend="dask", scheduler=cluster.scheduler_address,
                  progress=False)
    pd.testing.assert_frame_equal(table(tmp_path), reference)


def test_a_shard_does_not_depend_on_the_rest_of_the_sweep(reference):
    """Derived seeds: a smaller sweep containing a shard computes it identically."""
    small = Sweep(**{**TINY.to_dict(), "n_actions": [3], "n_mdps": 2, "name": "small"})
    shard = small.shards()[-1]
    _, cols, _, _ = compute_shard(small.to_dict(), shard)
    ref = reference[(reference["n_actions"] == 3) & (reference["branching"] == shard.branching)
                    & (reference["mdp"] == shard.mdp)]
    mine = pd.DataFrame(cols).sort_values(KEYS).reset_index(drop=True)
    np.testing.assert_array_equal(mine["loss"], ref["loss"])


def test_refuses_mismatched_or_unrequested_resume(tmp_path):
    run_sweep(TINY, tmp_path, jobs=1, backend="sequential", progress=False, limit=1)
    with pytest.raises(ValueError, match="--resume"):
        Store(tmp_path, TINY)
    other = Sweep(**{**TINY.to_dict(), "noise": 0.2})
    with pytest.raises(ValueError, match="different sweep.*noise"):
        run_sweep(other, tmp_path, resume=True, progress=False)


def test_resume_skips_finished_and_recomputes_corrupt_or_partial(tmp_path, reference):
    first = run_sweep(TINY, tmp_path, jobs=1, backend="sequential", progress=False, limit=5)
    assert first["computed"] == 5
    store = Store(tmp_path, TINY, resume=True)
    shards = TINY.shards()
    flipped, truncated = store.path(shards[0]), store.path(shards[1])
    data = bytearray(flipped.read_bytes())
    data[len(data) // 3] ^= 0xFF  # corrupt a byte inside the data pages
    flipped.write_bytes(bytes(data))
    truncated.write_bytes(truncated.read_bytes()[:200])  # a partial file
    (store.shard_dir / ".leftover.parquet.tmp-1").write_bytes(b"half")
    assert not store.is_done(shards[0]) and not store.is_done(shards[1])
    second = run_sweep(TINY, tmp_path, jobs=1, backend="sequential", progress=False,
                       resume=True)
    assert second["computed"] == len(shards) - 5 + 2
    assert not list(store.shard_dir.glob(".*tmp*"))
    pd.testing.assert_frame_equal(table(tmp_path), reference)
    lines = (tmp_path / "sessions.jsonl").read_text().splitlines()
    ends = [json.loads(line) for line in lines if '"end"' in line]
    assert [e["computed"] for e in ends] == [5, second["computed"]]


def test_kill_and_resume_gives_the_uninterrupted_results(tmp_path, reference):
    """SIGKILL a `nsrl reproduce` process mid-run, resume it: identical table."""
    toml = tmp_path / "tiny.toml"
    toml.write_text(TINY.to_toml())
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "nsrl.cli", "reproduce", "--preset", str(toml), "--out",
           str(out), "--jobs", "1", "--backend", "sequential", "--no-plot"]
    proc = subprocess.Popen(cmd + ["--resume"], stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "shards").glob("*.parquet"))) < 2:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list((out / "shards").glob("*.parquet")))
    assert 2 <= done < len(TINY.shards()), "the process should have been killed mid-run"
    subprocess.run(cmd + ["--resume"], check=True, stderr=subprocess.DEVNULL)
    pd.testing.assert_frame_equal(table(out), reference)
    wall, sessions, _ = _wall_time(out)  # the killed session still counts, up to its last shard
    assert sessions == 2 and wall > 0


def test_presets_and_toml(tmp_path):
    paper = load_sweep("paper")
    assert paper.scheme_iterations == 27 * 30 * 30 * 8 * 100
    assert len(paper.shards()) == 810 and paper.shards()[27].mdp == 1  # MDP-major order
    assert load_sweep("quick").scheme_iterations < paper.scheme_iterations / 40
    bad = tmp_path / "bad.toml"
    bad.write_text('n_states = [20]\nn_runz = 3\n')
    with pytest.raises(ValueError, match="n_runz"):
        load_sweep(str(bad))
    with pytest.raises(ValueError, match="preset"):
        load_sweep("no-such-preset")
    with pytest.raises(ValueError, match="branching"):
        Sweep(n_states=(5,), branching=(10,))


@pytest.fixture
def api_under_occupancy():
    """A registered variant of API, greedy under d_{pi,nu}: a subclass without an engine."""
    from nsrl.greedy import Occupancy
    from nsrl.schemes import API, SCHEMES, Step, register_scheme

    class APIOcc(API):  # defined here, so that workers receive it by value
        name = "APIOcc"

        def step(self, operator, rng):
            g = operator.greedy(self.pi, Occupancy(self.pi), rng)
            target, self.pi = self.pi, g.policy
            return Step(target=target, rho=Occupancy(target), greedy=g)

    register_scheme("apiocc", APIOcc)
    yield APIOcc
    SCHEMES.unregister("apiocc")


def test_a_scheme_without_engine_runs_on_the_reference_path(tmp_path, api_under_occupancy):
    """The subclass gets its own losses (never API's), from nsrl.run, in loky workers too."""
    import nsrl
    from nsrl.model.garnet import garnet

    sweep = Sweep(name="occ", n_states=(40,), n_actions=(3,), branching=(2,), n_mdps=2,
                  n_runs=2, n_iterations=6, schemes=("api", "apiocc"))
    with pytest.warns(UserWarning, match="no batched engine for APIOcc: its runs use the "
                                         "reference nsrl.run") as caught:
        run_sweep(sweep, tmp_path, jobs=2, progress=False)
    assert caught[0].filename == __file__  # the warning names the caller's line
    df = table(tmp_path)
    shard = sweep.shards()[1]
    got = df[(df.mdp == shard.mdp) & (df.scheme == "APIOcc")]
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    mdp = garnet(40, 3, 2, seed=rng)
    want = [nsrl.run(api_under_occupancy(), nsrl.ProjectedGreedy(mdp), 6, rng=r).losses
            for r in sweep.run_rngs(shard, "APIOcc")]
    np.testing.assert_allclose(got.sort_values(["run", "iteration"]).loss, np.ravel(want),
                               rtol=0, atol=1e-12)
    api = df[(df.mdp == shard.mdp) & (df.scheme == "API")].sort_values(["run", "iteration"])
    assert not np.allclose(api.loss, np.ravel(want))


SAMPLED = Sweep(name="sampled", n_states=(20,), n_actions=(2, 3), branching=(2,), n_mdps=1,
                n_runs=2, n_iterations=5, schemes=("api", "cpi(0.1)", "psdp", "nspi(3)"),
                operator={"name": "lstdq", "options": {"features": "onehot"}},
                samples_per_pair=20)


@pytest.mark.parametrize("operator", ["lstdq", "rollout-csc"])
def test_sample_based_sweep_is_the_reference_run_for_any_worker_count(tmp_path, operator):
    """Each run is nsrl.run with a fresh operator (derived seeds, greedy errors measured);
    two loky workers give the sequential table."""
    import nsrl
    from nsrl.model.garnet import garnet

    sweep = SAMPLED.replace(operator=operator)
    run_sweep(sweep, tmp_path / "seq", backend="sequential", progress=False)
    run_sweep(sweep, tmp_path / "par", jobs=2, progress=False)
    seq = table(tmp_path / "seq")
    pd.testing.assert_frame_equal(table(tmp_path / "par"), seq)
    assert {"operator", "representation", "samples", "error"} <= set(seq.columns)
    shard = sweep.shards()[1]
    mdp = garnet(20, 3, 2, seed=np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard))))
    rng = sweep.run_rngs(shard, "PSDP")[1]
    h = nsrl.run(nsrl.PSDP(), nsrl.make_operator(operator, mdp, budget=20 * 20 * 3,
                                                 features="onehot"), 5, rng=rng,
                 measure_errors=True)
    got = seq[(seq.n_actions == 3) & (seq.scheme == "PSDP") & (seq.run == 1)]
    np.testing.assert_array_equal(got.loss, h.losses)
    np.testing.assert_array_equal(got.samples, h.samples)
    np.testing.assert_array_equal(got.error, h.errors)
    assert (got.samples.diff().dropna() > 0).all() and (got.error >= 0).all()


def test_a_sample_based_sweep_keeps_the_projected_sweeps_fingerprints_and_seeds():
    """Adding operators changed nothing for the projected operator: same seeds, and the
    sample-based runs draw from other streams."""
    projected = SAMPLED.replace(operator="projected")
    shard = SAMPLED.shards()[0]
    a = projected.run_rngs(shard, "API")[0].random()
    b = SAMPLED.run_rngs(shard, "API")[0].random()
    legacy = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        2014, spawn_key=(1, 20, 2, 2, 0, __import__("zlib").crc32(b"API"), 0)))).random()
    assert a == legacy and b != a


def test_a_shard_holds_one_schemes_output_policy_at_a_time(monkeypatch):
    """The output policies (at 10^5 states up to a hundred 4 MB tables per scheme) are freed
    as soon as their scheme's columns are taken, not at the shard's end;
    the shard's numbers are those of the scheme runs alone. (The exact backend's memo of the
    last 32 values, bounded, is emptied and the collector run before each look.)"""
    import gc
    import weakref

    from nsrl.exact.evaluation import backend
    from nsrl.experiments import worker
    from nsrl.experiments.loader import load_experiment
    from nsrl.policies.stationary import Constant

    sweep = load_experiment("bigger-powered-tiny").sweeps()["grid-lstdq-25"]
    real, alive, losses = worker.run, [], set()

    def watched(scheme, *args, **kwargs):
        backend(kwargs["mdp"])._memo.clear()
        gc.collect()
        assert [ref() for ref in alive if ref() is not None] == [], \
            "an earlier scheme's output policy is still held"
        hist = real(scheme, *args, **kwargs)
        assert hist.output  # the reference engine builds one per run
        # pi_0 (a Constant, the output of a scheme that never moves) is shared by every scheme
        alive.extend(weakref.ref(policy) for policy in hist.output
                     if not isinstance(policy, Constant))
        losses.add(hist.losses.tobytes())
        return hist

    monkeypatch.setattr(worker, "run", watched)
    _, cols, _, _ = compute_shard(sweep.to_dict(), sweep.shards()[0])
    assert len(alive) >= len(sweep.schemes) // 2  # most schemes move from pi_0
    gc.collect()  # the shard's model and its backend: nothing outlives the shard
    assert all(ref() is None for ref in alive)
    K = sweep.n_iterations
    for i in range(len(sweep.schemes)):
        assert cols["loss"][i * K:(i + 1) * K].tobytes() in losses
