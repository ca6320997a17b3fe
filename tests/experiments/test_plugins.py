"""Plugins compose: a user's operator, scheme and domain run in every worker, on every backend.

The plugin is tests/plugins/nsrl_demo_plugin.py (the one docs/guide/extending.md walks
through). It is named only by the TOML sweep's ``plugins`` list or by ``--plugin``: worker
processes (loky, Dask) learn its names by loading it, never from a copy of a registry.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nsrl.cli import build_parser, main

PLUGIN_DIR = Path(__file__).resolve().parents[1] / "plugins"
KEYS = ["n_states", "mdp", "scheme", "run", "iteration"]
SWEEP = """
plugins = ["nsrl_demo_plugin"]
name = "chain-demo"
n_states = [12, 16]
n_mdps = 2
n_runs = 2
n_iterations = 5
schemes = ["api", "api-occ", "psdp"]

[domain]
name = "chain"
options = {slip = 0.2}

[operator]
name = "randomised"
options = {epsilon = 0.3}
"""
# The same sweep in the flat form of earlier releases (the plugin operator's option could not
# be set there: it takes its default).
FLAT = """
plugins = ["nsrl_demo_plugin"]
name = "chain-demo"
domain = "chain"
domain_options = {slip = 0.2}
n_states = [12, 16]
n_mdps = 2
n_runs = 2
n_iterations = 5
schemes = ["api", "api-occ", "psdp"]
operator = "randomised"
"""


@pytest.fixture
def plugin_path(on_workers_path):
    """The plugin's folder importable here and in every child process (loky, Dask)."""
    on_workers_path(PLUGIN_DIR)


def toml(tmp_path, text=SWEEP) -> str:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return str(path)


def table(out) -> pd.DataFrame:
    df = pd.read_parquet(Path(out) / "shards")
    return df.sort_values(KEYS).reset_index(drop=True)


def reproduce(preset, out, *options) -> int:
    return main(["reproduce", "--preset", preset, "--out", str(out), "--no-plot", *options])


@pytest.fixture
def sequential(tmp_path, plugin_path):
    out = tmp_path / "sequential"
    assert reproduce(toml(tmp_path), out, "--backend", "sequential") == 0
    return table(out)


def test_the_plugin_sweep_runs_every_scheme_on_the_plugin_domain(sequential):
    assert set(sequential["scheme"]) == {"API", "API-occ", "PSDP"}
    assert len(sequential) == 2 * 2 * 3 * 2 * 5  # n_states x n_mdps x schemes x runs x K
    assert np.isfinite(sequential["loss"]).all() and (sequential["loss"] >= -1e-9).all()


def test_loky_workers_load_the_plugin_and_agree(tmp_path, sequential):
    out = tmp_path / "loky"
    assert reproduce(toml(tmp_path), out, "--jobs", "2") == 0
    pd.testing.assert_frame_equal(table(out), sequential)


def test_dask_workers_load_the_plugin_and_agree(tmp_path, sequential):
    distributed = pytest.importorskip("dask.distributed")
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert reproduce(toml(tmp_path), out, "--backend", "dask", "--scheduler",
                         cluster.scheduler_address) == 0
    pd.testing.assert_frame_equal(table(out), sequential)


def test_the_plugin_operator_s_option_is_set_by_the_sweep(tmp_path, plugin_path, sequential):
    """epsilon = 0.3 reaches the operator (the losses differ from its default 0.1's), and the
    flat form of earlier releases still loads, warning, with the default."""
    from nsrl.experiments.loader import load_experiment

    spec = load_experiment(toml(tmp_path)).base
    assert spec.operator_options() == {"epsilon": 0.3}
    with pytest.warns(DeprecationWarning, match="domain_options"):
        flat = load_experiment(toml(tmp_path, FLAT)).base
    assert flat.operator_options() == {"epsilon": 0.1} and flat.domain == spec.domain
    assert flat.replace(operator_options={"epsilon": 0.3}).fingerprint() == spec.fingerprint()
    out = tmp_path / "default"
    with pytest.warns(DeprecationWarning):
        assert reproduce(toml(tmp_path, FLAT), out, "--backend", "sequential") == 0
    assert not np.allclose(table(out)["loss"], sequential["loss"])


