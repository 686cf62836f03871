"""The output directory of a run: claimed, staged beside it, swapped in whole.

Before any work a run claims its output directory (:mod:`.claim`): it
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
import hashlib
import io
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..cells import rows as neutral_rows
from ..errors import OutputError
from ..names import PathEscape, inside
from . import lock
from .claim import OWNED, claim_output, covered, make_parent, owned_names
from .derived import carry_derived, carry_file, carry_unlisted, keep_edited, listed_outputs, user_files
from .swap import carry_over, fsync, fsync_tree, pause, remove, sibling, swap

#: writer options for every Parquet file (columns named in them are added per table)
PARQUET_WRITE_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 1}

_DELTA = "DELTA_BINARY_PACKED"


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


#: rows of a row group: a table is written in row groups of this many rows, the last one smaller (pyarrow's default)
ROW_GROUP_ROWS = 1 << 20


def rest_of(table: pa.Table, start: int) -> pa.Table:
    """The rows of ``table`` from ``start`` on, held for the next row group: a few rows are copied, since a slice
    would keep every buffer of ``table`` alive (a writing thread would hold two batches of a million rows)."""
    rest = table.slice(start)
    return rest.take(pa.array(range(rest.num_rows), pa.int64())) if 0 < 8 * rest.num_rows <= table.num_rows else rest


class ParquetStream:
    """A Parquet file written table by table (one row group per :data:`ROW_GROUP_ROWS` rows of a table, or fewer).

    A table may also come in pieces (:meth:`add` each, then :meth:`end`): its rows are held until they fill a row
    group, so the file has the row groups, and the bytes, of the whole table written at once, and memory holds
    a row group, not the table."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = path
        self.schema = schema
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(str(path), schema, **parquet_options(schema))
        self._held: list[pa.Table] = []
        self._held_rows = 0

    def write(self, table: pa.Table, written: Callable[[], None] | None = None) -> None:
        """A whole table (after the end of a table given in pieces); ``written`` is called after each row group."""
        self.end()
        if table.num_rows:
            table = table.cast(self.schema) if table.schema != self.schema else table
            for start in range(0, table.num_rows, ROW_GROUP_ROWS):
                self._writer.write_table(_row_group(table.slice(start, ROW_GROUP_ROWS)), ROW_GROUP_ROWS)
                if written is not None:
                    written()
            self.rows += table.num_rows

    def add(self, piece: pa.Table) -> None:
        """A piece of a table: its rows written once they fill a row group (:meth:`end` writes the rest)."""
        if not piece.num_rows:
            return
        self._held.append(piece.cast(self.schema) if piece.schema != self.schema else piece)
        self._held_rows += piece.num_rows
        while self._held_rows >= ROW_GROUP_ROWS:
            held = pa.concat_tables(self._held)
            self._writer.write_table(_row_group(held.slice(0, ROW_GROUP_ROWS)), ROW_GROUP_ROWS)
            self.rows += ROW_GROUP_ROWS
            rest = rest_of(held, ROW_GROUP_ROWS)
            self._held, self._held_rows = ([rest] if rest.num_rows else []), rest.num_rows

    def end(self) -> None:
        """The end of a table given in pieces: the rows held written, its last row group."""
        if self._held:
            self._writer.write_table(_row_group(pa.concat_tables(self._held)), ROW_GROUP_ROWS)
            self.rows += self._held_rows
        self._held, self._held_rows = [], 0

    def add_metadata(self, metadata: dict[str, str]) -> None:
        """Key-value metadata of the file, beside the schema's (written with the footer)."""
        self._writer.add_key_value_metadata(metadata)

    def close(self) -> None:
        try:
            self.end()
        finally:
            self._writer.close()


