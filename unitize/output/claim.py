"""Claiming an output directory: checked, locked (exclusively to write it, shared to read it), recovered.

Before any work a command claims the output directory it writes or reads
(:func:`claim_output`): a writer checks that the directory is new, empty or
unitize's own output and locks it against every other unitize process; a
reader (``agree``, ``export`` or ``report`` writing elsewhere) shares the lock
with other readers, so no ``convert`` replaces the directory while it is read.
The first process in after a killed run finishes what that run left (:mod:`.swap`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import OutputError, OutputWarning
from . import lock
from .derived import carry_derived
from .swap import LEGACY_STAGING, lock_file, pause, recover, stamped, top_names

#: outputs a run owns; anything else in an output directory is left alone
#: (``agreement``, ``exports``, ``report``, ``plan`` and ``adjudication`` are made later from the data by `unitize agree` /
#: `export` / `report` / `plan` / `adjudicate`; a new run leaves unitize's files in them out, since they would describe the
#: previous data, and carries the user's files in them over: :mod:`.derived`)
OWNED = ("units", "labels", "long", "segments", "documents.parquet", "universe.parquet", "tokens.parquet", "report.jsonl", "agreement", "exports", "report",
         "plan", "adjudication", "estimate", "manifest.json")


class Claim:
    """An output directory checked and locked for this process (see :func:`claim_output`)."""

    def __init__(self, path: Path | str, kind: str | None, owned: tuple[str, ...], *, shared: bool = False, follow: bool = True):
        path = Path(path)
        self.path = out = path.resolve() if follow else path.parent.resolve() / path.name
        _check_place(out, writing=kind is not None)
        self._lock = lock_file(out)
        self._held = False
        try:  # exclusive first, a reader too: the first process in after a killed run recovers what it left
            depth, exclusive = lock.acquire(self._lock), True
            if depth is None and shared:
                depth, exclusive = lock.acquire(self._lock, shared=True), False
        except OSError as exc:
            raise OutputError(
                f"cannot write in {out.parent} ({exc.strerror or exc}): unitize builds a new output beside "
                f"{out.name} and swaps it in, so that folder must be writable; choose another output directory"
            ) from None
        if depth is None:
            raise OutputError(_busy(out, self._lock))
        self._held = True
        try:
            if depth == 1 and exclusive:
                self._recover(out, owned)
                if shared:
                    lock.record(self._lock, None)  # nothing of this process's is left to recover
                    if not lock.share(self._lock):
                        raise OutputError(_busy(out, self._lock))
                else:
                    lock.record(self._lock, lock.stamp())  # what this run makes from now on is named by it
            if kind is not None:
                _check_target(out, kind)
        except BaseException:
            self.release()
            raise
        self._exclusive = not shared
        if self._exclusive:
            _CLAIMED[out] = _CLAIMED.get(out, 0) + 1
        if depth == 1:
            pause("claimed")

    def _recover(self, out: Path, owned: tuple[str, ...]) -> None:
        try:
            strangers = recover(out, lambda folder: _left_over_names(folder, owned), lock.previous(self._lock), _carry_user_files)
        except OSError as exc:
            raise OutputError(f"cannot recover {out} after an interrupted run: {exc}") from None
        for folder in strangers:
            warnings.warn(
                f"{folder} is named like a staging folder of {out.name} but no unitize run made it "
                "(its name carries no stamp of an interrupted run); it was left alone, and nothing in it was used: remove it",
                OutputWarning,
                stacklevel=2,
            )

    def release(self) -> None:
        if self._held:
            self._held = False
            if getattr(self, "_exclusive", False):
                _CLAIMED[self.path] -= 1
                if not _CLAIMED[self.path]:
                    del _CLAIMED[self.path]
            keep = bool(stamped(self.path, lock.stamp()))  # a leftover of this run the next claim is to remove
            lock.release(self._lock, keep=keep)

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


#: output directories this process has claimed exclusively (resolved path -> claims held)
_CLAIMED: dict[Path, int] = {}


def covered(path: Path) -> bool:
    """Whether ``path`` (a link not followed) lies in an output directory this process has claimed exclusively."""
    place = Path(path).parent.resolve() / Path(path).name
    return any(place.is_relative_to(out) for out in _CLAIMED)


def _busy(out: Path, lock_path: Path) -> str:
    if lock.readers(lock_path):
        return (
            f"another unitize command is reading {out} (agree, export or report); wait for it to finish "
            "or choose another --out"
        )
    return f"another unitize run is writing to {out} (pid {lock.holder(lock_path)}); wait for it or choose another --out"


def _carry_user_files(src: Path, dst: Path) -> None:
    carry_derived(src, dst, link=False)


def claim_output(
    path: Path | str, *, kind: str | None = None, owned: tuple[str, ...] = OWNED, shared: bool = False, follow: bool = True
) -> Claim:
    """Check and lock an output directory before any work; use as a context manager.

    Locks ``path`` against other unitize processes (a second one fails at once
    with :class:`OutputError`), finishes what a killed run left there, and with
    ``kind`` (``"run"`` for ``convert``, ``"conversion"`` for ``convert-format``)
    checks that an output of that kind may be written: the path is not a file,
    not inside the installed package, and an existing directory is empty or
    holds unitize's output of that kind. Re-entrant within a process.
    ``shared``: a reader's lock, held by any number of readers at once and by no writer meanwhile.
    ``follow=False``: a ``path`` that is a symbolic link is claimed as the link (which a swap replaces), not its target.
    """
    return Claim(path, kind, owned, shared=shared, follow=follow)


T = TypeVar("T")


def locks_output(func: Callable[..., T]) -> Callable[..., T]:
    """Decorate ``func(out, ..., dest=None)``, which reads the output directory ``out`` and writes
    into ``dest`` (by default inside ``out``): while it runs it holds ``out``'s lock, exclusively
    when it writes inside ``out``, shared when it only reads it.

    A ``dest`` outside ``out`` is locked exclusively too (its missing parent folders made first).
    ``unitize agree``, ``export`` and ``report`` thus never read a directory a ``convert``
    is replacing (no result mixes two outputs), nor write two of them into one at once.
    Where ``out``'s folder is not writable no ``convert`` can replace it, and no lock is taken on it.
    """
    signature = inspect.signature(func)

    @functools.wraps(func)
    def locked(*args: Any, **kwargs: Any) -> T:
        given = signature.bind(*args, **kwargs).arguments
        out, dest = Path(given["out"]).resolve(), given.get("dest")
        inside = dest is None or Path(dest).resolve().is_relative_to(out)
        with contextlib.ExitStack() as held:
            if os.access(out.parent, os.W_OK | os.X_OK):
                held.enter_context(claim_output(out, shared=not inside))
            if dest is not None and not inside:
                make_parent(Path(dest), "--dest")
                held.enter_context(claim_output(Path(dest), follow=False))
            return func(*args, **kwargs)

    return locked


def make_parent(path: Path, flag: str) -> None:
    """Make the missing folders above ``path`` (a destination given as ``flag``), or say why they cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (path.parent, *path.parent.parents) if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file" if blocker else exc.strerror or str(exc)
        raise OutputError(f"cannot create {path.parent}, the folder of {flag} {path}: {why}; choose another {flag}") from None


