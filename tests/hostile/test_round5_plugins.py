"""Issue 47's registration and plugin rows: a name reaches one class everywhere, or is refused.

Each row is a fact the hostile attack found broken: a plugin replacing a built-in silently, a
subclass running as its parent under the parent's name, a preset calling any function of any
module, a plugin ending the process with rc 0. The registries are restored after each test
(tests/conftest.py).
"""

from __future__ import annotations

import sys

import pytest

import nsrl
from nsrl.cli import main
from nsrl.experiments.sweep import Sweep
from nsrl.greedy import ExactGreedy
from nsrl.plugins import PluginError, load_plugin
from nsrl.schemes import API

SMALL = dict(n_states=(10,), n_actions=(2,), branching=(1,), n_mdps=1, n_runs=1, n_iterations=2)


class OtherExact(ExactGreedy):
    """A plugin's operator: ExactGreedy's code under another class."""


class Lazy(API):
    """A plugin scheme that inherits its parent's ``name``."""


class Renamed(API):
    name = "W"


def test_a_built_in_name_is_not_replaced_silently():
    with pytest.raises(ValueError, match="replace=True"):
        nsrl.register_operator("exact", OtherExact)
    with pytest.raises(ValueError, match="replace=True"):
        nsrl.register_scheme("api", Lazy)
    nsrl.register_operator("exact", ExactGreedy)  # the same code again: nothing changes


def test_a_name_registered_twice_with_other_code_is_refused():
    nsrl.register_operator("mine", ExactGreedy)
    with pytest.raises(ValueError, match="replace=True"):
        nsrl.register_operator("mine", OtherExact)


def test_a_replaced_built_in_is_in_the_fingerprint():
    before = Sweep(operator="exact", **SMALL).fingerprint()
    nsrl.register_operator("exact", OtherExact, replace=True)
    after = Sweep(operator="exact", **SMALL)
    assert after.fingerprint() != before
    assert after.operator_entry.factory is OtherExact


def test_a_subclass_runs_as_itself_under_its_registered_name():
    nsrl.register_scheme("lazy", Lazy)
    nsrl.register_scheme("wscheme", Renamed)
    sweep = Sweep(schemes=["api", "lazy", "wscheme"], **SMALL)
    assert sweep.scheme_names == ("API", "lazy", "wscheme")  # no two share a shard label
    assert [type(sweep.scheme(n)) for n in sweep.scheme_names] == [API, Lazy, Renamed]


@pytest.mark.parametrize("spec", ["os:abort", "builtins:breakpoint", "sys:exit"])
def test_a_preset_may_run_only_a_plugin_s_own_functions(spec):
    with pytest.raises(PluginError, match="may run only its own module's cod"):
        load_plugin(spec)


def test_a_plugin_that_exits_on_import_is_an_error_not_rc_0(tmp_path, monkeypatch, capsys):
    (tmp_path / "quitter.py").write_text("import sys\nprint('hello')\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    status = main(["--plugin", "quitter", "run", "--garnet", "10,2,1", "--iterations", "1"])
    captured = capsys.readouterr()
    assert status == 2 and "sys.exit(0)" in captured.err and "quitter" in captured.err
    assert "hello" not in captured.out  # a plugin's prints never reach stdout (--json)
    sys.modules.pop("quitter", None)


REPLACER = '''
import nsrl
from nsrl.greedy import ExactGreedy, Greedy
from nsrl.policies import Constant


class Stubborn(ExactGreedy):
    """The exact operator that always answers action 0 (losses unlike the built-in's)."""

    def greedy(self, target, rho, rng):
        return Greedy(Constant(0), 0.0, 0)


nsrl.register_operator("exact", Stubborn, replace=True)
'''
REPLACED = '''
plugins = ["replacer"]
name = "replaced"
n_states = [12]
n_actions = [2]
branching = [2]
n_mdps = 2
n_runs = 1
n_iterations = 3
schemes = ["api", "psdp"]
operator = {name = "exact"}
'''


def test_a_replaced_built_in_reaches_every_worker(tmp_path, on_workers_path):
    """The sweep gives the same numbers with 1 and 2 workers, and they are the plugin's."""
    import pandas as pd

    (tmp_path / "replacer.py").write_text(REPLACER)
    (tmp_path / "replaced.toml").write_text(REPLACED)
    (tmp_path / "builtin.toml").write_text(REPLACED.replace('plugins = ["replacer"]\n', ""))
    on_workers_path(tmp_path)  # fresh workers now, and none kept after the test

    def losses(preset, out, *options):
        args = ["reproduce", "--preset", str(tmp_path / preset), "--out", str(tmp_path / out),
                "--no-plot", *options]
        assert main(args) == 0
        df = pd.read_parquet(tmp_path / out / "shards")
        return df.sort_values(["mdp", "scheme", "run", "iteration"])["loss"].to_numpy()

    built_in = losses("builtin.toml", "b", "--backend", "sequential")
    one = losses("replaced.toml", "one", "--backend", "sequential")
    two = losses("replaced.toml", "two", "--jobs", "2")
    assert (one == two).all() and not (one == built_in).all()
    sys.modules.pop("replacer", None)
