"""Writing files that lose nothing: atomic replacement, no writes through links, clear errors.

Every file nsrl saves goes through here. A file is written under a temporary name in its own
folder, flushed to disk, then renamed over its target (``os.replace``): a reader, or a run
killed at any instant, sees the old file or the new one, never a truncated mix. A target that
is a symbolic link is refused (writing through it would overwrite a file elsewhere that nsrl
did not create). An error of the file system (disk full, read-only, name too long) becomes an
:class:`OutputError` whose message names the file and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from pathlib import Path

# Prefix of every temporary file and folder nsrl makes beside its outputs: short (so that a
# long target name still fits the file system's limit) and recognisable (only names with it
# are ever cleaned up as leftovers of a killed writer).
TMP_PREFIX = ".nsrl-tmp-"

# File-system errors that are the environment's, not a bug: the advice for each.
ADVICE = {
    errno.ENOSPC: "free some space or choose a folder on another disk",
    errno.EDQUOT: "free some space (disk quota exceeded) or choose another folder",
    errno.EROFS: "the file system is read-only: choose a folder you can write to",
    errno.EACCES: "permission denied: choose a folder you can write to",
    errno.EPERM: "operation not permitted: choose a folder you can write to",
    errno.ENAMETOOLONG: "a name is longer than the file system allows: choose a shorter one",
    errno.ELOOP: "it is a symbolic link, which nsrl does not write through: remove the link "
                 "or choose another path",
}


class OutputError(OSError):
    """A file or folder cannot be written; ``str()`` is one line naming it and the fix."""

    def __init__(self, code: int, message: str, filename=None):
        super().__init__(code, message, filename)
        self.message = message

    def __str__(self) -> str:
        return self.message


def output_error(exc: OSError, path, what: str = "write") -> OSError:
    """``exc`` as an :class:`OutputError` if it is the environment's fault, else ``exc``."""
    if isinstance(exc, OutputError) or exc.errno not in ADVICE:
        return exc
    reason = exc.strerror or os.strerror(exc.errno)
    return OutputError(exc.errno, f"cannot {what} {path} ({reason}); {ADVICE[exc.errno]}.",
                       str(path))


def describe(exc: OSError) -> str | None:
    """One line for an error of the environment (full disk, read-only...), None for a bug."""
    if isinstance(exc, OutputError):
        return str(exc)
    if exc.errno in ADVICE:
        return str(output_error(exc, exc.filename or "a file"))
    return None


def refuse_link(path) -> Path:
    """``path`` as a Path; :class:`OutputError` (ELOOP) if it is a symbolic link."""
    path = Path(path)
    if path.is_symlink():
        raise OutputError(errno.ELOOP, f"{path} is a symbolic link (to {os.readlink(path)}); "
                          f"nsrl does not write through links: remove it or choose another "
                          f"path.", str(path))
    return path


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(path, suffix: str = ""):
    """Yield a temporary path beside ``path``; on success it replaces ``path`` atomically.

    Write the file at the yielded path (with any library: ``np.savez``, ``DataFrame.to_csv``,
    ``savefig``); when the block ends without an exception it is fsynced and renamed over
    ``path``. On an exception it is removed and ``path`` is left as it was.

    Args:
        path: the target file. A symbolic link or a folder there is refused.
        suffix: ending of the temporary name, for writers that choose a format by it
            (``".npz"``, ``".png"``).

    Raises:
        OutputError: the target is a link, or the file system refused (full, read-only...).
    """
    path = refuse_link(path)
    if path.is_dir():
        raise OutputError(errno.EISDIR, f"{path} is a folder; choose a file name.", str(path))
    tmp = path.with_name(f"{TMP_PREFIX}{secrets.token_hex(6)}{suffix}")
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        refuse_link(path)  # again: a link may have appeared while the file was written
        os.replace(tmp, path)
    except OSError as exc:
        raise output_error(exc, path) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _fsync_folder(path.parent)


