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


def test_the_rollout_budget_study_runs_its_path_at_a_small_size(monkeypatch, capsys, tmp_path):
    import json

    out = tmp_path / "budget.jsonl"
    args = ("--n-states", "400", "--budgets", "2000,8000", "--schemes", "api,psdp",
            "--iterations", "2", "--out", str(out))
    run_script(monkeypatch, "study_grid_rollout_budget.py", *args)
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["budget"], r["scheme"]) for r in first] == [
        (2000, "api"), (2000, "psdp"), (8000, "api"), (8000, "psdp")]
    for r in first:
        assert len(r["losses"]) == 2 and min(r["losses"]) >= 0
        assert 0 < r["samples"] <= 2 * r["budget"]  # the budget caps each call
        assert r["loss_pi0"] > 0 and r["classifier"] == "softmax"
    # The family's run seeds: a second run gives the same numbers.
    run_script(monkeypatch, "study_grid_rollout_budget.py", *args)
    again = [json.loads(line) for line in out.read_text().splitlines()][4:]
    assert [r["losses"] for r in again] == [r["losses"] for r in first]
    capsys.readouterr()
    run_script(monkeypatch, "study_grid_rollout_budget.py", "--table", "--out", str(out))
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| softmax")]
    assert len(rows) == 8 and "8,000" in rows[-1]


def test_the_tetris_fits_benchmark_runs_its_four_fits_at_a_small_size(monkeypatch, capsys,
                                                                       tmp_path):
    out = tmp_path / "csc.txt"
    run_script(monkeypatch, "bench_tetris_csc.py", "--budget", "20000", "--iterations", "2",
               "--generations", "2", "--games", "4", "--out", str(out))
    rows = [r for r in out.read_text().splitlines() if r.startswith("| 1 ") or
            r.startswith("| 2 ")]
    assert [r.split("|")[3].strip() for r in rows] == [
        "softmax, cold", "softmax, warm", "CMA-ES, cold", "CMA-ES, warm"] * 2
    capsys.readouterr()
