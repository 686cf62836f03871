"""A setting's part files, each opened once: where a group's rows are, and reading them.

A part (``units/setting=<name>/part-<k>.parquet``) holds its documents' rows of every group,
sorted by group; its row groups are sized for reading (:mod:`unitize.output.parts`: several
whole (group, layer) tables, or a slice of a large one). Which groups a row group holds is
read from its ``group`` statistics: a row group whose minimum is its maximum holds one group,
and its rows are read without decoding the ``group`` column at all (the column is made
constant). A row group holding several groups has each group's run of rows listed in the
file's key-value metadata (:data:`~unitize.output.parts.ROW_GROUPS_KEY`); a file written
before the listing has its ``group`` column read once, when the index is built. The row
group itself is decoded once and kept while a later group still needs it (groups are read
in sorted order, so a part keeps at most one such row group). Every ``ParquetFile`` is
opened once and its footer parsed once per setting, however many groups are read.

Parquet is decoded on the calling thread (:data:`THREADS`), here and in the directory's other
readers (:mod:`.segments`, :mod:`.universe`). Arrow's memory pool (mimalloc) keeps the pages a
thread has freed for that thread's later allocations: decoding threads would each keep what
the largest reads left behind. What the calling thread freed, the pool keeps too until
:func:`release` gives it back; a consumer calls it between groups (``unitize agree``), so that
its resident memory follows one group's reading, not every read before it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import DataError
from ..model.codes import sorted_codes
from ..output.parts import ROW_GROUPS_KEY, Run, runs

#: the ``use_threads`` of the group readers' Parquet reads (here, :mod:`.segments`, :mod:`.universe`): none (see above)
THREADS = False

#: where a group's rows are: per part holding some, (part index, its row groups holding them)
Index = dict[str, list[tuple[int, list[int]]]]


class PartFiles:
    """The part files of one setting, opened once, with the index of their groups' rows."""

    def __init__(self, parts: Sequence[Path]):
        self.paths = list(parts)
        self._files: dict[int, pq.ParquetFile] = {}
        self._index: Index | None = None
        #: a row group of several groups: each group's rows (start, stop), or None when a group's rows are not one run
        self._runs: dict[tuple[int, int], dict[str, tuple[int, int]] | None] = {}
        #: per part: the last row group decoded, (row group, columns, table), while a later group needs it
        self._kept: dict[int, tuple[int, tuple[str, ...], pa.Table]] = {}
        self._schema: pa.Schema | None = None

    def file(self, k: int) -> pq.ParquetFile:
        if k not in self._files:
            try:
                self._files[k] = pq.ParquetFile(self.paths[k])
            except (OSError, pa.ArrowException) as exc:
                raise DataError(f"{self.paths[k]} cannot be read: {exc}") from None
        return self._files[k]

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the first part (every part's)."""
        if self._schema is None:
            self._schema = self.file(0).schema_arrow  # built anew on every access of the property: kept
        return self._schema

    def index(self) -> Index:
        """group -> (part, the part's row groups holding its rows), from the statistics where they say it."""
        if self._index is None:
            index: Index = {}
            for k in range(len(self.paths)):
                pf = self.file(k)
                col = pf.schema_arrow.get_field_index("group") if k else self.schema.get_field_index("group")
                here: dict[str, list[int]] = {}
                listed = self._listed(k)
                for i in range(pf.num_row_groups):
                    stats = pf.metadata.row_group(i).column(col).statistics
                    if stats is not None and stats.has_min_max and stats.min == stats.max:
                        names = [stats.min.decode() if isinstance(stats.min, bytes) else stats.min]
                    elif listed is not None:
                        names = list(self._keep_runs(k, i, listed[i]))
                    else:
                        names = list(self._index_row_group(k, i))
                    for name in names:
                        here.setdefault(name, []).append(i)
                for name, ids in here.items():
                    index.setdefault(name, []).append((k, ids))
            self._index = index
        return self._index

    def _listed(self, k: int) -> list[list[Run]] | None:
        """Part ``k``'s row groups' runs of groups as its writer listed them (:data:`~unitize.output.parts.ROW_GROUPS_KEY`);
        None when the file lists none (written before they were listed) or a list that does not fit its row groups."""
        meta = self.file(k).metadata
        raw = (meta.metadata or {}).get(ROW_GROUPS_KEY.encode())
        if raw is None:
            return None
        try:
            listed = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(listed, list) or len(listed) != meta.num_row_groups:
            return None
        for i, found in enumerate(listed):
            if not isinstance(found, list) or not all(isinstance(r, list) and len(r) == 3 for r in found) \
                    or sum(int(r[2]) - int(r[1]) for r in found) != meta.row_group(i).num_rows:
                return None
        return listed

    def _index_row_group(self, k: int, i: int) -> dict[str, tuple[int, int]]:
        """The groups of a row group holding several, each with its rows (start, stop), in row order (its ``group`` column read)."""
        return self._keep_runs(k, i, runs(self.file(k).read_row_group(i, columns=["group"], use_threads=THREADS).column(0)))

    def _keep_runs(self, k: int, i: int, found: list[Run]) -> dict[str, tuple[int, int]]:
        """Row group ``i`` of part ``k`` holds these runs of groups: each group's rows (start, stop) remembered,
        or, when a group has two runs, that the rows are found by its ``group`` column."""
        kept = {str(name): (int(a), int(b)) for name, a, b in found}
        self._runs[(k, i)] = kept if len(kept) == len(found) else None
        return kept if self._runs[(k, i)] is not None else dict.fromkeys(kept, (0, 0))

    def rows(self, group: str, parts: tuple[int, int] | None = None) -> int:
        """How many rows a group has (in the parts ``[k0, k1)``; exact: a row group of several groups counts the group's run)."""
        total = 0
        for k, ids in self.index().get(group, []):
            if parts is not None and not parts[0] <= k < parts[1]:
                continue
            meta = self.file(k).metadata
            for i in ids:
                runs = self._runs.get((k, i))
                if (k, i) not in self._runs:
                    total += meta.row_group(i).num_rows
                elif runs is not None:
                    start, stop = runs[group]
                    total += stop - start
                else:  # rows not in one run: an upper bound
                    total += meta.row_group(i).num_rows
        return total

    def row_group_rows(self, k: int, i: int) -> int:
        return int(self.file(k).metadata.row_group(i).num_rows)

    def read(self, k: int, ids: Sequence[int], group: str, columns: Sequence[str] | None) -> pa.Table:
        """A group's rows in the row groups ``ids`` of part ``k`` (all columns, or ``columns``)."""
        self.index()
        wanted = list(columns) if columns is not None else self.schema.names
        stored = tuple(c for c in wanted if c != "group")
        pieces: list[pa.Table] = []
        whole: list[int] = []
        for i in ids:
            if (k, i) not in self._runs:  # one group's row group: read with its neighbours
                whole.append(i)
                continue
            if whole:
                pieces.append(self.file(k).read_row_groups(whole, columns=list(stored), use_threads=THREADS))
                whole = []
            pieces.append(self._from_shared(k, i, group, stored))
        if whole:
            pieces.append(self.file(k).read_row_groups(whole, columns=list(stored), use_threads=THREADS))
        table = pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
        if "group" in wanted:
            field = self.schema.field("group")
            column = pa.DictionaryArray.from_arrays(pa.array(np.zeros(table.num_rows, np.int32)), pa.array([group], pa.string()))
            table = table.add_column(wanted.index("group"), field.name, column if column.type == field.type else column.cast(field.type))
        return table

    def _from_shared(self, k: int, i: int, group: str, stored: tuple[str, ...]) -> pa.Table:
        """A group's rows of a row group holding several: decoded once, kept while a later group needs it."""
        kept = self._kept.get(k)
        reuse = kept is not None and kept[0] == i and kept[1] == stored
        table = kept[2] if kept is not None and reuse else self.file(k).read_row_group(i, columns=list(stored), use_threads=THREADS)
        found = self._runs[(k, i)]
        if found is None:
            names, codes = sorted_codes(self.file(k).read_row_group(i, columns=["group"], use_threads=THREADS).column(0))
            rows = np.flatnonzero(codes == names.index(group)) if group in names else np.zeros(0, np.int64)
            out = table.take(pa.array(rows))
            later = True
        else:
            start, stop = found.get(group, (0, 0))
            out = table.slice(start, stop - start)
            later = any(a > start for a, _ in found.values())
        if later:
            self._kept[k] = (i, stored, table)
        elif kept is not None and kept[0] == i:
            del self._kept[k]
        return out

    def forget(self) -> None:
        """Drop the row groups kept for later groups (the files stay open)."""
        self._kept.clear()


def release() -> None:
    """Give back to the system the memory the Arrow pool keeps after it was freed (see the module docstring)."""
    pa.default_memory_pool().release_unused()
