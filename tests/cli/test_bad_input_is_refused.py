"""Issue 15's table, row by row: every bad input exits 2 with one line naming the problem and
the fix, before any work or file; valid inputs give the right result."""

import os
import socket
import subprocess
import sys
import tracemalloc

import pandas as pd
import pytest

import nsrl
import nsrl.model.memory as memory
from nsrl.cli import main
from nsrl.model.garnet import garnet_nbytes

SMALL = {"n_states": [10], "n_actions": [2], "branching": [1, 2], "n_mdps": 2, "n_runs": 2,
         "n_iterations": 3, "schemes": ["api", "psdp"]}


def toml(tmp_path, **fields) -> str:
    """A TOML preset: SMALL with ``fields`` (values written verbatim as TOML)."""
    import json

    body = {k: json.dumps(v) for k, v in SMALL.items()} | fields
    path = tmp_path / "preset.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in body.items()))
    return str(path)


def usage_error(argv, capsys) -> str:
    """Run ``nsrl argv``: it must exit 2 with exactly one line on stderr; return the line."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nsrl: error: ") and err.count("\n") == 1, err
    return err


def reproduce(preset, out, *extra):
    return main(["reproduce", "--preset", preset, "--out", str(out), "--backend", "sequential",
                 *map(str, extra)])


@pytest.fixture
def little_memory(monkeypatch):
    """16 GiB available, whatever the machine: the refusals below do not depend on it."""
    monkeypatch.setattr(memory, "available_memory", lambda: 16 * 2**30)


# --- TOML presets: typed fields, named in the error, nothing written ----------------------

@pytest.mark.parametrize(("field", "value"), [
    ("relative_noise", '"false"'), ("n_states", '"50"'), ("noise", '"x"'), ("noise", "nan"),
    ("noise", "1e308"), ("n_features", "0"), ("seed", "-3"), ("n_mdps", "2.0"),
])
def test_bad_preset_field_is_named_and_nothing_is_written(field, value, tmp_path, capsys):
    out = tmp_path / "out"
    err = usage_error(["reproduce", "--preset", toml(tmp_path, **{field: value}), "--out", out],
                      capsys)
    assert f"sweep field {field!r}" in err and ("e.g." in err or "left out" in err)
    assert not out.exists()


def test_string_false_is_not_read_as_true(tmp_path):
    """The bug behind the row: a non-empty string is truthy, so coercion ran the opposite."""
    from nsrl.experiments.loader import load_sweep
    from nsrl.experiments.sweep import Sweep

    with pytest.raises(TypeError, match="relative_noise"):
        Sweep.from_dict({"relative_noise": "false"})
    assert load_sweep(toml(tmp_path, relative_noise="false")).noise_model == "absolute"
    with pytest.raises(ValueError, match="noise_model"):
        Sweep(noise_model="gaussian")


# --- sizes against memory ----------------------------------------------------------------

def test_huge_garnet_is_refused_with_the_figures(little_memory, tmp_path, capsys):
    err = usage_error(["garnet", "--states", 10**9, "--actions", 10, "--branching", 2,
                       "--mdp-seed", 0, "--out", tmp_path / "g.npz"], capsys)
    assert "946 GiB" in err and "16 GiB available" in err and "fewer states" in err
    assert not list(tmp_path.iterdir())


def test_huge_budget_is_refused_with_the_figures(little_memory, tmp_path, capsys):
    err = usage_error(["compare", "--garnet", "10,2,1", "--run-budget", "1e14", "--out",
                       tmp_path / "c"], capsys)
    assert "--run-budget" in err and "16 GiB available" in err
    assert not (tmp_path / "c").exists()


def test_huge_sweep_shards_are_refused_before_the_manifest(little_memory, tmp_path, capsys):
    # The sparse model holds 10^5 states in ~0.3 GiB (a sweep of them runs): 10^8 do not fit.
    out = tmp_path / "out"
    err = usage_error(["reproduce", "--preset", toml(tmp_path, n_states="[100000000]"), "--out",
                       out], capsys)
    assert "n_S = 100000000" in err and "16 GiB available" in err
    assert not out.exists()


@pytest.mark.parametrize("size", [(1000, 10, 2, 100, "classic"), (20_000, 10, 2, 2000, "scalable")])
def test_garnet_memory_estimate_bounds_the_measured_peak(size):
    n_states, n_actions, b, p, draw = size
    tracemalloc.start()
    nsrl.garnet(n_states, n_actions, b, p, seed=0, draw=draw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    estimate = garnet_nbytes(n_states, n_actions, p, b, draw)
    assert 0.8 * estimate <= peak <= estimate


def test_lstdq_memory_estimate_bounds_the_measured_peak(monkeypatch):
    from nsrl.experiments.compare import scheme_learner
    from nsrl.greedy.registry import operator_entry

    mdp = nsrl.garnet(50, 4, 2, seed=0)
    estimate = {"n": operator_entry("lstdq").nbytes(50, 4, 20_000)}
    learner = scheme_learner("api", "lstdq", iterations=2)
    learner(mdp, 40_000, 0)  # warm-up: imports and compilation are not per transition
    tracemalloc.start()
    learner(mdp, 40_000, 0)  # 20 000 transitions per greedy call
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 0.5 * estimate["n"] <= peak <= estimate["n"]


def test_check_memory_refuses_only_beyond_the_available(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)
    memory.check_memory(2**30, "x", "y")
    with pytest.raises(ValueError, match=r"x needs about 1\.5 GiB .* 1 GiB available.*; y\."):
        memory.check_memory(1.5 * 2**30, "x", "y")
    monkeypatch.setattr(memory, "available_memory", lambda: None)  # unknown: never refused
    memory.check_memory(2**80, "x", "y")


# --- overflow and non-finite numbers -----------------------------------------------------

@pytest.mark.parametrize(("argv", "option"), [
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--noise", "1e308"], "--noise"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--noise", "nan"], "--noise"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--seed", "-1"], "--seed"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--mdp-seed", "-1"], "--mdp-seed"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--gamma", "1"], "--gamma"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--budget", "0"], "--budget"),
    (["bounds", "--garnet", "10,2,1", "--tol", "inf"], "--tol"),
    (["bounds", "--garnet", "10,2,1", "--tol", "nan"], "--tol"),
    (["bounds", "--garnet", "10,2,1", "--m", "0"], "--m"),
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--mdp-seed", "-1",
      "--out", "g"], "--mdp-seed"),
    (["compare", "--garnet", "10,2,1", "--seed", "-1", "--out", "c"], "--seed"),
    (["compare", "--garnet", "10,2,1", "--run-budget", "1.5", "--out", "c"], "--run-budget"),
    (["reproduce", "--out", "o", "--jobs", "0"], "--jobs"),
    (["reproduce", "--out", "o", "--limit", "-2"], "--limit"),
])
def test_bad_option_is_named(argv, option, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    err = usage_error(argv, capsys)
    assert f"argument {option}:" in err and "should be" in err
    assert not list(tmp_path.iterdir())


def test_scientific_notation_is_taken_for_exact_ints(tmp_path, capsys):
    assert main(["run", "--scheme", "api", "--garnet", "10,2,1", "--iterations", "2e0",
                 "--json"]) == 0
    assert len(__import__("json").loads(capsys.readouterr().out)["losses"]) == 2


# --- output paths ------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "out"), [
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--mdp-seed", "0"], "dir"),
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--mdp-seed", "0"], "dir/"),
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--mdp-seed", "0"],
     "file/g.npz"),
    (["reproduce", "--backend", "sequential"], "file"),
    (["reproduce", "--backend", "sequential"], "file/sub"),
    (["compare", "--garnet", "10,2,1", "--operators", "exact"], "file"),
])
def test_out_path_that_cannot_be_written_is_refused(command, out, tmp_path, monkeypatch,
                                                    capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("keep me")
    err = usage_error([*command, "--out", out], capsys)
    assert "--out" in err and ("folder" in err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "file"]
    assert not list((tmp_path / "dir").iterdir()) and (tmp_path / "file").read_text() == "keep me"


def test_garnet_says_what_it_writes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["garnet", "--states", "6", "--actions", "2", "--branching", "2", "--mdp-seed", "3"]
    assert main([*argv, "--out", "noext"]) == 0
    assert capsys.readouterr().err.strip().endswith(" to noext.npz")
    assert main([*argv, "--out", "sub/exact.npz"]) == 0
    assert capsys.readouterr().err.strip().endswith(" to sub/exact.npz")
    assert sorted(os.listdir(tmp_path)) == ["noext.npz", "sub"]
    assert nsrl.FiniteMDP.load("noext.npz") == nsrl.garnet(6, 2, 2, seed=3)
    assert nsrl.FiniteMDP.load("sub/exact.npz") == nsrl.garnet(6, 2, 2, seed=3)


# --- compare: empty lists ----------------------------------------------------------------

@pytest.mark.parametrize("option", ["--schemes", "--operators"])
def test_empty_name_list_is_refused(option, tmp_path, capsys):
    err = usage_error(["compare", "--garnet", "10,2,1", option, " , ", "--out", tmp_path / "c"],
                      capsys)
    assert f"{option} is empty" in err and "e.g." in err
    assert not (tmp_path / "c").exists()


# --- dask ----------------------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_refused_before_the_manifest(tmp_path, capsys):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", out, "--backend",
                       "dask", "--scheduler", f"tcp://127.0.0.1:{_closed_port()}"], capsys)
    assert "cannot reach a dask scheduler" in err and "--scheduler" in err
    assert not out.exists()


def test_scheduler_without_dask_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if not installed
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", tmp_path / "o",
                       "--backend", "dask", "--scheduler", "tcp://127.0.0.1:8786"], capsys)
    assert "pip install 'nsrl[dask]'" in err


def test_scheduler_needs_the_dask_backend(tmp_path, capsys):
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", tmp_path / "o",
                       "--scheduler", "tcp://127.0.0.1:8786"], capsys)
    assert "--backend dask" in err


# --- results integrity ---------------------------------------------------------------------

def test_limit_reports_the_shards_on_disk(tmp_path, capsys):
    out = tmp_path / "out"
    assert reproduce(toml(tmp_path), out, "--limit", 2) == 0
    err = capsys.readouterr().err
    assert "2/4 shards done (on disk, intact); 2 to go" in err
    assert len(list((out / "shards").glob("*.parquet"))) == 2
    assert "Coverage: 2/4 shards" in (out / "summary.md").read_text()


def test_edited_shard_is_excluded_reported_and_recomputed(tmp_path, capsys):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    preset, out = toml(tmp_path), tmp_path / "out"
    assert reproduce(preset, out, "--no-plot") == 0
    path = sorted((out / "shards").glob("*.parquet"))[0]
    table = pq.read_table(path)  # other valid Parquet, metadata (and its checksum) kept
    column = table.schema.get_field_index("loss")
    pq.write_table(table.set_column(column, "loss", pc.multiply(table["loss"], 1000.0)), path)
    capsys.readouterr()
    assert main(["plot", str(out)]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("nsrl plot: warning:")]
    assert len(warnings) == 1 and path.name in warnings[0] and "--resume" in warnings[0]
    summary = (out / "summary.md").read_text()
    assert "Coverage: 3/4 shards" in summary and "Excluded" in summary
    edited = pd.read_csv(out / "stats.csv")
    path.unlink()  # the statistics are those of the other shards, as if it were missing
    assert main(["plot", str(out)]) == 0
    pd.testing.assert_frame_equal(edited, pd.read_csv(out / "stats.csv"))
    assert reproduce(preset, out, "--resume") == 0
    assert "Coverage: 4/4 shards" in (out / "summary.md").read_text()
    assert "warning" not in capsys.readouterr().err


def test_failed_start_leaves_no_manifest(tmp_path, monkeypatch):
    """A failure after the manifest was written but before any shard removes what it made."""
    import nsrl.experiments.runner as runner
    from nsrl.experiments.loader import load_sweep

    sweep, out = load_sweep(toml(tmp_path)), tmp_path / "a" / "out"
    original = runner.compute_shard

    def broken(*args):
        raise RuntimeError("worker failed")

    monkeypatch.setattr(runner, "compute_shard", broken)
    with pytest.raises(RuntimeError, match="worker failed"):
        runner.run_sweep(sweep, out, backend="sequential", progress=False)
    assert not (tmp_path / "a").exists()
    (out / "keep").mkdir(parents=True)  # an existing folder stays, with its content
    with pytest.raises(RuntimeError):
        runner.run_sweep(sweep, out, backend="sequential", progress=False)
    assert sorted(os.listdir(out)) == ["keep"]
    monkeypatch.setattr(runner, "compute_shard", original)
    result = runner.run_sweep(sweep, out, backend="sequential", progress=False)  # no --resume
    assert result["done"] == result["total"] == 4


# --- the command line itself -------------------------------------------------------------

def test_broken_pipe_ends_quietly():
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line, as with `| head` on long output
    try:
        proc = subprocess.run([sys.executable, "-m", "nsrl.cli", "bounds", "--garnet", "10,2,1"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == ""


def test_a_bug_keeps_its_traceback(monkeypatch):
    """A ValueError raised inside computation is a bug, not a usage error: it propagates."""
    import importlib

    conc = importlib.import_module("nsrl.theory.concentrability")

    def bug(*args, **kwargs):
        raise ValueError("internal inconsistency")

    monkeypatch.setattr(conc, "concentrability", bug)
    with pytest.raises(ValueError, match="internal inconsistency"):
        main(["bounds", "--garnet", "10,2,1"])


def test_noise_bound_is_declared_once(capsys):
    """The CLI, sweeps and the operator read one declaration (ProjectedGreedy.params)."""
    from nsrl.experiments.sweep import Sweep

    bound = nsrl.ProjectedGreedy.params["noise"].rule.le
    assert Sweep(noise=bound).noise == bound
    with pytest.raises(ValueError, match="noise"):
        Sweep(noise=bound * 1.01)
    with pytest.raises(ValueError, match="noise"):
        nsrl.ProjectedGreedy(nsrl.garnet(5, 2, 1, seed=0), noise=bound * 1.01)
    err = usage_error(["run", "--scheme", "api", "--garnet", "5,2,1", "--noise", bound * 1.01],
                      capsys)
    assert f"{bound:g}" in err


# --- issue 23: one writer per folder, nothing of others deleted, every file atomic ---------

def hold_lock(folder, pid=4242, command="nsrl reproduce --out elsewhere"):
    """Lock ``folder`` as another nsrl process would (another open file description)."""
    import fcntl
    import json

    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".nsrl.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, json.dumps({"pid": pid, "host": "h", "command": command,
                             "since": "2026-01-01T00:00:00"}).encode())
    return fd


def test_a_second_writer_is_refused_naming_the_holder(tmp_path, capsys):
    preset, out = toml(tmp_path), tmp_path / "out"
    assert reproduce(preset, out, "--limit", 1, "--no-plot") == 0
    capsys.readouterr()
    tmp = out / "shards" / ".nsrl-tmp-0123456789ab"  # the holder is writing a shard
    tmp.write_bytes(b"half a shard")
    fd = hold_lock(out)
    before = sorted(p.name for p in out.rglob("*"))
    try:
        for argv in (["reproduce", "--preset", preset, "--out", out, "--resume"],
                     ["plot", out],
                     ["compare", "--garnet", "10,2,1", "--operators", "exact", "--out", out]):
            err = usage_error(argv, capsys)
            assert "is being written by pid 4242 on h" in err and "choose another" in err
    finally:
        os.close(fd)
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing deleted, nothing added
    assert tmp.read_bytes() == b"half a shard"


def test_the_lock_dies_with_its_holder(tmp_path, capsys):
    """kill -9 of the holder frees the folder at once: no stale lock to clean by hand."""
    out = tmp_path / "out"
    out.mkdir()
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out / ".nsrl.lock")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "held\n"
        usage_error(["reproduce", "--preset", toml(tmp_path), "--out", out], capsys)
    finally:
        proc.kill()
        proc.wait()
    assert reproduce(toml(tmp_path), out, "--no-plot") == 0
    assert not (out / ".nsrl.lock").exists()  # released and removed by its holder


def test_a_failed_start_never_deletes_a_file_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "sessions.jsonl").write_text("my notes\n")
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", out], capsys)
    assert "sessions.jsonl" in err and "did not create" in err
    assert sorted(os.listdir(out)) == ["sessions.jsonl"]
    assert (out / "sessions.jsonl").read_text() == "my notes\n"


def test_an_interrupted_start_removes_only_what_it_created(tmp_path, monkeypatch):
    import nsrl.experiments.runner as runner
    from nsrl.experiments.loader import load_sweep

    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "compute_shard", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(load_sweep(toml(tmp_path)), out, backend="sequential", progress=False)
    assert sorted(os.listdir(out)) == ["mine.txt"]


def test_garnet_killed_while_saving_keeps_the_old_file(tmp_path, monkeypatch, capsys):
    """The save is cut short (as by a kill): the old model is intact, no temporary is left.

    ``FiniteMDP.save`` writes atomically (nsrl.model.files): numpy's write is cut short inside.
    """
    import numpy as np

    argv = ["garnet", "--states", "6", "--actions", "2", "--branching", "2", "--out",
            str(tmp_path / "g.npz")]
    assert main([*argv, "--mdp-seed", "1"]) == 0
    old = (tmp_path / "g.npz").read_bytes()

    def killed(file, **arrays):
        file.write(b"PK\x03\x04 truncated")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", killed)
    assert main([*argv, "--mdp-seed", "2"]) == 130
    assert (tmp_path / "g.npz").read_bytes() == old and os.listdir(tmp_path) == ["g.npz"]


def test_a_full_disk_is_one_line_and_leaves_the_old_file(tmp_path, monkeypatch, capsys):
    import errno

    argv = ["garnet", "--states", "6", "--actions", "2", "--branching", "2", "--out",
            str(tmp_path / "g.npz")]
    assert main([*argv, "--mdp-seed", "1"]) == 0
    old = (tmp_path / "g.npz").read_bytes()
    capsys.readouterr()

    import numpy as np

    def full(file, **arrays):  # the disk fills up while the model is written
        file.write(b"PK\x03\x04")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", full)
    err = usage_error([*argv, "--mdp-seed", "2"], capsys)
    assert "No space left on device" in err and "free some space" in err
    assert str(tmp_path / "g.npz") in err  # the file is named
    assert (tmp_path / "g.npz").read_bytes() == old and os.listdir(tmp_path) == ["g.npz"]


def test_a_read_only_file_system_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    import nsrl.experiments.storage as storage

    class ReadOnly:
        f_flag, f_bavail, f_frsize = os.ST_RDONLY, 10**6, 4096

    monkeypatch.setattr(storage, "_statvfs", lambda folder: ReadOnly)
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", tmp_path / "o"],
                      capsys)
    assert "read-only file system" in err and not (tmp_path / "o").exists()


def test_a_name_longer_than_the_file_system_allows_is_refused(tmp_path, capsys):
    err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out",
                       tmp_path / ("x" * 300) / "o"], capsys)
    assert "300 characters" in err and "shorter" in err
    err = usage_error(["garnet", "--states", "5", "--actions", "2", "--branching", "1",
                       "--mdp-seed", "0", "--out", tmp_path / ("g" * 300)], capsys)
    assert "longer than the file system allows" in err
    assert os.listdir(tmp_path) == ["preset.toml"]


def test_outputs_are_never_written_through_links(tmp_path, capsys):
    preset, out = toml(tmp_path), tmp_path / "out"
    assert reproduce(preset, out, "--no-plot") == 0
    capsys.readouterr()
    target = tmp_path / "precious.md"
    target.write_text("not nsrl's")
    (out / "summary.md").symlink_to(target)
    err = usage_error(["plot", out], capsys)
    assert "summary.md is a symbolic link" in err
    assert target.read_text() == "not nsrl's"
    (tmp_path / "g.npz").symlink_to(target)
    err = usage_error(["garnet", "--states", "5", "--actions", "2", "--branching", "1",
                       "--mdp-seed", "0", "--out", tmp_path / "g.npz"], capsys)
    assert "symbolic link" in err and target.read_text() == "not nsrl's"


def test_plot_writes_no_partial_file(tmp_path, monkeypatch, capsys):
    """A report cut short (here: a figure that fails) leaves the earlier report whole."""
    import nsrl.experiments.report as report

    out = tmp_path / "out"
    assert reproduce(toml(tmp_path), out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def broken(*args, **kwargs):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(report, "plot_figure", broken)
    with pytest.raises(RuntimeError):
        main(["plot", str(out)])
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_edited_manifest_with_its_fingerprint_kept_is_named_then_repaired(tmp_path, capsys):
    import json

    preset, out = toml(tmp_path), tmp_path / "out"
    assert reproduce(preset, out, "--no-plot") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["sweep"]["n_runs"] = 3  # the fingerprint is kept
    (out / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    err = usage_error(["plot", out], capsys)
    assert "manifest.json was edited" in err and "--resume" in err
    assert reproduce(preset, out, "--resume") == 0  # the advice works, once
    err = capsys.readouterr().err
    assert "0 shards" in err and "4/4 shards done" in err and "statistics of 4/4" in err
    assert json.loads((out / "manifest.json").read_text())["sweep"]["n_runs"] == 2
    assert main(["plot", str(out)]) == 0


def test_a_shard_declaring_huge_sizes_is_not_read(tmp_path, monkeypatch):
    """The footer's row count and sizes are checked before any column is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nsrl.experiments.loader import load_sweep
    from nsrl.experiments.storage import read_shard

    sweep = load_sweep(toml(tmp_path))
    path = tmp_path / f"{sweep.shards()[0].name}.parquet"
    pq.write_table(pa.table({"loss": pa.array([0.0] * 10**6)}), path)  # small on disk
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: pytest.fail("read before checks"))
    assert read_shard(path, sweep) == (None, "1000000 rows instead of 12")
    rows = sweep.n_runs * len(sweep.schemes) * sweep.n_iterations
    pq.write_table(pa.table({"scheme": pa.array(["x" * 10**5] * rows)}), path)
    table, why = read_shard(path, sweep)
    assert table is None and why.startswith("declares ") and "at most 12 KiB" in why


