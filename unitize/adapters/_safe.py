"""Reading untrusted input: the bounds every reader shares (DESIGN.md §8).

Annotation files are data from elsewhere; a damaged or hostile one must become a
report row (or a clear usage error), never a crash or a runaway process:

- :func:`parse_offset`, :func:`offset_value`: integers from text or JSON, bounded
  before any conversion (Python refuses to convert more than 4,300 digits, NumPy's
  int64 ends at 2**63, and a number is only ever an offset into a text in memory);
- :func:`load_json`: ``json.loads`` whose every failure (syntax, over-long numbers,
  nesting, lone UTF-16 surrogates) is one :class:`InputError` with a message for the report;
- :func:`csv_source`: text for the csv module, its field-size limit raised to the text's length;
- :func:`read_parquet`, :func:`read_parquet_table`: a Parquet table as rows or as Arrow, its strings checked to be UTF-8;
- :func:`zip_members`: the members of a ZIP archive, bounded in size and compression
  ratio before they are inflated, one at a time; damaged members reported, the others read;
- :data:`MAX_LABEL_CHARS`: the longest label (category) a record may carry.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import Corpus
from ..model.findings import finding

if TYPE_CHECKING:
    import pyarrow as pa

#: the largest offset any reader accepts: far past any text in memory, far below int64's end
MAX_OFFSET = 2**62
_MAX_DIGITS = len(str(MAX_OFFSET))
#: a label longer than this many characters is no category but a damaged or hostile record: reported
#: (``label-too-long``), never a column value (flat labels: ``[input] max_label_chars``)
MAX_LABEL_CHARS = 1000
#: the help of the ``spreadsheet_safe`` option of the formats whose CSV tables unitize writes
SPREADSHEET_SAFE_HELP = ("the CSV cells were written spreadsheet-safe (a ' before a leading = + - @, TAB or CR, as unitize's "
                         "writers do): read them without it")
#: JSON nested deeper than this is refused (annotation exports nest fewer than 10 levels)
MAX_JSON_DEPTH = 100
#: default bound on what one ZIP archive may inflate to, in MB ([input] max_unzipped_mb), and the
#: bounds the option may be set within (a megabyte is 10**6 bytes)
MAX_UNZIPPED_MB = 512
MIN_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT = 0.001, 1_000_000
#: a member above :data:`_RATIO_FLOOR` bytes inflating more than this many times is refused (a ZIP bomb)
MAX_ZIP_RATIO = 200
_RATIO_FLOOR = 1 << 20
_CHUNK = 1 << 20
#: what zipfile raises for a damaged archive or member (bad headers, CRC, data; an unknown
#: version or compression method: NotImplementedError; encryption: RuntimeError)
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError, RuntimeError)
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class InputError(ValueError):
    """Input that cannot be parsed; the message says why, ``line`` where (1 when unknown)."""

    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.line = line


def parse_offset(text: str) -> int | None:
    """``text`` (ASCII digits, surrounding whitespace allowed) as an integer up to :data:`MAX_OFFSET`, else ``None``.

    The digits are counted before they are converted, so no length of input is too long.
    """
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()):
        return None
    digits = digits.lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        return None
    value = int(digits)
    return value if value <= MAX_OFFSET else None


def offset_value(value: Any) -> int | None:
    """A JSON or table value as an offset: an integer (not a bool) from 0 to :data:`MAX_OFFSET`, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_OFFSET else None


def load_json(text: str | bytes, *, max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """Parse JSON text; raise :class:`InputError` for anything that is not readable JSON.

    Beyond syntax errors: numbers of more than 4,300 digits, nesting deeper than
    ``max_depth`` (or than Python's recursion allows), and strings holding a lone
    UTF-16 surrogate (``"\\ud800"``: not text, it cannot be written as UTF-8).
    ``max_depth=None`` skips the nesting and surrogate checks (for large files
    whose values are only ever read as numbers).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise InputError("not readable JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        why = "a number has more than 4,300 digits" if "digits" in str(exc) else str(exc)
        raise InputError(f"not readable JSON: {why}") from None
    if max_depth is not None:
        check = isinstance(text, str) and _LONE_SURROGATE_ESCAPE.search(text) is not None
        problem = _nesting_problem(data, max_depth, check)
        if problem:
            raise InputError(f"not readable JSON: {problem}")
    return data


def _nesting_problem(data: Any, max_depth: int, surrogates: bool) -> str | None:
    """Why ``data`` is refused (nested deeper than ``max_depth``, a lone surrogate in a string), or ``None``."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
        elif surrogates and isinstance(node, str) and (lone := _SURROGATE.search(node)):
            return f"a string holds a lone UTF-16 surrogate (\\u{ord(lone.group()):04x}), which is not text"
    return None


def csv_source(text: str) -> io.StringIO:
    """``text`` as a file for ``csv.reader`` / ``csv.DictReader``, whose fields may be as long as the text.

    The csv module's field-size limit (128 KiB by default) is process-wide; it is
    raised, never lowered, to the length of the text about to be read.
    """
    if len(text) >= csv.field_size_limit():
        csv.field_size_limit(len(text) + 1)
    return io.StringIO(text, newline="")


def read_parquet(source: Path | io.BytesIO) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """The column names and rows of a Parquet file, the rows made dicts :data:`PARQUET_ROWS` at a time as they
    are read (the table stays Arrow); :class:`InputError` when it is damaged (:func:`read_parquet_table`)."""
    table = read_parquet_table(source)
    return table.column_names, (row for batch in table.to_batches(max_chunksize=PARQUET_ROWS) for row in batch.to_pylist())


def read_parquet_table(source: Path | io.BytesIO) -> pa.Table:
    """A Parquet file as an Arrow table; :class:`InputError` when it is damaged.

    Strings are checked to be valid UTF-8 before anything reads them (a damaged
    file can hold bytes that no string can).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(source)
        table.validate(full=True)
    except (pa.ArrowException, OSError, ValueError, EOFError, OverflowError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}") from None
    return table


def parquet_row_groups(source: Path | io.BytesIO, columns: list[str]) -> tuple[list[int], list[str], Callable[[list[str] | None], Iterator[pa.Table]]]:
    """A Parquet file's rows per row group, its column names and its row groups' ``columns`` one at a time (or some of
    them: the argument) — each checked as :func:`read_parquet_table` checks a whole file, and every one read and
    checked here first, so a damaged file is refused (:class:`InputError`) before any of its rows is used, and the
    whole is never held. Columns not among the names are not read (the caller reports them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    errors = (pa.ArrowException, OSError, ValueError, EOFError, OverflowError)
    try:
        file = pq.ParquetFile(source)
        names = file.schema_arrow.names
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"not a readable Parquet file: column(s) {', '.join(twice)} appear twice")
        wanted = [c for c in dict.fromkeys(columns) if c in names]
        for i in range(file.num_row_groups):
            file.read_row_group(i, columns=wanted).validate(full=True)
    except InputError:
        raise
    except errors as exc:
        raise InputError(f"not a readable Parquet file: {exc}") from None

    def groups(some: list[str] | None = None) -> Iterator[pa.Table]:
        read = wanted if some is None else [c for c in wanted if c in some]
        for i in range(file.num_row_groups):
            try:
                yield file.read_row_group(i, columns=read)
            except errors as exc:  # read and checked once already: the file changed under the run
                raise InputError(f"not a readable Parquet file (row group {i}): {exc}") from None

    return [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)], names, groups


