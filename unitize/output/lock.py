"""The lock on an output directory: a hidden lock file beside it, held with :func:`fcntl.flock`.

One process at a time writes an output directory. The lock is re-entrant
within a process (``convert`` locks before reading its input, and the writing
step locks again), released when the process ends however it ends (the kernel
drops a dead process's flock), and its file is removed by the last holder.
Forked worker processes do not keep it: the lock is closed in every child.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no locking
    fcntl = None  # type: ignore[assignment]  # the module exists on POSIX only; None: locking is skipped

_guard = threading.Lock()
#: lock file -> [its descriptor, how many times this process holds it]
_held: dict[Path, list[int]] = {}


def acquire(path: Path) -> int | None:
    """Lock ``path`` (created if missing); the depth held, or ``None`` when another process holds it.

    Raises :class:`OSError` when the lock file cannot be created.
    """
    with _guard:
        if path in _held:
            _held[path][1] += 1
            return _held[path][1]
        if fcntl is None:
            _held[path] = [-1, 1]
            return 1
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            try:  # the previous holder may have removed the file between our open and flock
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        _held[path] = [fd, 1]
        return 1


def holder(path: Path) -> str:
    """The process id written in the lock file by its holder ('?' when unknown)."""
    try:
        return path.read_text(encoding="ascii").strip() or "?"
    except (OSError, UnicodeDecodeError):
        return "?"


def release(path: Path) -> None:
    """Undo one :func:`acquire`; the last one removes the lock file and unlocks."""
    with _guard:
        entry = _held.get(path)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1]:
            return
        del _held[path]
        if entry[0] >= 0:
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(entry[0])


def _forget_in_child() -> None:
    for fd, _ in _held.values():
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