def test_compare_with_too_small_a_rollout_budget_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "c"
    err = usage_error(["compare", "--garnet", "10,2,1", "--operators", "rollout-csc",
                       "--run-budget", "5", "--out", out], capsys)
    assert "--run-budget 5" in err and "too small" in err and "raise the budget" in err
    assert not out.exists()


def test_a_sweep_with_too_small_a_rollout_budget_is_refused_before_any_shard(tmp_path, capsys):
    out = tmp_path / "o"
    preset = toml(tmp_path, operator='"rollout-csc"', features='"onehot"',
                  samples_per_pair="1")
    err = usage_error(["reproduce", "--preset", preset, "--out", out], capsys)
    assert "'samples_per_pair'" in err and "raise samples_per_pair" in err
    assert not out.exists()


def test_plot_of_an_unfinished_experiment_is_refused_not_summarised(tmp_path, monkeypatch,
                                                                    capsys):
    """After --limit 1 each variant has 1 of its shards: no table of verdicts over them."""
    from nsrl.experiments import registry
    from nsrl.experiments.experiment import Experiment
    from nsrl.experiments.sensitivity.analysis import analyse
    from nsrl.experiments.sweep import Sweep

    base = Sweep(name="sens", n_states=(10,), n_actions=(2,), branching=(1, 2), n_mdps=2,
                 n_runs=2, n_iterations=3, schemes=("api", "psdp"))
    experiment = Experiment("sensitivity", base, {"default": {}, "no-noise": {"noise": 0.0}},
                            "Sensitivity", analyse)
    registry.register_experiment(experiment, replace=True)
    out = tmp_path / "fam"
    assert reproduce("sensitivity", out, "--limit", 1, "--no-plot") == 0
    capsys.readouterr()
    err = usage_error(["plot", out], capsys)
    assert "default has 1/4 shards" in err and "--resume" in err
    assert not (out / "sensitivity.md").exists() and not (out / ".nsrl.lock").exists()
    fd = hold_lock(out)  # the experiment's folder is locked as a whole
    try:
        assert "is being written by pid 4242" in usage_error(
            ["reproduce", "--preset", "sensitivity", "--out", out, "--resume"], capsys)
    finally:
        os.close(fd)
    assert reproduce("sensitivity", out, "--resume", "--no-plot") == 0
    assert main(["plot", str(out)]) == 0 and (out / "sensitivity.md").exists()


