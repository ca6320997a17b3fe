"""Benchmark scripts that read the experiments' sweeps, run at their smallest size.

A benchmark is not run by CI at its real size; these runs keep the code path that the real
size takes working as the library changes (a sweep's schemes became (name, options) specs
in architecture round 3 and bench_sweep.py failed on them until this test).
"""

import runpy
import sys
from pathlib import Path

from nsrl.experiments.paper.sweep import SWEEP as PAPER

ROOT = Path(__file__).resolve().parents[1]


def run_script(monkeypatch, name, *args):
    monkeypatch.setattr(sys, "argv", [name, *args])
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    runpy.run_path(str(ROOT / "benchmarks" / name), run_name="__main__")


def test_bench_sweep_runs_every_scheme_of_the_paper_preset(monkeypatch, capsys):
    run_script(monkeypatch, "bench_sweep.py", "--instances", "mid", "--runs", "2",
               "--iterations", "2", "--baseline-runs", "1")
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header[1:-2] == list(PAPER.scheme_names)  # one column per scheme, by its name
    assert "scheme-iterations/s, one core: fast" in out
    for n in PAPER.n_states:
        assert f"n_S = {n:3d}:" in out
