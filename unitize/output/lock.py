"""The lock on an output directory: a hidden lock file beside it, held with :func:`fcntl.flock`.

A process that writes an output directory holds its lock *exclusively*
(``convert``; ``agree``, ``export`` and ``report`` writing inside it); one that
only reads it (writing elsewhere, ``--dest``) holds it *shared*, so no writer
replaces the directory under a reader and no reader sees half of two outputs.
The lock is re-entrant within a process, released when the process ends however
it ends (the kernel drops a dead process's flock), and its file is removed by the
last holder. Forked worker processes do not keep it: the lock is closed in every child.

The lock file is never a way to write anywhere else: it is opened with
``O_NOFOLLOW`` and refused unless it is a regular file with one link, owned by
this user (a planted symbolic or hard link would otherwise have a file elsewhere
truncated), and it is never truncated before it is locked and checked.

Its content is the exclusive holder's *stamp*, ``<pid>-<random token>``
(:func:`stamp`): every hidden name the process makes (stagings, a set-aside
output, temporary files) ends in it. A process killed while holding the lock
leaves its stamp in the file, so the next holder knows exactly which leftovers
are that run's (:func:`previous`) and a folder named like a staging but with any
other stamp is not unitize's to adopt or remove.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutputError

try:
    import fcntl
except ImportError:  # not POSIX: no locking
    fcntl = None  # type: ignore[assignment]  # the module exists on POSIX only; None: locking is skipped

_guard = threading.Lock()
#: a stamp as written in a lock file: the holder's pid and 16 hex digits of a random token
STAMP = re.compile(r"[0-9]+-[0-9a-f]{16}")
_token: list[str] = []


@dataclass
class _Held:
    fd: int
    depth: int
    shared: bool
    previous: str | None  # the stamp found in the file when this process locked it exclusively


#: lock file -> what this process holds of it
_held: dict[Path, _Held] = {}


def stamp() -> str:
    """This process's stamp: its pid and a random token drawn once per process."""
    if not _token:
        _token.append(secrets.token_hex(8))
    return f"{os.getpid()}-{_token[0]}"


def acquire(path: Path, *, shared: bool = False) -> int | None:
    """Lock ``path`` (created if missing), exclusively or ``shared``; the depth held, or ``None`` when
    another process holds it in a way that excludes this one. Never waits.

    Raises :class:`OutputError` when ``path`` is not a lock file unitize may use, :class:`OSError`
    when it cannot be created. A process that holds the lock already only counts one more holding.
    """
    with _guard:
        if path in _held:
            _held[path].depth += 1
            return _held[path].depth
        if fcntl is None:
            _held[path] = _Held(-1, 1, shared, None)
            return 1
        while True:
            fd = _open(path)
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            if _same(fd, path):  # the previous holder may have removed the file between our open and flock
                break
            os.close(fd)
        _held[path] = _Held(fd, 1, shared, None if shared else _read_stamp(fd))
        return 1


def _open(path: Path) -> int:
    """Open (or create) the lock file without following a link; refuse anything but a plain file of ours."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EMLINK):
            raise OutputError(_foreign(path, "a symbolic link" if exc.errno in (errno.ELOOP, errno.EMLINK) else "not a file")) from None
        raise
    info = os.fstat(fd)
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = "not a regular file"
    elif info.st_nlink != 1:
        why = f"a file with {info.st_nlink} hard links"
    elif hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        why = f"a file owned by user {info.st_uid}, not by you"
    if why is not None:
        os.close(fd)
        raise OutputError(_foreign(path, why))
    return fd


def _foreign(path: Path, why: str) -> str:
    return (
        f"{path} is not a lock file unitize made ({why}); unitize refuses to use it, and changed nothing. "
        f"Remove {path} (unitize makes its lock file itself) and run again"
    )


def _same(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


def _read_stamp(fd: int) -> str | None:
    text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    return text if STAMP.fullmatch(text) else None


def previous(path: Path) -> str | None:
    """The stamp a dead exclusive holder left in ``path`` (read when this process locked it exclusively)."""
    held = _held.get(path)
    return held.previous if held is not None else None


def record(path: Path, value: str | None) -> None:
    """Write ``value`` (this process's stamp; ``None``: nothing) into ``path``, held exclusively."""
    held = _held[path]
    if held.fd >= 0 and not held.shared:
        os.ftruncate(held.fd, 0)
        if value:
            os.pwrite(held.fd, value.encode("ascii"), 0)


def share(path: Path) -> bool:
    """Turn this process's exclusive hold of ``path`` into a shared one; ``False`` when another process took it meanwhile."""
    held = _held[path]
    if held.fd >= 0 and not held.shared:
        try:
            fcntl.flock(held.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    held.shared = True
    return True


def readers(path: Path) -> bool:
    """Whether the lock on ``path`` is held shared (by readers) rather than exclusively (by a writer)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def holder(path: Path) -> str:
    """The process id in the lock file of its exclusive holder ('?' when unknown)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "?"
    try:
        text = _read_stamp(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)
    return text.split("-")[0] if text else "?"


def release(path: Path, *, keep: bool = False) -> None:
    """Undo one :func:`acquire`; the last one unlocks and removes the lock file, unless ``keep`` (the file
    then keeps this process's stamp, naming leftovers the next holder is to clean up) or other processes share it."""
    with _guard:
        held = _held.get(path)
        if held is None:
            return
        held.depth -= 1
        if held.depth:
            return
        del _held[path]
        if held.fd < 0:
            return
        remove = not keep
        if remove and held.shared:  # the file goes only when no other reader holds it
            try:
                fcntl.flock(held.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                remove = False
        if remove and _same(held.fd, path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.close(held.fd)


def _forget_in_child() -> None:
    for held in _held.values():
        if held.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(held.fd)
    _held.clear()
    _token.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