def owned_names(names: Iterable[str]) -> Callable[[str], bool]:
    """Whether a top-level name of an output directory is unitize's (given what a run owns)."""
    names = set(names) | {"manifest.json"}
    return lambda name: name in names or name.startswith(LEGACY_STAGING)


def _left_over_names(folder: Path, owned: tuple[str, ...]) -> Callable[[str], bool]:
    """Unitize's names in a left-over output folder: what runs own and what its manifest lists."""
    try:
        listed = top_names(o["path"] for o in read_manifest(folder, inputs=False)["outputs"])
    except (OutputError, KeyError, TypeError):
        listed = set()
    return owned_names(set(owned) | listed)


_PACKAGE = Path(__file__).resolve().parents[1]
_COMMANDS = {"run": "unitize convert", "conversion": "unitize convert-format", "gold": "unitize adjudicate --to"}


def _check_place(out: Path, *, writing: bool) -> None:
    """Refuse an output directory that cannot be swapped, or that lies inside the installed package."""
    if out.parent == out:
        raise OutputError(f"{out} cannot be an output directory; choose a folder inside it")
    if out.is_relative_to(_PACKAGE):
        raise OutputError(
            f"the output directory {out} lies inside the installed unitize package ({_PACKAGE}); "
            "pass --out DIR to write it elsewhere"
        )
    if writing:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = next((p for p in (out.parent, *out.parent.parents) if p.exists() and not p.is_dir()), None)
            why = f"{blocker} is a file" if blocker else exc.strerror or str(exc)
            raise OutputError(
                f"cannot create {out.parent}, the folder of the output directory: {why}; choose another --out"
            ) from None


