"""Replacing an output directory as a whole, and recovering after a crash.

A run builds its output in a hidden sibling of the output directory
(``.<name>.unitize-staging-<stamp>``, on the same file system; the stamp is the
process's pid and a random token, :func:`~.lock.stamp`), carries the user's own
files of the previous output into it as hard links, and swaps the two directory
entries in one step (``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere two
renames, the previous output set aside as ``.<name>.unitize-old-<stamp>``).
Whatever kills the process, the output directory is the complete previous
output or the complete new one, and the staging is never inside it. The next
process that locks the directory finishes the work (:func:`recover`): it puts a
set-aside output back when a crash fell between the two renames, moves any file
of the user's left behind into the output directory, and removes the leftovers
— those of the dead run only, named by the stamp its lock file still holds
(:func:`~.lock.previous`). A folder that is named like a staging but carries no
such stamp was not made by a unitize run: it is reported, never merged, never removed.
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

from .lock import STAMP, stamp

#: the staging directory of versions that staged inside the output directory; removed on sight
LEGACY_STAGING = ".unitize-staging"

Ours = Callable[[str], bool]


def sibling(out: Path, what: str) -> Path:
    """This process's hidden folder beside ``out``: ``.<name>.unitize-<what>-<stamp>``."""
    return out.parent / f".{out.name}.unitize-{what}-{stamp()}"


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
    """Everything beside ``out`` named like a staging or a set-aside output of it
    (``.<name>.unitize-<what>-…``: :func:`sibling`), whoever made it."""
    prefix, lock = f".{out.name}.unitize-", lock_file(out).name
    try:
        names = os.listdir(out.parent)
    except OSError:
        return []
    return [out.parent / n for n in sorted(names) if n.startswith(prefix) and n != lock]


def made_by(path: Path, owner: str | None) -> bool:
    """Whether ``path`` (a hidden name ending in ``-<stamp>``) was made by the run stamped ``owner``: its
    name ends in that stamp and it is a real folder or file of this user (a link is nobody's)."""
    if owner is None or not STAMP.fullmatch(owner) or not path.name.endswith(f"-{owner}"):
        return False
    try:
        info = path.lstat()
    except OSError:
        return False
    return not path.is_symlink() and (not hasattr(os, "geteuid") or info.st_uid == os.geteuid())


def stamped(out: Path, owner: str | None) -> list[Path]:
    """What the run stamped ``owner`` left beside ``out`` and inside it (its stagings, a set-aside
    output; an export or report staging, temporary files in ``out`` or one folder down)."""
    if owner is None:
        return []
    found = [p for p in leftovers(out) if made_by(p, owner)]
    if out.is_dir() and not out.is_symlink():
        for folder in (out, *(out / n for n in sorted(os.listdir(out)) if not n.startswith("."))):
            if folder.is_dir() and not folder.is_symlink():
                with contextlib.suppress(OSError):
                    found += [folder / n for n in sorted(os.listdir(folder)) if n.startswith(".") and made_by(folder / n, owner)]
    return found


def remove(path: Path) -> None:
    """Remove a file, a link or a folder tree (a link is removed, never followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def recover(out: Path, ours: Callable[[Path], Ours], owner: str | None, carry: Callable[[Path, Path], None] | None = None) -> list[Path]:
    """Finish what a killed process left: a complete ``out`` again, the user's files in it, no leftovers.

    Call with the lock held exclusively. ``owner`` is the stamp the dead run left in the lock file
    (:func:`~.lock.previous`): only what it made is adopted or removed. ``ours(folder)`` says which
    top-level names of a left-over output folder belong to unitize (the rest are the user's, and
    are moved into ``out``; ``carry(folder, out)`` then moves the user's files inside its derived folders).
    Returns the folders beside ``out`` named like stagings that no dead run made: left alone, for
    the caller to report.
    """
    stale = [p for p in leftovers(out) if made_by(p, owner)]
    strangers = [p for p in leftovers(out) if p not in stale]
    if not os.path.lexists(out):  # killed between the two renames of a swap: the previous output goes back
        for old in stale:
            if ".unitize-old-" in old.name and old.is_dir():
                os.rename(old, out)
                stale.remove(old)
                break
    for folder in stale:
        if folder.is_dir() and (folder / "manifest.json").is_file() and out.is_dir():
            carry_over(folder, out, ours(folder), link=False)
            if carry is not None:
                carry(folder, out)
        remove(folder)
    for path in stamped(out, owner):  # a killed export's or report's staging, a temporary file
        remove(path)
    if out.is_dir():
        for name in os.listdir(out):
            if name.startswith(LEGACY_STAGING):
                shutil.rmtree(out / name, ignore_errors=True)
    return strangers


def top_names(paths: Iterable[str]) -> set[str]:
    """The top-level names of relative paths."""
    return {p.split("/", 1)[0] for p in paths}
