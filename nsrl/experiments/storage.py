"""Results that lose nothing: one Parquet shard per (instance, MDP), atomic writes, a manifest.

Layout of an output folder::

    manifest.json        the sweep's parameters and fingerprint (what --resume checks)
    shards/*.parquet     one tidy table per shard (pandas.read_parquet("shards") reads all)
    sessions.jsonl       one line per session: start, end, shards computed, wall time

Why Parquet: a typed, compressed, columnar table (19.4 M rows for the paper's protocol
would be over 1 GB of CSV, ~170 MB here), read by pandas/pyarrow/polars/R without pickle,
carrying its own metadata (each shard stores its key and a checksum of its values).

A shard is written to a temporary file in the same folder, fsynced, then renamed: a reader
sees either nothing or a complete file. A shard counts as done only if it reads, names the
right key and sweep, and its checksum matches; anything else is recomputed on --resume.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nsrl.experiments.presets import Shard, Sweep

COLUMNS = ("n_states", "n_actions", "branching", "mdp", "run", "scheme", "iteration", "loss",
           "memory", "step")
_META = b"nsrl.shard"


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def checksum(columns: dict) -> str:
    """sha256 of the value columns (loss, memory, step) and the row keys."""
    h = hashlib.sha256()
    for key in ("run", "iteration", "loss", "memory", "step"):
        h.update(np.ascontiguousarray(columns[key]).tobytes())
    h.update("\0".join(map(str, columns["scheme"])).encode())
    return h.hexdigest()


class Store:
    """An output folder bound to one sweep.

    Args:
        out: the folder (created if missing).
        sweep: the sweep whose results it holds.
        resume: continue a folder that already holds this sweep. Without it, a folder with a
            manifest is refused (nothing is overwritten); with it, a different sweep is refused.
    """

    def __init__(self, out, sweep: Sweep, resume: bool = False):
        self.out, self.sweep = Path(out), sweep
        self.shard_dir = self.out / "shards"
        manifest = self.out / "manifest.json"
        if manifest.exists():
            old = json.loads(manifest.read_text())
            if old.get("fingerprint") != sweep.fingerprint():
                diff = sorted(k for k, v in sweep.to_dict().items()
                              if old.get("sweep", {}).get(k) != v and k != "name")
                raise ValueError(
                    f"{self.out} holds a different sweep (differs in {diff}); use another "
                    f"--out folder, or the same preset/TOML as before to resume it."
                )
            if not resume:
                raise ValueError(
                    f"{self.out} already holds results of this sweep; pass --resume to continue "
                    f"it, or choose another --out folder."
                )
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.shard_dir.glob(".*.tmp-*"):  # leftovers of a killed writer
            tmp.unlink()
        if not manifest.exists():
            data = {"sweep": sweep.to_dict(), "fingerprint": sweep.fingerprint(),
                    "shards": len(sweep.shards()), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            _atomic_write_bytes(manifest, json.dumps(data, indent=2).encode())

    def path(self, shard: Shard) -> Path:
        """Where ``shard`` is stored."""
        return self.shard_dir / f"{shard.name}.parquet"

    def is_done(self, shard: Shard) -> bool:
        """True if the shard's file is complete and intact (see the module docstring)."""
        path = self.path(shard)
        if not path.exists():
            return False
        try:
            table = pq.read_table(path)
            meta = json.loads(table.schema.metadata[_META])
            columns = {k: table.column(k).to_numpy() for k in COLUMNS}
        except Exception:  # noqa: BLE001 - any unreadable file is a partial/corrupt shard
            return False
        expected = self.sweep.n_runs * len(self.sweep.schemes) * self.sweep.n_iterations
        return (meta.get("shard") == shard.name
                and meta.get("fingerprint") == self.sweep.fingerprint()
                and table.num_rows == expected and meta.get("checksum") == checksum(columns))

    def write(self, shard: Shard, columns: dict) -> None:
        """Store a computed shard atomically."""
        meta = {"shard": shard.name, "fingerprint": self.sweep.fingerprint(),
                "checksum": checksum(columns)}
        table = pa.table({k: columns[k] for k in COLUMNS})
        table = table.replace_schema_metadata({_META: json.dumps(meta)})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        _atomic_write_bytes(self.path(shard), sink.getvalue().to_pybytes())

    def log_session(self, record: dict) -> None:
        """Append one line to sessions.jsonl (wall time of each sitting)."""
        with open(self.out / "sessions.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")


def open_results(out) -> tuple[Sweep, list[Path]]:
    """The sweep of a results folder and its shard files (for plotting and statistics)."""
    out = Path(out)
    manifest = out / "manifest.json"
    if not manifest.exists():
        raise ValueError(f"{out} has no manifest.json: is it a folder written by nsrl reproduce?")
    sweep = Sweep.from_dict(json.loads(manifest.read_text())["sweep"])
    return sweep, sorted((out / "shards").glob("*.parquet"))