def _check_target(out: Path, kind: str) -> None:
    """Refuse to replace anything but nothing, an empty directory or unitize's output of ``kind``."""
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise OutputError(f"output path {out} exists and is not a directory; choose a directory with --out")
    if os.path.ismount(out):
        raise OutputError(
            f"output directory {out} is a mount point, and unitize replaces its output directory as a whole; "
            f"choose a directory inside it, e.g. --out {out / 'out'}"
        )
    if not [n for n in os.listdir(out) if not n.startswith(LEGACY_STAGING)]:
        return
    what_to_do = "unitize replaces only its own output directories: choose a new or empty directory with --out (nothing was changed)"
    if not (out / "manifest.json").is_file():
        raise OutputError(f"output directory {out} is not empty and holds no unitize manifest.json; {what_to_do}")
    try:
        manifest = read_manifest(out, inputs=False)
    except OutputError as exc:
        raise OutputError(f"output directory {out} is not unitize's: {exc}; {what_to_do}") from None
    found = manifest.get("kind", "run")
    if found != kind:
        raise OutputError(
            f"output directory {out} holds the output of `{_COMMANDS.get(found, found)}`, not of "
            f"`{_COMMANDS[kind]}`; choose another directory with --out (nothing was changed)"
        )


def read_manifest(path: Path, inputs: bool = True) -> dict[str, Any]:
    """The manifest of an output directory; with ``inputs`` False its list of input files (a line per file: 6 MB of
    the 7 MB manifest of the TDB preset) is neither parsed nor checked, the key holding an empty list."""
    manifest = Path(path) / "manifest.json"
    if not manifest.is_file():
        if not Path(path).exists():
            raise OutputError(f"{path} does not exist; give the output directory of `unitize convert` (its --out)")
        if (Path(path) / "study.toml").is_file():
            raise OutputError(
                f"{path} is a study folder, not an output directory; run `unitize convert {Path(path) / 'study.toml'}` "
                "and give its output directory (the study's [output] dir, or --out)"
            )
        raise OutputError(f"{path} is not a unitize output directory (no manifest.json)")
    try:
        text = manifest.read_text(encoding="utf-8")
        shorter = text if inputs else without_inputs(text)
        try:
            data = json.loads(shorter)
        except json.JSONDecodeError:
            if shorter is text:
                raise
            data = json.loads(text)  # another layout after all: the whole text, or what is wrong with it
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutputError(f"{manifest} cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise OutputError(f"{manifest} is not a unitize manifest (not a JSON object)")
    missing = [k for k in ("tool", "settings", "summary", "accounting", "outputs", "inputs") if k not in data]
    if missing:
        raise OutputError(f"{manifest} is not a unitize manifest (no {', '.join(missing)})")
    name = data["tool"].get("name") if isinstance(data["tool"], dict) else None
    if name != "unitize":
        raise OutputError(f"{manifest} is not a unitize manifest (tool {name!r})")
    return data


def without_inputs(text: str) -> str:
    """A manifest's text with its ``inputs`` list empty, found by the layout unitize writes it in: a top-level key
    follows a newline and two spaces, where no value can (a JSON string holds no raw newline, deeper keys and items
    are indented further); the text as it is in any other layout."""
    start = text.find('\n  "inputs": [')
    if start < 0:
        return text
    end = text.find('\n  "', start + 1)
    if end < 0:
        end = text.rfind("\n}")
    if end < start:
        return text
    comma = "," if text[start:end].rstrip().endswith(",") else ""
    return f'{text[:start]}\n  "inputs": []{comma}{text[end:]}'
