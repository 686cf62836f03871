"""Replacing an output directory as a whole, and recovering after a crash.

A run builds its output in a hidden sibling of the output directory
(``.<name>.unitize-staging-<pid>``, on the same file system), carries the
user's own files of the previous output into it as hard links, and swaps the
two directory entries in one step (``renameat2(RENAME_EXCHANGE)`` on Linux;
elsewhere two renames, the previous output set aside as
``.<name>.unitize-old-<pid>``). Whatever kills the process, the output
directory is the complete previous output or the complete new one, and the
staging is never inside it. The next process that locks the directory finishes
the work (:func:`recover`): it puts a set-aside output back when a crash fell
between the two renames, moves any file of the user's left behind into the
output directory, and removes the leftovers.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

#: the staging directory of versions that staged inside the output directory; removed on sight
LEGACY_STAGING = ".unitize-staging"

Ours = Callable[[str], bool]


def sibling(out: Path, what: str) -> Path:
    """This process's hidden folder beside ``out``: ``.<name>.unitize-<what>-<pid>``."""
    return out.parent / f".{out.name}.unitize-{what}-{os.getpid()}"


def lock_file(out: Path) -> Path:
    """The lock file of ``out``, beside it: ``.<name>.unitize-lock``."""
    return out.parent / f".{out.name}.unitize-lock"


def pause(point: str) -> None:
    """Test hook: sleep at ``point`` when ``UNITIZE_TEST_PAUSE_AT`` names it (for kill tests)."""
    if os.environ.get("UNITIZE_TEST_PAUSE_AT") == point:
        print(f"unitize: paused at {point} (pid {os.getpid()})", file=sys.stderr, flush=True)
        time.sleep(float(os.environ.get("UNITIZE_TEST_PAUSE_SECONDS", "60")))


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """Flush a directory tree's directory entries (its files were flushed when written)."""
    for folder, _, _ in os.walk(root):
        fsync(Path(folder))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directory entries atomically (Linux); ``False`` when the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap(new: Path, out: Path) -> Path | None:
    """Put the directory ``new`` at ``out``; where the previous ``out`` now is (``None``: there was none)."""
    if not os.path.lexists(out):
        os.rename(new, out)
        return None
    if _exchange(new, out):
        return new
    old = sibling(out, "old")
    os.rename(out, old)
    pause("commit:set-aside")
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    return old


def carry_over(src: Path, dst: Path, ours: Ours, *, link: bool) -> None:
    """Give ``dst`` every entry of ``src`` that is not ``ours`` (top level) and that ``dst`` lacks.

    ``link``: hard links (a copy where linking fails, nothing where both fail), so
    ``src`` stays whole; otherwise the entries are moved.
    """
    for entry in sorted(os.listdir(src)):
        if not ours(entry):
            _carry(src / entry, dst / entry, link)


def _carry(src: Path, dst: Path, link: bool) -> None:
    real_dir = src.is_dir() and not src.is_symlink()
    if os.path.lexists(dst):
        if real_dir and dst.is_dir() and not dst.is_symlink():
            for entry in sorted(os.listdir(src)):
                _carry(src / entry, dst / entry, link)
        return
    if not link:
        os.rename(src, dst)
    elif real_dir:
        dst.mkdir()
        shutil.copystat(src, dst)
        for entry in sorted(os.listdir(src)):
            _carry(src / entry, dst / entry, link)
    else:
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError:
            with contextlib.suppress(OSError):  # else moved after the swap instead
                shutil.copy2(src, dst, follow_symlinks=False)


def leftovers(out: Path) -> list[Path]:
    """Stagings and set-aside outputs of ``out`` that an earlier process left behind."""
    prefixes = (f".{out.name}.unitize-staging-", f".{out.name}.unitize-old-")
    try:
        names = os.listdir(out.parent)
    except OSError:
        return []
    return [out.parent / n for n in sorted(names) if n.startswith(prefixes)]


def recover(out: Path, ours: Callable[[Path], Ours]) -> None:
    """Finish what a killed process left: a complete ``out`` again, the user's files in it, no leftovers.

    Call with the lock held. ``ours(folder)`` says which top-level names of a
    left-over output folder belong to unitize (the rest are the user's).
    """
    stale = leftovers(out)
    if not os.path.lexists(out):  # killed between the two renames of a swap: the previous output goes back
        for old in stale:
            if ".unitize-old-" in old.name:
                os.rename(old, out)
                stale.remove(old)
                break
    for folder in stale:
        if (folder / "manifest.json").is_file() and out.is_dir():
            carry_over(folder, out, ours(folder), link=False)
        shutil.rmtree(folder, ignore_errors=True)
    if out.is_dir():
        for name in os.listdir(out):
            if name.startswith(LEGACY_STAGING):
                shutil.rmtree(out / name, ignore_errors=True)


def top_names(paths: Iterable[str]) -> set[str]:
    """The top-level names of relative paths."""
    return {p.split("/", 1)[0] for p in paths}
