"""``nsrl run`` checks the operator's options and builds the scheme once, and imports no more
than it runs (the experiment registry builds and checks every experiment's sweeps)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys

import nsrl.cli.core
import nsrl.greedy.registry
import nsrl.params
import nsrl.registry
import nsrl.schemes.registry
from nsrl.cli import main

RUN = ["run", "--scheme", "api", "--garnet", "20,2,2", "--operator", "lstdq", "--budget", "500",
       "--iterations", "3", "--json"]


def _count(monkeypatch, functions) -> collections.Counter:
    """Count the calls of ``functions`` through every nsrl module that holds them."""
    counts: collections.Counter = collections.Counter()

    def counted(function):
        def call(*args, **kwargs):
            counts[function.__name__] += 1
            return function(*args, **kwargs)
        return call

    wrappers = {id(f): counted(f) for f in functions}
    for module in [m for n, m in sys.modules.items() if n.startswith("nsrl") and m is not None]:
        for name, value in list(vars(module).items()):
            if id(value) in wrappers:
                monkeypatch.setattr(module, name, wrappers[id(value)])
    return counts


def test_run_checks_the_operator_options_once_and_builds_the_scheme_once(monkeypatch, capsys):
    entry = nsrl.greedy.registry.OperatorEntry
    counts = _count(monkeypatch, [nsrl.params.check_params, nsrl.schemes.registry.make_scheme])
    checks = collections.Counter()
    original = entry.check

    def check(self, options):
        checks[self.name] += 1
        return original(self, options)

    monkeypatch.setattr(entry, "check", check)
    assert main(RUN) == 0
    assert len(json.loads(capsys.readouterr().out)["losses"]) == 3
    # The operator's options: once on the command line, before the MDP is drawn, so that a
    # refusal names the flags before any work; once more by make_operator, the one path that
    # builds every operator (not per iteration: 3 iterations, still 2).
    assert checks == {"lstdq": 2}
    assert counts["make_scheme"] == 1
    # check_params: the scheme's options (make_scheme) and the operator's two checks above;
    # on the release before, 78 (the experiment registry's sweeps, checked at its import).
    assert counts["check_params"] <= 3


def test_run_does_not_import_the_experiment_registry_nor_the_tetris_engine():
    # nsrl tetris's parser reads the board limits (nsrl.tetris.state) only: the package's
    # names are imported on use, so the engine and its numba kernels stay out of nsrl run
    code = ("import sys; from nsrl.cli import main; "
            f"status = main({RUN!r}); "
            "print(status, 'nsrl.experiments.registry' in sys.modules, "
            "'nsrl.tetris.engine' in sys.modules, 'nsrl.tetris.kernels' in sys.modules, "
            "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.stderr.strip().splitlines()[-1] == "0 False False False", done.stderr
    assert len(json.loads(done.stdout)["losses"]) == 3