def test_an_unknown_name_is_refused_listing_the_plugins_names(tmp_path, plugin_path, capsys):
    bad = SWEEP.replace('name = "randomised"', 'name = "nope"')
    assert reproduce(toml(tmp_path, bad), tmp_path / "out", "--backend", "sequential") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'nope'" in err and "'randomised'" in err and "'lstdq'" in err
    assert not (tmp_path / "out").exists()


def test_a_missing_plugin_is_one_line_and_exit_2(tmp_path, capsys):
    text = SWEEP.replace("nsrl_demo_plugin", "no_such_plugin_module")
    assert reproduce(toml(tmp_path, text), tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no_such_plugin_module" in err
    assert main(["--plugin", "no_such_plugin_module", "--version"]) == 2


def test_plugin_option_puts_its_names_in_the_help(plugin_path, capsys):
    with pytest.raises(SystemExit):
        main(["--plugin", "nsrl_demo_plugin", "run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "randomised" in help_text and "api-occ" in help_text


def test_registries_are_read_live_not_copied_at_import():
    """A name registered after import is accepted by the sweep, the CLI and nsrl.run."""
    import nsrl
    from nsrl.domains import DOMAINS
    from nsrl.experiments import Sweep
    from nsrl.greedy.registry import OPERATORS

    nsrl.register_operator("late-exact", nsrl.ExactGreedy, summary="registered late")
    nsrl.register_domain("late-garnet", lambda n_states, n_actions, branching, *, gamma, rng,
                         n_features: nsrl.garnet(n_states, n_actions, branching, n_features,
                                                 gamma, seed=rng))
    try:
        sweep = Sweep(operator="late-exact", domain="late-garnet")
        assert (sweep.operator.name, sweep.domain.name) == ("late-exact", "late-garnet")
        assert "late-exact" in " ".join(build_parser().format_help().split()) or \
            "late-exact" in _run_help()
        mdp = nsrl.garnet(10, 2, 1, seed=0)
        hist = nsrl.run("api", "late-exact", 5, mdp=mdp, rng=np.random.default_rng(0))
        assert hist.losses[-1] < 1e-9  # exact greedy API is policy iteration
    finally:
        OPERATORS.unregister("late-exact")
        DOMAINS.unregister("late-garnet")


def _run_help() -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return " ".join(sub.choices["run"].format_help().split())


def test_an_installed_entry_point_plugin_is_loaded_on_first_lookup(tmp_path):
    """A package declaring the entry point ``nsrl.plugins`` needs no import and no flag."""
    dist = tmp_path / "nsrl_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nsrl-demo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[nsrl.plugins]\ndemo = nsrl_demo_plugin\n")
    code = textwrap.dedent("""
        import nsrl
        op = nsrl.make_operator("randomised", nsrl.garnet(5, 2, 1, seed=0), epsilon=0.5)
        print(type(op).__name__, op.epsilon)
        from nsrl.cli.reproduce import experiments_epilog
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PLUGIN_DIR)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["RandomisedGreedy", "0.5"]


def test_exact_greedy_api_occ_is_policy_iteration(plugin_path):
    """The plugin's scheme with the exact operator: greedy under any rho is the exact one."""
    import nsrl_demo_plugin  # noqa: F401  (registers api-occ)

    import nsrl

    mdp = nsrl.garnet(30, 3, 2, seed=4)
    api = nsrl.run("api", "exact", 8, mdp=mdp, rng=np.random.default_rng(0))
    occ = nsrl.run("api-occ", "exact", 8, mdp=mdp, rng=np.random.default_rng(0))
    np.testing.assert_allclose(occ.losses, api.losses, atol=1e-9)
