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
right key and sweep, and its checksum matches; anything else is recomputed on --resume and
left out (and reported) by the statistics. A start that fails before any shard is written
removes the manifest it wrote (:meth:`Store.discard`), so the rerun needs no --resume.
"""

from __future__ import annotations

import contextlib
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
# A sweep with a sample-based operator also records which operator and features, the
# transitions drawn so far and the greedy error rho (T v - T_{pi'} v) of each call.
SAMPLED_COLUMNS = ("operator", "representation", "samples", "error")
_META = b"nsrl.shard"


def columns_of(sweep: Sweep) -> tuple[str, ...]:
    """The columns of ``sweep``'s shards."""
    return COLUMNS + (SAMPLED_COLUMNS if sweep.sampled else ())


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def checksum(columns: dict) -> str:
    """sha256 of the value columns (loss, memory, step; samples, error) and the row keys."""
    h = hashlib.sha256()
    for key in ("run", "iteration", "loss", "memory", "step", "samples", "error"):
        if key in columns:  # the last two: sample-based sweeps only
            h.update(np.ascontiguousarray(columns[key]).tobytes())
    h.update("\0".join(map(str, columns["scheme"])).encode())
    return h.hexdigest()


def check_folder(out, label: str | None = None) -> Path:
    """``out`` as a Path if it is, or can be created as, a folder this process can write in.

    Raises:
        ValueError: ``out`` is a file, lies under a file, or its nearest existing folder is
            not writable; the message starts with ``label`` (default ``"--out OUT"``).
    """
    out = Path(out)
    label = label or f"--out {out}"
    existing = next(p for p in (out, *out.parents) if p.exists() or p == Path(p.anchor))
    if not existing.is_dir():
        where = "is a file" if existing == out else f"lies under {existing}, which is a file"
        raise ValueError(f"{label}: {out} {where}, not a folder; choose another path.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{label}: cannot write in {existing} (permission denied); choose a "
                         f"folder you can write to.")
    return out


def check_out(out, sweep: Sweep, resume: bool = False) -> None:
    """Raise ValueError if ``out`` cannot hold ``sweep`` (see :class:`Store`); writes nothing.

    Refused: a path that is a file or lies under one, a folder that cannot be written, a
    folder holding another sweep, or this sweep without ``resume``.
    """
    out = check_folder(out)
    manifest = out / "manifest.json"
    if not manifest.exists():
        return
    try:
        old = json.loads(manifest.read_text())
        fingerprint, fields = old["fingerprint"], old["sweep"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{manifest} is not a manifest written by nsrl reproduce ({exc!r}); "
                         f"choose another --out folder.") from None
    if fingerprint != sweep.fingerprint():
        diff = sorted(k for k, v in sweep.to_dict().items()
                      if fields.get(k) != v and k != "name")
        raise ValueError(
            f"{out} holds a different sweep (differs in {diff}); use another "
            f"--out folder, or the same preset/TOML as before to resume it."
        )
    if not resume:
        raise ValueError(
            f"{out} already holds results of this sweep; pass --resume to continue "
            f"it, or choose another --out folder."
        )


def read_shard(path, sweep: Sweep) -> tuple[pa.Table | None, str | None]:
    """``(table, None)`` if the file ``path`` is an intact shard of ``sweep``, else ``(None, why)``.

    Intact: it reads as Parquet, its metadata names the shard of its file name (a shard of
    ``sweep``) and the sweep's fingerprint (the manifest's), it has the expected rows, its
    key columns hold that shard's key and its values match the stored checksum.
    """
    path = Path(path)
    shard = Shard.from_name(path.stem)
    if shard is None or not sweep.has_shard(shard):
        return None, "not a shard of this sweep"
    try:
        table = pq.read_table(path)
        columns = {k: table.column(k).to_numpy() for k in columns_of(sweep)}
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a partial/corrupt shard
        return None, f"unreadable ({type(exc).__name__})"
    try:
        meta = json.loads((table.schema.metadata or {})[_META])
        if not isinstance(meta, dict):
            raise ValueError
    except (KeyError, ValueError):
        return None, "no nsrl checksum in its metadata (not written by nsrl reproduce)"
    expected = sweep.n_runs * len(sweep.schemes) * sweep.n_iterations
    key = {"n_states": shard.n_states, "n_actions": shard.n_actions,
           "branching": shard.branching, "mdp": shard.mdp}
    if meta.get("shard") != shard.name:
        return None, f"its metadata names shard {meta.get('shard')!r}"
    if meta.get("fingerprint") != sweep.fingerprint():
        return None, "written for another sweep than the manifest's"
    if table.num_rows != expected:
        return None, f"{table.num_rows} rows instead of {expected}"
    if any(not np.all(columns[k] == v) for k, v in key.items()):
        return None, "key columns differ from its name"
    if meta.get("checksum") != checksum(columns):
        return None, "values differ from their checksum (edited or corrupt)"
    return table, None


class Store:
    """An output folder bound to one sweep.

    Args:
        out: the folder (created if missing).
        sweep: the sweep whose results it holds.
        resume: continue a folder that already holds this sweep. Without it, a folder with a
            manifest is refused (nothing is overwritten); with it, a different sweep is refused.
    """

    def __init__(self, out, sweep: Sweep, resume: bool = False):
        check_out(out, sweep, resume)
        self.out, self.sweep = Path(out), sweep
        self.shard_dir = self.out / "shards"
        self.manifest = manifest = self.out / "manifest.json"
        # the folders this Store creates, innermost first (what discard() may remove)
        self._made = [p for p in (self.shard_dir, self.out, *self.out.parents) if not p.exists()]
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.shard_dir.glob(".*.tmp-*"):  # leftovers of a killed writer
            tmp.unlink()
        self.created = not manifest.exists()  # this Store started the folder's sweep
        if self.created:
            data = {"sweep": sweep.to_dict(), "fingerprint": sweep.fingerprint(),
                    "shards": len(sweep.shards()), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            _atomic_write_bytes(manifest, json.dumps(data, indent=2).encode())

    def discard(self) -> None:
        """Undo a start that computed nothing: remove what this Store created.

        Only a Store that wrote the manifest and whose folder holds no shard removes it (and
        the session log, and the folders it made), so a failed start never forces --resume.
        """
        if not self.created or any(self.shard_dir.glob("*.parquet")):
            return
        for name in ("manifest.json", "sessions.jsonl"):
            (self.out / name).unlink(missing_ok=True)
        for folder in self._made:
            with contextlib.suppress(OSError):  # not empty: someone else wrote there
                folder.rmdir()

    def path(self, shard: Shard) -> Path:
        """Where ``shard`` is stored."""
        return self.shard_dir / f"{shard.name}.parquet"

    def is_done(self, shard: Shard) -> bool:
        """True if the shard's file is complete and intact (see :func:`read_shard`)."""
        path = self.path(shard)
        return path.exists() and read_shard(path, self.sweep)[1] is None

    def write(self, shard: Shard, columns: dict) -> None:
        """Store a computed shard atomically."""
        meta = {"shard": shard.name, "fingerprint": self.sweep.fingerprint(),
                "checksum": checksum(columns)}
        table = pa.table({k: columns[k] for k in columns_of(self.sweep)})
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
    if not manifest.is_file():
        raise ValueError(f"{out} has no manifest.json: is it a folder written by nsrl reproduce?")
    try:
        sweep = Sweep.from_dict(json.loads(manifest.read_text())["sweep"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{manifest} is not a manifest written by nsrl reproduce: "
                         f"{exc}") from None
    return sweep, sorted((out / "shards").glob("*.parquet"))
