"""Refuse an allocation that cannot fit, before making it: estimated bytes against free memory.

numpy reports an impossible allocation only when it is attempted (after minutes of work, or
after pushing a shared machine into swap). The entry points that take sizes from a user
(:func:`nsrl.garnet`, the sweep runner, ``nsrl compare``) estimate their peak and call
:func:`check_memory` first, so the refusal comes at once and names the figures.
"""

from __future__ import annotations

import os


def available_memory() -> int | None:
    """Bytes the system can still give this process without swapping, or None if unknown.

    Linux: ``MemAvailable`` of /proc/meminfo (free memory plus reclaimable caches); elsewhere
    the free physical pages (os.sysconf), which undercounts reclaimable caches.
    """
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'`` (binary units, three significant digits)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" or abs(n) >= 100 else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_memory(nbytes: float, what: str, fix: str) -> None:
    """Raise ValueError if ``nbytes`` exceeds the memory available now.

    Args:
        nbytes: the estimated peak of the allocation.
        what: what needs it, e.g. ``"garnet(100000, 10, 2)"``; the message reads
            "<what> needs about <nbytes>".
        fix: how to make it fit, e.g. ``"use fewer states or actions"``.

    Raises:
        ValueError: the estimate exceeds :func:`available_memory` (never raised when the
            available memory is unknown).
    """
    free = available_memory()
    if free is not None and nbytes > free:
        raise ValueError(f"{what} needs about {format_bytes(nbytes)} of memory, more than the "
                         f"{format_bytes(free)} available on this machine; {fix}.")
