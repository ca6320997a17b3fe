"""One writer per output folder: an exclusive lock held for the whole life of a run.

``nsrl reproduce``, ``nsrl plot`` and ``nsrl compare`` hold an advisory ``flock`` on the file
``.nsrl.lock`` of their output folder while they write there. A second writer is refused at
once with a message naming the holder (pid, host, command, start time). The operating system
releases the lock when its process ends, however it ends (kill -9 included), so a lock never
outlives its holder and needs no manual cleaning; the file itself is removed on a clean
release. Where ``fcntl`` is missing (Windows), folders are not locked.

Locks are re-entrant within a process (the reproduce command's own plot step runs inside the
lock of its run).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

from nsrl.experiments.safe_io import OutputError, output_error

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # absent on Windows: checked before use

LOCK_NAME = ".nsrl.lock"
_HELD: dict[str, list] = {}  # real path of a locked folder -> [fd, depth]


class FolderLocked(OutputError):
    """The output folder is being written by another process (one line: who, and the fix)."""

    def __init__(self, message: str, filename=None):
        super().__init__(errno.EWOULDBLOCK, message, filename)


def _holder(path: Path) -> str:
    """Who holds the lock at ``path``, as written in the file by its holder."""
    try:
        info = json.loads(path.read_text())
        return (f"pid {info['pid']} on {info['host']}, `{info['command']}` since "
                f"{info['since']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _refused(folder: Path, lock: Path, label: str) -> FolderLocked:
    return FolderLocked(f"{label} {folder} is being written by {_holder(lock)}; wait for it to "
                        f"end or choose another folder.", str(lock))


def _try_flock(fd: int) -> bool:
    for _ in range(5):  # a peek (check_unlocked) holds it for microseconds: try again
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            time.sleep(0.02)
    return False


def check_unlocked(folder, label: str = "--out") -> None:
    """Raise :class:`FolderLocked` if another process holds ``folder``'s lock; write nothing."""
    folder = Path(folder)
    lock = folder / LOCK_NAME
    if fcntl is None or os.path.realpath(folder) in _HELD or not lock.is_file():
        return
    try:
        fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        if not _try_flock(fd):
            raise _refused(folder, lock, label)
    finally:
        os.close(fd)


def _acquire(folder: Path, label: str) -> int:
    lock = folder / LOCK_NAME
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:
            raise output_error(exc, lock, "lock") from None
        if not _try_flock(fd):
            os.close(fd)
            raise _refused(folder, lock, label)
        try:  # the file we locked may have been removed by its last holder meanwhile
            same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    if os.fstat(fd).st_size and not _holder(lock).startswith("pid "):
        os.close(fd)
        raise OutputError(errno.EEXIST, f"{label} {folder}: {lock.name} was not written by nsrl; "
                          f"remove it or choose another folder.", str(lock))
    info = {"pid": os.getpid(), "host": socket.gethostname(),
            "command": " ".join(["nsrl", *sys.argv[1:]])[:200] if sys.argv else "nsrl",
            "since": time.strftime("%Y-%m-%dT%H:%M:%S")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)
    return fd


@contextlib.contextmanager
def locked(folder, label: str = "--out"):
    """Hold the exclusive lock of ``folder`` (which must exist) for the ``with`` block.

    Raises:
        FolderLocked: another process holds it (the message names the holder).
    """
    folder = Path(folder)
    if fcntl is None:
        yield
        return
    key = os.path.realpath(folder)
    if key in _HELD:
        _HELD[key][1] += 1
    else:
        _HELD[key] = [_acquire(folder, label), 1]
    try:
        yield
    finally:
        _HELD[key][1] -= 1
        if _HELD[key][1] == 0:
            fd = _HELD.pop(key)[0]
            with contextlib.suppress(OSError):  # removed while held: no one else can race it
                (folder / LOCK_NAME).unlink()
            os.close(fd)
