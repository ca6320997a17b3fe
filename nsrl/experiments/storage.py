"""Results that lose nothing: one Parquet shard per (instance, MDP), atomic writes, a manifest.

Layout of an output folder::

    manifest.json        the sweep's parameters and fingerprint (what --resume checks)
    shards/*.parquet     one tidy table per shard (pandas.read_parquet("shards") reads all)
    sessions.jsonl       one line per session: start, end, shards computed, wall time

Why Parquet: a typed, compressed, columnar table (19.4 M rows for the paper's protocol
would be over 1 GB of CSV, ~170 MB here), read by pandas/pyarrow/polars/R without pickle,
carrying its own metadata (each shard stores its key and a checksum of its values).

Every file is written to a temporary file in the same folder, fsynced, then renamed
(:mod:`nsrl.experiments.safe_io`): a reader sees either the old file or a complete new one.
A shard counts as done only if it reads, names the right key and sweep, and its checksum
matches; anything else is recomputed on --resume and left out (and reported) by the
statistics. Before a shard is read, the row count and sizes its footer declares are checked,
so a small file cannot make the reader allocate gigabytes. A start that fails before any shard
is written removes what it created, and only that (:meth:`Store.discard`), so the rerun needs
no --resume. One process at a time writes a folder (:mod:`nsrl.experiments.locking`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nsrl.experiments.locking import check_unlocked
from nsrl.experiments.safe_io import (
    TMP_PREFIX,
    append_line,
    name_too_long,
    remove_made,
    write_bytes,
)
from nsrl.experiments.shards import Shard
from nsrl.experiments.sweep import Sweep
from nsrl.model.memory import available_memory, format_bytes
from nsrl.plugins import loaded_plugins

# The columns of a Garnet sweep's shards; another domain's shards hold its own axes in place of
# the first three (:func:`columns_of`).
COLUMNS = ("n_states", "n_actions", "branching", "mdp", "run", "scheme", "iteration", "loss",
           "memory", "step")
VALUE_COLUMNS = COLUMNS[3:]
# A sweep with a sample-based operator also records which operator and features (the column
# "representation" holds the sweep's ``features``: a stored format, kept so that the shards of
# a folder resumed across the rename have one schema), the transitions drawn so far and the
# greedy error rho (T v - T_{pi'} v) of each call.
SAMPLED_COLUMNS = ("operator", "representation", "samples", "error")
# A domain without a model: a Monte-Carlo score in place of the loss, its 95% half-width and the
# games it averages (nsrl.experiments.quality), the transitions drawn and the operator's name.
SIMULATED_COLUMNS = ("mdp", "run", "scheme", "iteration", "score", "score_ci", "games",
                     "memory", "step", "samples", "operator")
_META = b"nsrl.shard"
# What nsrl reproduce and nsrl plot write in a results folder besides the manifest: a folder
# without a manifest that holds one of these holds someone else's files, which a run must not
# append to or overwrite.
OWN_FILES = ("sessions.jsonl", "summary.md", "stats*.csv", "exp*.png", "observations.csv",
             "loss_vs_samples.png", "score_vs_samples.png")
# Temporary shard files of nsrl versions before the safe_io module: .<shard>.parquet.tmp-<pid>
_OLD_TMP = re.compile(r"\..+\.parquet\.tmp-\d+")
# Declared uncompressed bytes per row a shard may hold (8 numeric columns of at most 8 bytes,
# a scheme name, and for sampled sweeps two more names and two numbers), with room to spare.
_MAX_ROW_BYTES = 1024


def columns_of(sweep: Sweep) -> tuple[str, ...]:
    """The columns of ``sweep``'s shards: its domain's axes, then the values."""
    if not sweep.domain_entry.has_model:
        return sweep.axis_names + SIMULATED_COLUMNS
    return sweep.axis_names + VALUE_COLUMNS + (SAMPLED_COLUMNS if sweep.sampled else ())


def checksum(columns: dict) -> str:
    """sha256 of the value columns (loss or score, memory, step...) and the row keys."""
    h = hashlib.sha256()
    for key in ("run", "iteration", "loss", "memory", "step", "samples", "error", "score",
                "score_ci", "games"):
        if key in columns:  # samples, error: sample-based sweeps; score...: no model
            h.update(np.ascontiguousarray(columns[key]).tobytes())
    h.update("\0".join(map(str, columns["scheme"])).encode())
    return h.hexdigest()


def check_folder(out, label: str | None = None) -> Path:
    """``out`` as a Path if it is, or can be created as, a folder this process can write in.

    Raises:
        ValueError: ``out`` is empty, is a file, lies under a file, or its nearest existing
            folder is not writable; the message starts with ``label`` (default
            ``"--out OUT"``).
    """
    check_named(out, label)
    out = Path(out)
    label = label or f"--out {out}"
    check_target(out, label)
    existing = next(p for p in (out, *out.parents) if p.exists() or p == Path(p.anchor))
    if not existing.is_dir():
        where = "is a file" if existing == out else f"lies under {existing}, which is a file"
        raise ValueError(f"{label}: {out} {where}, not a folder; choose another path.")
    fs = _statvfs(existing)
    if fs is not None and fs.f_flag & getattr(os, "ST_RDONLY", 1):
        raise ValueError(f"{label}: {existing} is on a read-only file system; choose a folder "
                         f"you can write to.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{label}: cannot write in {existing} (permission denied); choose a "
                         f"folder you can write to.")
    if fs is not None and fs.f_bavail * fs.f_frsize < 2**20:
        raise ValueError(f"{label}: the disk of {existing} is full ("
                         f"{format_bytes(fs.f_bavail * fs.f_frsize)} free); free some space or "
                         f"choose a folder on another disk.")
    return out


def check_named(out, label: str | None = None) -> None:
    """Refuse an empty or blank folder name (``Path("")`` is the current folder).

    Raises:
        ValueError: ``out`` is a string of blanks; an empty --out would write in the
            current folder unasked.
    """
    if isinstance(out, str) and not out.strip():
        raise ValueError(f"{label or '--out'}: got an empty folder name {out!r}; give a "
                         f"folder, e.g. --out results (or --out . for the current folder).")


def check_target(path, label: str) -> Path:
    """``path`` as a Path if a file can be saved there: a short enough name, not a link.

    Raises:
        ValueError: the message starts with ``label``.
    """
    path = Path(path)
    long = name_too_long(path)
    if long is not None:
        raise ValueError(f"{label}: the name {long[:20]}... ({len(long)} characters) is longer "
                         f"than the file system allows; choose a shorter one.")
    if path.is_symlink():
        raise ValueError(f"{label}: {path} is a symbolic link; nsrl does not write through "
                         f"links: remove the link or choose another path.")
    return path


def _statvfs(folder: Path):
    try:
        return os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return None


def read_manifest(out) -> tuple[dict, Sweep | None]:
    """The manifest of ``out`` and the sweep its fields describe (None if they describe none).

    Raises:
        ValueError: the file is not a manifest nsrl wrote (unreadable, not JSON, keys missing).
    """
    manifest = Path(out) / "manifest.json"
    try:
        data = json.loads(manifest.read_text())
        data["fingerprint"], data["sweep"]  # noqa: B018 - both keys must be there
        if not isinstance(data["sweep"], dict):
            raise TypeError("its 'sweep' is not a table")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{manifest} is not a manifest written by nsrl reproduce "
                         f"({exc!r}); choose another --out folder.") from None
    try:
        sweep = Sweep.from_dict(data["sweep"], record=True)  # older names read as today's
    except (ValueError, TypeError):
        sweep = None
    if sweep is not None and sweep.fingerprint() != data["fingerprint"]:
        sweep = None  # edited fields: they no longer describe the results the file vouches for
    return data, sweep


def _foreign_files(out: Path) -> list[str]:
    """Files of ``out`` that nsrl reproduce would write, in a folder without a manifest."""
    found = sorted({p.name for pattern in OWN_FILES for p in out.glob(pattern)})
    shards = out / "shards"
    if shards.is_dir() and any(shards.iterdir()):
        found.append("shards/")
    return found


def check_out(out, sweep: Sweep, resume: bool = False) -> None:
    """Raise ValueError if ``out`` cannot hold ``sweep`` (see :class:`Store`); writes nothing.

    Refused: a path that is a file or lies under one, a folder that cannot be written, a
    folder holding another sweep, or this sweep without ``resume``.
    """
    out = check_folder(out)
    check_unlocked(out)
    manifest = out / "manifest.json"
    if not manifest.exists():
        foreign = _foreign_files(out) if out.is_dir() else []
        if foreign:
            raise ValueError(f"{out} holds {', '.join(foreign)} but no manifest.json: nsrl "
                             f"reproduce would write over files it did not create; choose an "
                             f"empty or new --out folder.")
        return
    old, _ = read_manifest(out)
    if old["fingerprint"] != sweep.fingerprint():  # the canonical form: stable across renames
        raise ValueError(f"{out} holds {_difference(old, sweep)}; use another --out folder, "
                         f"or the same preset/TOML (and plugins) as before to resume it.")
    if not resume:
        raise ValueError(
            f"{out} already holds results of this sweep; pass --resume to continue "
            f"it, or choose another --out folder."
        )


def _difference(old: dict, sweep: Sweep) -> str:
    """What differs between the manifest ``old`` and ``sweep``, in words."""
    from nsrl.experiments.compat import beyond_flat, flat_view

    then = old.get("components") or {}
    now = sweep.components()
    changed = [f"the {kind} {then.get(kind)!r} (now {now.get(kind)!r})"
               for kind in sorted(set(then) | set(now)) if then.get(kind) != now.get(kind)]
    if changed:
        plugins = ", ".join(old.get("plugins") or []) or "none recorded"
        return (f"results computed with other code: {'; '.join(changed)} (the plugins loaded "
                f"then: {plugins})")
    try:
        before = Sweep.from_dict(old["sweep"], record=True)
    except (ValueError, TypeError) as exc:
        return f"a sweep this process cannot build ({exc})"
    a, b = ({**flat_view(x), **beyond_flat(x)} for x in (before, sweep))
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return f"a different sweep (differs in {diff})"


def read_shard(path, sweep: Sweep) -> tuple[pa.Table | None, str | None]:
    """``(table, None)`` if the file ``path`` is an intact shard of ``sweep``, else ``(None, why)``.

    Intact: it reads as Parquet, its metadata names the shard of its file name (a shard of
    ``sweep``) and the sweep's fingerprint (the manifest's), it has the expected rows, its
    key columns hold that shard's key and its values match the stored checksum.
    """
    path = Path(path)
    shard = sweep.shard_of(path.stem)
    if shard is None:
        return None, "not a shard of this sweep"
    expected = sweep.n_runs * len(sweep.schemes) * sweep.n_iterations
    try:  # the footer only: what the file declares, before anything is allocated for it
        footer = pq.read_metadata(path)
        declared = sum(footer.row_group(i).total_byte_size for i in range(footer.num_row_groups))
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a partial/corrupt shard
        return None, f"unreadable ({type(exc).__name__})"
    if footer.num_rows != expected:
        return None, f"{footer.num_rows} rows instead of {expected}"
    free = available_memory()
    if declared > _MAX_ROW_BYTES * max(expected, 1) or (free is not None and declared > free):
        return None, (f"declares {format_bytes(declared)} for {expected} rows (a shard "
                      f"holds at most {format_bytes(_MAX_ROW_BYTES * expected)})")
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
    key = {**shard.instance, "mdp": shard.mdp}
    if meta.get("shard") != shard.name:
        return None, f"its metadata names shard {meta.get('shard')!r}"
    if meta.get("fingerprint") != sweep.fingerprint():
        return None, "written for another sweep than the manifest's"
    if table.num_rows != expected:
        return None, f"{table.num_rows} rows instead of {expected}"
    if any(not np.all(columns[k] == v) for k, v in key.items()):
        return None, "key columns differ from its name"
    held, column = meta.get("quality", "loss"), sweep.quality.column
    if held != column:
        return None, f"holds {held!r} values, not the sweep's {column!r}"
    if meta.get("checksum") != checksum(columns):
        return None, "values differ from their checksum (edited or corrupt)"
    return table, None


class Store:
    """An output folder bound to one sweep.

    Args:
        out: the folder (created if missing). The caller holds its lock
            (:func:`nsrl.experiments.locking.locked`) while the Store writes.
        sweep: the sweep whose results it holds.
        resume: continue a folder that already holds this sweep. Without it, a folder with a
            manifest is refused (nothing is overwritten); with it, a different sweep is refused.
            A manifest whose fields were edited but whose fingerprint is this sweep's is
            rewritten from ``sweep`` (the shards vouch for the fingerprint, not the fields).
    """

    def __init__(self, out, sweep: Sweep, resume: bool = False):
        check_out(out, sweep, resume)
        self.out, self.sweep = Path(out), sweep
        self.shard_dir = self.out / "shards"
        self.manifest = manifest = self.out / "manifest.json"
        self.sessions = self.out / "sessions.jsonl"
        # what this Store creates (what discard() may remove), innermost folders first
        self._made = [p for p in (self.shard_dir, self.out, *self.out.parents) if not p.exists()]
        self._files = [p for p in (manifest, self.sessions) if not p.exists()]
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.shard_dir.iterdir():  # leftovers of a killed writer (we hold the lock)
            if tmp.name.startswith(TMP_PREFIX) or _OLD_TMP.fullmatch(tmp.name):
                tmp.unlink()
        self.created = not manifest.exists()  # this Store started the folder's sweep
        self.repaired = not self.created and read_manifest(self.out)[1] is None
        if self.created or self.repaired:
            data = {"sweep": sweep.to_dict(), "fingerprint": sweep.fingerprint(),
                    "shards": len(sweep.shards()), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            components = sweep.components()
            if components:  # what resume names when a plugin changed or went missing
                data.update(components=components, plugins=list(loaded_plugins()))
            if not sweep.quality.exact:  # what the shards hold, for any reader of the folder
                data["quality"] = sweep.quality.to_dict()
            write_bytes(manifest, json.dumps(data, indent=2).encode())

    def discard(self) -> None:
        """Undo a start that computed nothing: remove what this Store created, only that.

        Only a Store that wrote the manifest and whose folder holds no shard removes it (and
        the session log if it started it, and the folders it made), so a failed start never
        forces --resume and never takes a file it did not write.
        """
        if not self.created or any(self.shard_dir.glob("*.parquet")):
            return
        for path in self._files:
            path.unlink(missing_ok=True)
        remove_made(self._made)

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
        if not self.sweep.quality.exact:  # a loss shard's metadata is as it always was
            meta["quality"] = self.sweep.quality.column
        table = pa.table({k: columns[k] for k in columns_of(self.sweep)})
        table = table.replace_schema_metadata({_META: json.dumps(meta)})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        write_bytes(self.path(shard), sink.getvalue().to_pybytes())

    def log_session(self, record: dict) -> None:
        """Append one line to sessions.jsonl (wall time of each sitting)."""
        append_line(self.sessions, json.dumps(record))


def open_results(out) -> tuple[Sweep, list[Path]]:
    """The sweep of a results folder and its shard files (for plotting and statistics)."""
    out = Path(out)
    manifest = out / "manifest.json"
    if not manifest.is_file():
        raise ValueError(f"{out} has no manifest.json: is it a folder written by nsrl reproduce?")
    data, sweep = read_manifest(out)
    if sweep is None:
        name = data["sweep"].get("name", "NAME")
        raise ValueError(f"{manifest} was edited: its sweep fields no longer match the "
                         f"fingerprint its shards were written under; rerun `nsrl reproduce "
                         f"--preset {name} --out {out} --resume` with the preset or TOML file "
                         f"that wrote it, which restores the file.")
    return sweep, sorted((out / "shards").glob("*.parquet"))