# --- issue 23: no silent wrong number -------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["run", "--scheme", "api", "--garnet", "20,2,2", "--gamma", "0.999999999999"],
    ["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--mdp-seed", "0",
     "--gamma", "0.999999999999", "--out", "g"],
    ["bounds", "--garnet", "10,2,1", "--gamma", "0.9999999"],
])
def test_a_gamma_too_close_to_one_is_refused(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    err = usage_error(argv, capsys)
    assert "argument --gamma" in err and "0.99999]" in err
    assert not list(tmp_path.iterdir())


def test_a_sweep_or_model_file_with_gamma_too_close_to_one_is_refused(tmp_path, capsys):
    err = usage_error(["reproduce", "--preset", toml(tmp_path, gamma="0.999999999999"),
                       "--out", tmp_path / "o"], capsys)
    assert "sweep field 'gamma'" in err and "0.99999]" in err
    g = nsrl.garnet(10, 2, 1, seed=0)
    nsrl.FiniteMDP(g.P, g.R, 1 - 1e-12, features=g.features).save(tmp_path / "m.npz")
    err = usage_error(["run", "--scheme", "api", "--mdp", tmp_path / "m.npz"], capsys)
    assert "too close to 1" in err and "use gamma <= 0.99999" in err
    assert not (tmp_path / "o").exists()


def test_gamma_bound_is_the_sweeps():
    from nsrl.cli.common import GAMMA_MAX
    from nsrl.experiments.accuracy import GAMMA_MAX as ACCURATE

    assert GAMMA_MAX == ACCURATE


def test_the_largest_accepted_gamma_still_gives_accurate_losses(capsys):
    assert main(["run", "--scheme", "api", "--garnet", "20,2,2", "--gamma", "0.99999",
                 "--iterations", "3", "--json"]) == 0
    losses = __import__("json").loads(capsys.readouterr().out)["losses"]
    assert min(losses) >= 0


@pytest.mark.parametrize("reward", [1e308, 1e306])
def test_rewards_near_overflow_are_refused_never_nan(reward, tmp_path, capsys):
    import numpy as np

    g = nsrl.garnet(10, 2, 2, seed=0)
    nsrl.FiniteMDP(g.P, np.linspace(0, reward, 10), 0.99, features=g.features).save(
        tmp_path / "m.npz")
    for argv in (["run", "--scheme", "api", "--mdp", tmp_path / "m.npz", "--json"],
                 ["compare", "--mdp", tmp_path / "m.npz", "--operators", "exact", "--out",
                  tmp_path / "c"]):
        err = usage_error(argv, capsys)
        assert "float64's overflow" in err and "rescale the rewards" in err
    assert capsys.readouterr().out == "" and not (tmp_path / "c").exists()


def test_an_impossible_loss_is_never_printed(monkeypatch, capsys):
    """Whatever goes wrong inside, a negative or NaN loss ends as exit 2, not as output."""
    import numpy as np

    import nsrl.engine as engine

    real_run = engine.run

    def broken(*args, **kwargs):
        hist = real_run(*args, **kwargs)
        hist.losses[:] = [2.4e10, -1.2e10, np.nan][:len(hist.losses)]
        return hist

    monkeypatch.setattr(engine, "run", broken)
    err = usage_error(["run", "--scheme", "api", "--garnet", "10,2,1", "--iterations", "3",
                       "--json"], capsys)
    assert "not accurate (1 not finite, 1 negative (down to -1.2e+10) of 3" in err
    assert capsys.readouterr().out == ""


def test_a_shard_with_impossible_losses_is_not_stored(tmp_path, monkeypatch, capsys):
    import numpy as np

    import nsrl.experiments.runner as runner

    real = runner.compute_shard

    def broken(*args):
        shard, columns, cpu, r_max = real(*args)
        columns["loss"][0] = np.nan
        return shard, columns, cpu, r_max

    monkeypatch.setattr(runner, "compute_shard", broken)
    assert reproduce(toml(tmp_path), tmp_path / "o") == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("nsrl: error: the losses of shard s010_a02_b01_m000 are not accurate "
                          "(1 not finite")
    assert not (tmp_path / "o").exists()


def test_lstdq_counts_are_the_same_bits_with_and_without_numba(monkeypatch):
    """NSRL_NO_NUMBA=1 gives the same sums: both paths add in batch order into running sums."""
    import numpy as np

    import nsrl.greedy.transitions as store
    from nsrl.greedy.sampling import Transitions

    if store.numba is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(0)

    def batch(n):
        x, nxt = rng.integers(0, 7, n), rng.integers(0, 7, n)
        return Transitions(x, x, rng.integers(0, 3, n), rng.random(n) * 1e3, nxt, nxt,
                           rng.random(n) < 0.1)

    batches = [batch(500) for _ in range(4)]
    results = []
    for fused in (True, False):
        monkeypatch.setattr(store, "FUSED", fused)
        counts = store.IndexCounts(7, 3)
        for data in batches:
            counts.update(data)
        counts.update(batches[0], sign=-1.0)  # evicted, as the FIFO store does
        results.append([counts.visits, counts.rewards, counts.states, counts._next])
    for fused, fallback in zip(*results, strict=True):
        assert fused.tobytes() == fallback.tobytes()


# --- issue 23: tracebacks that are now one line, exit 2 ---------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--scheme", "nspi(9223372036854775808)", "--garnet", "10,2,1"],
     "malformed scheme 'nspi(9223372036854775808)'"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--iterations", "1e12"],
     "--iterations 1,000,000,000,000 (the history of every iteration) needs about"),
    (["compare", "--garnet", "10,2,1", "--iterations", "1e12", "--out", "c"],
     "--iterations 1,000,000,000,000"),
    (["run", "--scheme", "api", "--garnet", "10,2,1", "--n-features", "11"],
     "--n-features 11 is more than the 10 states"),
    (["garnet", "--states", "10", "--actions", "2", "--branching", "1", "--mdp-seed", "0",
      "--n-features", "100000", "--out", "g"], "use --n-features 10 or fewer"),
])
def test_a_former_traceback_is_one_line(argv, expected, tmp_path, monkeypatch, little_memory,
                                        capsys):
    monkeypatch.chdir(tmp_path)
    assert expected in usage_error(argv, capsys)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("n_actions", "[2147483648]", "sweep field 'n_actions' should be a non-empty list of ints "
                                  "in [1, 2147483647]"),
    ("n_features", "11", "sweep field 'n_features': 11 is more than n_states = 10"),
])
def test_a_sweep_beyond_its_columns_or_its_states_is_refused(field, value, expected, tmp_path,
                                                             capsys):
    err = usage_error(["reproduce", "--preset", toml(tmp_path, **{field: value}), "--out",
                       tmp_path / "o"], capsys)
    assert expected in err and not (tmp_path / "o").exists()


