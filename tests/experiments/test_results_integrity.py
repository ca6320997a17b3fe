"""Shards are verified before any statistic uses them: every kind of alteration is caught."""

import shutil

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.runner import run_sweep
from nsrl.experiments.storage import Store, read_shard
from nsrl.experiments.sweep import Sweep
from nsrl.experiments.worker import compute_shard

SMALL = Sweep(name="small", n_states=(10,), n_actions=(2,), branching=(1, 2), n_mdps=2,
              n_runs=2, n_iterations=3, schemes=("api", "psdp"))


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    out = tmp_path_factory.mktemp("small") / "out"
    run_sweep(SMALL, out, backend="sequential", progress=False)
    return out


@pytest.fixture
def folder(computed, tmp_path):
    return shutil.copytree(computed, tmp_path / "out")


def _rewrite(path, edit):
    """Apply ``edit`` to the shard's table and write it back as valid Parquet, metadata kept."""
    pq.write_table(edit(pq.read_table(path)), path)


def _set(table, name, values):
    return table.set_column(table.schema.get_field_index(name), name, values)


def _other_sweep_shard(path, folder):
    other = Sweep(**{**SMALL.to_dict(), "noise": 0.2})
    store = Store(folder.parent / "other", other)
    shard, columns, _, _ = compute_shard(other.to_dict(), SMALL.shards()[0])
    store.write(shard, columns)
    shutil.copy(store.path(shard), path)


TAMPERS = {
    "values edited": (lambda p, f: _rewrite(p, lambda t: _set(
        t, "loss", pc.multiply(t["loss"], 2.0))), "checksum"),
    "rewritten by pandas": (lambda p, f: pd.read_parquet(p).to_parquet(p), "no nsrl checksum"),
    "another shard's file": (lambda p, f: shutil.copy(sorted(p.parent.glob("*.parquet"))[1], p),
                             "names shard"),
    "key column edited": (lambda p, f: _rewrite(p, lambda t: _set(
        t, "mdp", pc.add(t["mdp"], 1))), "key columns"),
    "rows dropped": (lambda p, f: _rewrite(p, lambda t: t.slice(0, t.num_rows - 1)), "rows"),
    "another sweep's shard": (_other_sweep_shard, "another sweep"),
    "truncated file": (lambda p, f: p.write_bytes(p.read_bytes()[:200]), "unreadable"),
}


def test_untouched_folder_is_complete(folder):
    _, _, coverage = load_per_mdp(folder)
    assert coverage.intact == coverage.total == 4 and not coverage.excluded


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_every_alteration_is_excluded_and_named(kind, folder):
    tamper, why = TAMPERS[kind]
    path = Store(folder, SMALL, resume=True).path(SMALL.shards()[0])
    tamper(path, folder)
    table, problem = read_shard(path, SMALL)
    assert table is None and why in problem
    assert not Store(folder, SMALL, resume=True).is_done(SMALL.shards()[0])
    _, pm, coverage = load_per_mdp(folder)
    assert coverage.intact == 3 and list(coverage.excluded) == [path.name]
    assert (SMALL.shards()[0].branching, 0) not in set(zip(pm["branching"], pm["mdp"],
                                                           strict=True))


def test_foreign_file_is_excluded_not_counted(folder):
    pd.DataFrame({"loss": [1.0]}).to_parquet(folder / "shards" / "notes.parquet")
    _, _, coverage = load_per_mdp(folder)
    assert coverage.intact == 4 and coverage.excluded == {
        "notes.parquet": "not a shard of this sweep"}
