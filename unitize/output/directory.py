"""The output directory of a run: claimed, staged beside it, swapped in whole.

Before any work a run claims its output directory (:func:`claim_output`): it
checks that the directory is new, empty or unitize's own output, and locks it
against other unitize processes. The run writes into a hidden staging
directory beside the output directory and, at the end, swaps it in with one
directory-entry exchange (:mod:`.swap`), so a crash at any moment leaves the
complete previous output or the complete new one, never a mix, and no
half-written file inside the output directory.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import inspect
import io
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import OutputError
from .lock import acquire, holder, release
from .swap import LEGACY_STAGING, carry_over, fsync, fsync_tree, lock_file, pause, recover, sibling, swap, top_names

#: writer options for every Parquet file (columns named in them are added per table)
PARQUET_WRITE_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 1}

_DELTA = "DELTA_BINARY_PACKED"
#: outputs a run owns; anything else in an output directory is left alone
#: (``agreement``, ``exports``, ``report`` and ``adjudication`` are made later from the data by `unitize agree` / `export` /
#: `report` / `adjudicate`;
#: a new run removes them, since they would describe the previous data)
OWNED = ("units", "segments", "documents.parquet", "universe.parquet", "tokens.parquet", "report.jsonl", "agreement", "exports", "report",
         "adjudication", "manifest.json")


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """Writer options for a table of ``schema``.

    Dictionary encoding for strings and the small annotator columns, delta
    encoding for the ascending integer columns, statistics only where readers
    filter (group, doc_id, layer, unit).
    """
    dictionary, delta = [], {}
    for f in schema:
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type) or pa.types.is_uint8(f.type):
            dictionary.append(f.name)
        elif f.name in ("unit", "begin", "end", "unit_begin", "unit_end") and pa.types.is_int32(f.type):
            delta[f.name] = _DELTA
    stats = [n for n in ("group", "doc_id", "layer", "unit", "unit_type", "annotator") if n in schema.names]
    return {**PARQUET_WRITE_OPTIONS, "use_dictionary": dictionary, "column_encoding": delta, "write_statistics": stats}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ParquetStream:
    """A Parquet file written table by table (one row group per table or more)."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = path
        self.schema = schema
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(str(path), schema, **parquet_options(schema))

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._writer.write_table(table.cast(self.schema) if table.schema != self.schema else table)
            self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()