def write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "xb") as f:
        f.write(data)


def write_text(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`)."""
    write_bytes(path, text.encode())


def append_line(path, line: str) -> None:
    """Append ``line`` and a newline to ``path`` (created if missing), never through a link.

    The line is written whole or not at all: a write cut short (a full disk, EFBIG under
    ``ulimit -f``) is truncated away before the error is raised. A half line that a crash
    left at the end of the file (no newline after it) is dropped first, so that the next
    line never continues it.
    """
    path = Path(path)
    data = (line + "\n").encode()
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
    except OSError as exc:
        raise output_error(exc, path) from None
    try:
        start = _drop_half_line(fd)
        try:
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
        except OSError:
            os.ftruncate(fd, start)  # nothing of this line stays
            raise
    except OSError as exc:
        raise output_error(exc, path) from None
    finally:
        os.close(fd)


_TAIL = 65536  # bytes read at a time from the end, looking for the last newline


def _drop_half_line(fd: int) -> int:
    """Truncate the file after its last newline if it does not end with one; its new size."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:
        begin = max(0, end - _TAIL)
        newline = os.pread(fd, end - begin, begin).rfind(b"\n")
        if newline >= 0:
            end = begin + newline + 1
            break
        end = begin
    os.ftruncate(fd, end)
    return end


def make_folder(folder) -> list[Path]:
    """Create ``folder`` and its missing parents; return the folders made, innermost first.

    What :func:`remove_made` may later remove: never a folder that existed before.
    """
    folder = Path(folder)
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(exc, folder, "create") from None
    return made


def remove_made(made: list[Path]) -> None:
    """Remove the folders of ``made`` (innermost first) that are still empty."""
    for folder in made:
        with contextlib.suppress(OSError):  # not empty: something else is in it now
            folder.rmdir()


@contextlib.contextmanager
def staging(folder, inputs=(), copies=()):
    """A fresh private folder inside ``folder`` whose outputs are moved into ``folder`` at the end.

    For writers that write several files straight into an output folder: run them on the
    staging folder instead, where nothing can be a user's file or a link planted in advance.
    The names in ``inputs`` (files or folders of ``folder``) are linked into it so that the
    writer reads them where it expects; the files named in ``copies`` are copied in instead,
    for a writer that may rewrite them (a cache it reads back), so that it never writes
    through a link. When the block ends without an exception, every regular file in it (the
    writer's, and the copies) is moved atomically into ``folder`` (a link at a target is
    refused); the staging folder is removed in any case.

    Yields:
        The staging folder (a Path).
    """
    folder = Path(folder)
    stage = folder / f"{TMP_PREFIX}{secrets.token_hex(6)}"
    try:
        stage.mkdir()
        for name in inputs:
            if (folder / name).exists():
                (stage / name).symlink_to(Path("..") / name)
        for name in copies:
            if (folder / name).is_file() and not (folder / name).is_symlink():
                shutil.copyfile(folder / name, stage / name)
    except OSError as exc:
        raise output_error(exc, stage, "create") from None
    try:
        yield stage
        made = [p for p in sorted(stage.iterdir()) if p.is_file() and not p.is_symlink()]
        for p in made:
            refuse_link(folder / p.name)
        for p in made:
            with atomic_path(folder / p.name) as tmp:
                os.replace(p, tmp)
    except OSError as exc:
        raise output_error(exc, folder) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def name_too_long(path) -> str | None:
    """The first component of ``path`` longer than its file system allows, or None."""
    path = Path(path)
    try:
        limit = os.pathconf(_existing_folder(path), "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    return next((part for part in path.parts if len(os.fsencode(part)) > limit), None)


def _existing_folder(path: Path) -> Path:
    for p in (path, *path.parents):
        try:
            if p.is_dir():
                return p
        except OSError:  # e.g. a component too long to look up
            continue
    return Path(".")