def _row_group(table: pa.Table) -> pa.Table:
    """``table`` (one row group's rows) as written: each list column in one chunk (the pages pyarrow writes of a list
    column follow its chunks, those of other columns do not), and each dictionary column whose chunks have different
    dictionaries on one dictionary (:func:`_one_dictionary`); so the file's bytes are those of the rows however they
    were cut."""
    for i, column in enumerate(table.columns):
        if pa.types.is_dictionary(column.type) and column.num_chunks > 1 and _differ(column):
            table = table.set_column(i, table.field(i), _one_dictionary(column))
        elif table.field(i).name == "doc_id" and pa.types.is_dictionary(column.type) and column.num_chunks \
                and len(column.chunk(0).dictionary) > COMPACT_VALUES:
            table = table.set_column(i, table.field(i), _compact(column))
        elif column.num_chunks > 1 and (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
            table = table.set_column(i, table.field(i), column.combine_chunks())
    return table


#: a row group's ``doc_id`` column whose one dictionary holds more values than this keeps only those its rows use
COMPACT_VALUES = 1 << 16


def _compact(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """A row group's document ids on the run's dictionary (two million, say) on the ids its rows use, in its order,
    when they are fewer than half of it. Written whole, it is stored in every row group, and a reader decodes and
    hashes all of it for each (324 MiB of Arrow memory for the ids of two row groups of a crowd study's segments)."""
    whole = column.combine_chunks() if column.num_chunks > 1 else column.chunk(0)
    used = _used(whole)
    return _on(whole, used) if 2 * used.size < len(whole.dictionary) else column


def _differ(column: pa.ChunkedArray) -> bool:
    return any(not c.dictionary.equals(column.chunk(0).dictionary) for c in column.chunks[1:])


def _one_dictionary(column: pa.ChunkedArray) -> pa.Array:
    """A dictionary column whose chunks have different dictionaries (one per group, say) as one array whose dictionary
    is the values its rows use, sorted. Written as it came, the Parquet writer would fall back to plain pages for the
    rest of the column chunk at the first chunk with another dictionary, and every reader would then decode the
    column value by value, hashing each into a dictionary again. (Chunks of one dictionary are written as they are,
    in every row group, unless it is large and mostly unused: :func:`_compact`.)"""
    whole = column.unify_dictionaries().combine_chunks()
    if whole.dictionary.null_count:  # not a dictionary of names: as it is
        return whole
    used = _used(whole)
    names = whole.dictionary.take(pa.array(used)).to_pylist()
    return _on(whole, used[sorted(range(len(names)), key=names.__getitem__)])


def _used(whole: pa.DictionaryArray) -> np.ndarray:
    """The dictionary values some row uses (their indices, ascending)."""
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    codes = np.asarray(pc.fill_null(whole.indices, -1), dtype=np.int64)
    return np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(whole.dictionary)))


def _on(whole: pa.DictionaryArray, kept: np.ndarray) -> pa.DictionaryArray:
    """``whole`` on the dictionary values ``kept`` (indices into its dictionary, in their new order; every used one)."""
    import pyarrow.compute as pc

    codes = np.asarray(pc.fill_null(whole.indices, -1), dtype=np.int64)
    lut = np.zeros(len(whole.dictionary), np.int32)
    lut[kept] = np.arange(kept.size, dtype=np.int32)
    indices = pa.array(lut[np.maximum(codes, 0)], pa.int32(), mask=(codes < 0) if whole.null_count else None)
    return pa.DictionaryArray.from_arrays(indices.cast(whole.indices.type), whole.dictionary.take(pa.array(kept)))