class OutputDir:
    """A run's output directory: claimed (checked and locked), staged beside it, swapped in at the end."""

    def __init__(self, path: Path, owned: tuple[str, ...] = OWNED, kind: str = "run"):
        self.owned = owned
        self._claim = claim_output(path, kind=kind, owned=owned)
        self.path = self._claim.path
        self._staging: Path | None = sibling(self.path, "staging")
        try:
            self.staging.mkdir()
        except OSError as exc:
            self._claim.release()
            raise OutputError(f"cannot create the staging directory {self.staging}: {exc.strerror or exc}") from None
        self.outputs: list[dict[str, Any]] = []

    @property
    def staging(self) -> Path:
        """The staging directory, where this run writes until :meth:`commit` swaps it in (or :meth:`abort` removes it)."""
        assert self._staging is not None, "the output was already committed or aborted"
        return self._staging

    def file(self, relative: str) -> Path:
        """Where to write ``relative`` during the run (inside the staging area)."""
        path = self.staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def record(self, relative: str, rows: int | None) -> None:
        path = self.staging / relative
        fsync(path)
        self.outputs.append(
            {"path": relative, "rows": rows, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
        )
        pause(f"written:{relative}")

    def write_table(self, relative: str, table: pa.Table) -> None:
        stream = ParquetStream(self.file(relative), table.schema)
        stream.write(table)
        stream.close()
        self.record(relative, table.num_rows)

    def write_jsonl(self, relative: str, rows: Iterable[dict[str, Any]]) -> None:
        count = 0
        with open(self.file(relative), "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False))
                fh.write("\n")
                count += 1
        self.record(relative, count)

    def write_json(self, relative: str, data: dict[str, Any]) -> None:
        with open(self.file(relative), "w", encoding="utf-8", newline="\n") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
        fsync(self.staging / relative)

    def commit(self) -> None:
        """Put this run's output in place of the previous one, in one step; release the directory.

        The user's own files in the previous output (anything not :attr:`owned`)
        are carried over as hard links first; the previous run's outputs all go,
        also those this run does not write (an item run leaves no stale
        ``segments/`` of an earlier span run). On any failure before the swap the
        previous output is untouched; once swapped, the leftovers are cleaned up
        here or, after a crash, by the next process that claims the directory.
        """
        out, new, ours = self.path, self.staging, owned_names(self.owned)
        try:
            if out.is_dir():
                shutil.copymode(out, new)
                carry_over(out, new, ours, link=True)
            fsync_tree(new)
            pause("commit:linked")
            try:
                old = swap(new, out)
            except OSError as exc:
                raise OutputError(
                    f"cannot put the new output in place at {out}: {exc.strerror or exc}; the previous output is unchanged"
                ) from None
        except BaseException:
            self.abort()
            raise
        self._staging = None
        pause("commit:swapped")
        try:
            fsync(out.parent)
            if old is not None:
                carry_over(old, out, ours, link=False)  # files the user added meanwhile, or that could not be linked
                pause("commit:carried")
                shutil.rmtree(old)
        except OSError:
            pass  # a hidden leftover: the next claim of the directory moves the user's files in it back and removes it
        self._claim.release()

    def abort(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
        self._claim.release()


class Claim:
    """An output directory checked and locked for this process (see :func:`claim_output`)."""

    def __init__(self, path: Path | str, kind: str | None, owned: tuple[str, ...]):
        self.path = out = Path(path).resolve()
        _check_place(out, writing=kind is not None)
        self._lock = lock_file(out)
        try:
            depth = acquire(self._lock)
        except OSError as exc:
            raise OutputError(
                f"cannot write in {out.parent} ({exc.strerror or exc}): unitize builds a new output beside "
                f"{out.name} and swaps it in, so that folder must be writable; choose another output directory"
            ) from None
        if depth is None:
            raise OutputError(
                f"another unitize run is writing to {out} (pid {holder(self._lock)}); wait for it or choose another --out"
            )
        self._held = True
        try:
            if depth == 1:
                try:
                    recover(out, lambda folder: _left_over_names(folder, owned))
                except OSError as exc:
                    raise OutputError(f"cannot recover {out} after an interrupted run: {exc}") from None
            if kind is not None:
                _check_target(out, kind)
        except BaseException:
            self.release()
            raise
        if depth == 1:
            pause("claimed")

    def release(self) -> None:
        if self._held:
            self._held = False
            release(self._lock)

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim_output(path: Path | str, *, kind: str | None = None, owned: tuple[str, ...] = OWNED) -> Claim:
    """Check and lock an output directory before any work; use as a context manager.

    Locks ``path`` against other unitize processes (a second one fails at once
    with :class:`OutputError`), finishes what a killed run left there, and with
    ``kind`` (``"run"`` for ``convert``, ``"conversion"`` for ``convert-format``)
    checks that an output of that kind may be written: the path is not a file,
    not inside the installed package, and an existing directory is empty or
    holds unitize's output of that kind. Re-entrant within a process.
    """
    return Claim(path, kind, owned)


T = TypeVar("T")


def locks_output(func: Callable[..., T]) -> Callable[..., T]:
    """Decorate ``func(out, ..., dest=None)``, which reads the output directory ``out`` and writes
    into ``dest`` (by default inside ``out``): while it writes inside ``out``, it holds its lock.

    ``unitize agree`` and ``export`` thus never write into a directory a ``convert``
    is replacing, nor two of them into one at once. Where ``out``'s folder is
    not writable no ``convert`` can replace it, and no lock is taken.
    """
    signature = inspect.signature(func)

    @functools.wraps(func)
    def locked(*args: Any, **kwargs: Any) -> T:
        given = signature.bind(*args, **kwargs).arguments
        out, dest = Path(given["out"]).resolve(), given.get("dest")
        inside = dest is None or Path(dest).resolve().is_relative_to(out)
        if not inside or not os.access(out.parent, os.W_OK | os.X_OK):
            return func(*args, **kwargs)
        with claim_output(out):
            return func(*args, **kwargs)

    return locked


def owned_names(names: Iterable[str]) -> Callable[[str], bool]:
    """Whether a top-level name of an output directory is unitize's (given what a run owns)."""
    names = set(names) | {"manifest.json"}
    return lambda name: name in names or name.startswith(LEGACY_STAGING)


def _left_over_names(folder: Path, owned: tuple[str, ...]) -> Callable[[str], bool]:
    """Unitize's names in a left-over output folder: what runs own and what its manifest lists."""
    try:
        listed = top_names(o["path"] for o in read_manifest(folder)["outputs"])
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
        manifest = read_manifest(out)
    except OutputError as exc:
        raise OutputError(f"output directory {out} is not unitize's: {exc}; {what_to_do}") from None
    found = manifest.get("kind", "run")
    if found != kind:
        raise OutputError(
            f"output directory {out} holds the output of `{_COMMANDS.get(found, found)}`, not of "
            f"`{_COMMANDS[kind]}`; choose another directory with --out (nothing was changed)"
        )


@contextlib.contextmanager
def staged_folder(final: Path, tag: str) -> Iterator[Path]:
    """A new empty folder beside ``final`` to write into; when the block ends without an error it
    replaces ``final`` in one step (the old folder is then removed), otherwise it is removed."""
    staging = final.parent / f".{final.name}.{tag}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
        previous = swap(staging, final)  # one step where the system can, as a run's output directory
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def refuse_foreign(folder: Path, ours: Callable[[Path], bool], what: str) -> None:
    """Refuse to replace ``folder`` when it exists and is neither empty nor ``what`` (``ours`` tells)."""
    if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not ours(folder))):
        raise OutputError(f"{folder} exists and is not {what}; choose a new or empty --dest")


def atomic_write_text(path: Path, text: str) -> None:
    """Write a text file under a temporary name, then rename it into place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, path)


def csv_text(rows: Iterable[Iterable[object]], delimiter: str = ",") -> str:
    """Rows as CSV text (``\\n`` line ends), for :func:`atomic_write_text` or a staged folder."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of an output directory."""
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
        data = json.loads(manifest.read_text(encoding="utf-8"))
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