def test_sizes_up_to_the_int32_columns_are_accepted():
    """Sizes are stored as int32 (nsrl.experiments.runner): a 10^5-state sweep is valid."""
    from nsrl.experiments.sweep import INT32_MAX, Sweep

    sweep = Sweep(n_states=(10**5,), n_actions=(2,), branching=(2,), n_mdps=1, n_runs=1,
                  n_iterations=1, schemes=("api",))
    assert sweep.n_states == (10**5,) and sweep.shards()[0].name == "s100000_a02_b02_m000"
    Sweep(n_states=(INT32_MAX,), n_actions=(INT32_MAX,), branching=(1,))
    with pytest.raises(ValueError, match="2147483647"):
        Sweep(n_states=(INT32_MAX + 1,))


def test_a_scheduler_without_workers_is_refused_at_once(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as c:
        err = usage_error(["reproduce", "--preset", toml(tmp_path), "--out", tmp_path / "o",
                           "--backend", "dask", "--scheduler", c.scheduler_address], capsys)
    assert "has no worker" in err and "dask worker" in err and not (tmp_path / "o").exists()


def test_a_service_that_is_not_dask_is_refused_within_the_timeout():
    """A TCP server that accepts and never answers (as an HTTP server does to Dask's
    handshake): refused after the timeout, not hung."""
    import threading

    pytest.importorskip("distributed")
    from nsrl.experiments.checks import check_scheduler

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    try:
        with pytest.raises(ValueError, match="no answer within 0.5 s"):
            check_scheduler(f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=0.5)
    finally:
        server.close()