#: rows of a Parquet input made Python dicts at once
PARQUET_ROWS = 1 << 16


def zip_members(
    archive: Path, shown: str, corpus: Corpus, suffixes: tuple[str, ...], max_unzipped_mb: float
) -> list[tuple[str, Callable[[], Iterator[bytes]]]]:
    """(name, chunks) of the members of ``archive`` ending in one of ``suffixes``, in name order.

    Sizes are checked before anything is inflated: a member that would take the
    archive's total past ``max_unzipped_mb``, or a large member with a
    compression ratio above :data:`MAX_ZIP_RATIO` (a ZIP bomb), is left out with a
    ``file-unreadable`` finding. An archive that cannot be opened at all is one
    such finding. ``chunks()`` inflates its member as it is read, a chunk at a
    time and never past its declared size, and raises :class:`InputError` for a
    damaged member (bad CRC, bad data): the reader reports it.
    """
    budget = int(max_unzipped_mb * 1_000_000)
    out: list[tuple[str, Callable[[], Iterator[bytes]]]] = []
    try:
        with zipfile.ZipFile(archive) as z:
            infos = sorted((i for i in z.infolist() if not i.is_dir() and i.filename.endswith(suffixes)), key=lambda i: i.filename)
            total = 0
            for info in infos:
                problem = _zip_bound(info, total, budget, max_unzipped_mb)
                if problem is None:
                    out.append((info.filename, functools.partial(_inflate, archive, info)))
                    total += info.file_size
                    continue
                corpus.findings.append(finding("file-unreadable", problem, "member left out; check the archive (or unzip it and read the directory)",
                                               file=f"{shown}!{info.filename}"))
    except _ZIP_ERRORS as exc:
        corpus.findings.append(finding("file-unreadable", f"not a readable ZIP archive: {exc}",
                                       "archive left out; export it again, or unzip it and read the directory", file=shown))
    return out


def inflated_size(raw: bytes, budget: int) -> int | None:
    """What the zlib stream ``raw`` (a spaCy DocBin) inflates to, measured a chunk at a time and never held;
    ``None`` past ``budget`` bytes. A stream zlib cannot read counts as its raw size (its reader reports it)."""
    inflater, size, rest = zlib.decompressobj(), 0, raw
    try:
        while rest:
            size += len(inflater.decompress(rest, _CHUNK))
            if size > budget:
                return None
            rest = inflater.unconsumed_tail
            if inflater.eof:
                break
    except zlib.error:
        return len(raw)
    return size


def _zip_bound(info: zipfile.ZipInfo, total: int, budget: int, max_mb: float) -> str | None:
    """Why a member may not be inflated (size or ratio past the bounds), or ``None``."""
    size = info.file_size
    if total + size > budget:
        return (
            f"inflates to {size / 1e6:,.1f} MB, which takes the archive past max_unzipped_mb = {max_mb:g} "
            f"({total / 1e6:,.1f} MB read before it); raise [input] max_unzipped_mb if the archive is genuine"
        )
    if size > _RATIO_FLOOR and size > MAX_ZIP_RATIO * max(info.compress_size, 1):
        return (
            f"compression ratio {size / max(info.compress_size, 1):,.0f}:1 ({info.compress_size:,} bytes inflate to {size:,}) "
            f"is past {MAX_ZIP_RATIO}:1, the mark of a ZIP bomb; unzip it yourself and read the directory if it is genuine"
        )
    return None


def _inflate(archive: Path, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's bytes, inflated a chunk at a time and never past its declared size (zipfile checks the CRC at the end)."""
    try:
        with zipfile.ZipFile(archive) as z, z.open(info) as fh:
            left = info.file_size
            while left > 0:
                chunk = fh.read(min(_CHUNK, left))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk
    except _ZIP_ERRORS as exc:
        raise InputError(f"damaged archive member: {exc}") from None