class OutputDir:
    """A run's output directory: claimed (checked and locked), staged beside it, swapped in at the end."""

    def __init__(self, path: Path, owned: tuple[str, ...] = OWNED, kind: str = "run", per_file: tuple[str, ...] = (),
                 editable: tuple[str, ...] = ()):
        self.owned = owned
        #: owned folders whose files are this command's only when the previous manifest lists them
        self.per_file = per_file
        #: files written for the user to edit: an edited one is kept in place of the new one
        self.editable = editable
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
        """Where to write ``relative`` during the run (inside the staging area); a path that would leave it (a
        name that did not go through :mod:`unitize.names`) is refused."""
        try:
            path = inside(self.staging, relative)
        except PathEscape as exc:
            raise OutputError(f"refused to write {exc}: a file name made from input must go through unitize.names") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def record(self, relative: str, rows: int | None) -> None:
        path = self.staging / relative
        fsync(path)
        self.outputs.append(
            {"path": relative, "rows": rows, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
        )
        pause(f"written:{relative}")

    def write_table(self, relative: str, table: pa.Table | pa.RecordBatchReader, written: Callable[[], None] | None = None) -> None:
        """A table, whole or as a reader of its batches (written as they come, in the row groups of the whole table);
        ``written``: called after each row group of a whole table, after each batch of a reader."""
        stream = ParquetStream(self.file(relative), table.schema)
        if isinstance(table, pa.RecordBatchReader):
            for batch in table:
                stream.add(pa.Table.from_batches([batch]))
                del batch
                if written is not None:
                    written()
        else:
            stream.write(table, written)
        stream.close()
        self.record(relative, stream.rows)

    def write_jsonl(self, relative: str, rows: Iterable[dict[str, Any]]) -> None:
        self.write_lines(relative, (json.dumps(row, ensure_ascii=False, sort_keys=False) for row in rows))

    def write_lines(self, relative: str, lines: Iterable[str]) -> None:
        """A JSON lines file from lines already encoded (each without its line break)."""
        count = 0
        with open(self.file(relative), "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                fh.write(line)
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

        The user's own files in the previous output (anything not :attr:`owned`,
        and the files inside ``agreement/``, ``exports/`` and ``report/`` that unitize
        did not write: :mod:`.derived`) are carried over as hard links first; the previous run's outputs all go,
        also those this run does not write (an item run leaves no stale
        ``segments/`` of an earlier span run). On any failure before the swap the
        previous output is untouched; once swapped, the leftovers are cleaned up
        here or, after a crash, by the next process that claims the directory.
        """
        out, new, ours = self.path, self.staging, owned_names(self.owned)
        listed: dict[str, str | None] = {}  # the previous output's files (read once, when some are kept per file)
        try:
            if out.is_dir():
                shutil.copymode(out, new)
                carry_over(out, new, ours, link=True)
                carry_derived(out, new, link=True)  # the user's files inside agreement/, exports/, report/
                if self.per_file or self.editable:
                    listed = listed_outputs(out) or {}
                carry_unlisted(out, new, self.per_file, listed, link=True)  # and those inside per-file folders
                keep_edited(out, new, self.editable, listed)
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
                carry_derived(old, out, link=False)
                carry_unlisted(old, out, self.per_file, listed, link=False)
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

@contextlib.contextmanager
def staged_folder(final: Path, tag: str) -> Iterator[Path]:
    """A new empty folder beside ``final`` to write into; when the block ends without an error it
    replaces ``final`` in one step (the old folder is then removed, the user's own files in it
    carried over first: :func:`~.derived.user_files`), otherwise it is removed.

    Its name ends in this process's stamp, and it is made with a ``mkdir`` that fails when the
    name exists. Inside an output directory this process has claimed, the claim covers it (and
    the next claim removes it if this process is killed); anywhere else ``final`` is claimed itself.
    """
    final = Path(final)
    make_parent(final, "--dest")
    with contextlib.nullcontext() if covered(final) else claim_output(final, follow=False):
        staging = sibling(final, tag)
        staging.mkdir()
        try:
            yield staging
            if final.is_dir() and not final.is_symlink():
                for relative in user_files(final):
                    carry_file(final / relative, staging / relative, link=True)
            pause("staged")
            previous = swap(staging, final)  # one step where the system can, as a run's output directory
            if previous is not None:
                remove(previous)  # the previous folder, or a link that stood in its place (its target is left alone)
        finally:
            remove(staging)


def refuse_foreign(folder: Path, ours: Callable[[Path], bool], what: str) -> None:
    """Refuse to replace ``folder`` when it exists and is neither empty nor ``what`` (``ours`` tells)."""
    if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not ours(folder))):
        raise OutputError(f"{folder} exists and is not {what}; choose a new or empty --dest")


def atomic_write_text(path: Path, text: str) -> None:
    """Write a text file under a temporary name, then rename it into place (:func:`text_stream`, in one piece)."""
    with text_stream(path) as fh:
        fh.write(text)


@contextlib.contextmanager
def text_stream(path: Path) -> Iterator[TextIO]:
    """A text file to write a piece at a time, under a temporary name (:func:`temporary`) renamed into place when
    the block ends without an error, removed otherwise: memory holds a piece, never the file."""
    path = Path(path)
    tmp = temporary(path)
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def csv_text(rows: Iterable[Sequence[object]], delimiter: str = ",") -> str:
    """Rows as CSV text (``\\n`` line ends), for :func:`atomic_write_text` or a staged folder; a cell a spreadsheet
    would run is neutralised (:mod:`unitize.cells`)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerows(neutral_rows(rows))
    return buf.getvalue()


def temporary(path: Path) -> Path:
    """Where to write ``path`` before renaming it into place: a hidden name ending in this process's stamp."""
    return path.with_name(f".{path.name}.tmp-{lock.stamp()}")

