"""``--quiet`` silences the progress and the notes on stderr, never stdout; bars need a terminal.

A progress bar is drawn only when stderr is a terminal (a log file or a pipe gets none), by the
sweep runner, ``nsrl.run(progress=True)`` and ``nsrl compare`` alike; ``--quiet`` removes it on
a terminal too.
"""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import nsrl
from nsrl.cli import main
from nsrl.experiments.sweep import Sweep

ONE_SHARD = Sweep(name="one", n_states=(8,), n_actions=(2,), branching=(1,), n_mdps=1, n_runs=1,
                  n_iterations=3, schemes=("api",))


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr()


def test_reproduce_and_plot_say_nothing_on_stderr_when_quiet(tmp_path, capsys):
    toml = tmp_path / "one.toml"
    toml.write_text(ONE_SHARD.to_toml())
    out = tmp_path / "out"
    quiet = _run(capsys, ["reproduce", "--preset", str(toml), "--out", str(out),
                          "--backend", "sequential", "--quiet"])  # with its report
    assert quiet.err == ""
    loud = _run(capsys, ["plot", str(out)])
    assert "wrote " in loud.err and "statistics of 1/1 shards" in loud.err
    assert quiet.out == loud.out and "O1" in loud.out  # stdout: the same table


def test_garnet_run_bounds_compare_say_nothing_on_stderr_when_quiet(tmp_path, capsys):
    path = str(tmp_path / "g.npz")
    garnet = ["garnet", "--states", "8", "--actions", "2", "--branching", "2", "--mdp-seed", "0",
              "--out", path]
    assert "wrote " in _run(capsys, garnet).err
    assert _run(capsys, [*garnet, "--quiet"]).err == ""
    assert _run(capsys, ["run", "--scheme", "api", "--mdp", path, "--iterations", "2",
                         "--quiet"]).err == ""
    assert _run(capsys, ["bounds", "--mdp", path, "--m", "2", "--quiet"]).err == ""
    compare = ["compare", "--mdp", path, "--schemes", "api", "--operators", "exact",
               "--seeds", "1", "--iterations", "2", "--out", str(tmp_path / "cmp")]
    assert "wrote " in _run(capsys, compare).err
    result = _run(capsys, [*compare, "--quiet"])
    assert result.err == "" and "api/exact" in result.out


@pytest.mark.parametrize("quiet", [False, True])
def test_compare_draws_its_bar_on_a_terminal_only_and_not_when_quiet(tmp_path, monkeypatch,
                                                                     capsys, quiet):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["compare", "--garnet", "8,2,2", "--schemes", "api,psdp", "--operators", "exact",
            "--seeds", "1", "--iterations", "2", "--out", str(tmp_path)]
    assert main(argv + ["--quiet"] * quiet) == 0
    drawn = terminal.getvalue()
    assert ("nsrl compare" in drawn and "2/2" in drawn) != quiet, drawn


def test_a_run_draws_its_bar_on_a_terminal_only(monkeypatch, capsys):
    mdp = nsrl.garnet(8, 2, 2, seed=0)

    def run():
        nsrl.run("api", nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0), progress=True)

    run()  # stderr captured by pytest: not a terminal
    assert capsys.readouterr().err == ""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    run()
    assert "3/3" in terminal.getvalue()
