"""A large group's rows read in batches of whole keys: memory bounded by a batch, not the group.

Crowd data put every document in one group (a span table without groups, item labels), so
reading a group whole costs memory in proportion to the corpus. A consumer that reduces each
batch before the next is read (agreement statistics, the report's regions) reads the group
instead as consecutive row groups of about ``limit`` rows. No key is split between two
batches: the rows of the batch's last key — a (layer, document) for units, an item for
items, whose rows the writers keep together — are carried over to the next batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..errors import DataError
from ..model.codes import sorted_codes
from .directory import OutputData
from .model import Setting


def batches(data: OutputData, setting: Setting, group: str, columns: Sequence[str] | None, limit: int,
            parts: tuple[int, int] | None = None) -> Iterator[pa.Table]:
    """A group's rows in batches of whole keys: consecutive row groups of at most ``limit`` rows,
    the rows of each batch's last key carried to the next.

    With ``parts`` (k0, k1): the keys that begin in those parts — the rows of a key begun in an
    earlier part are left to that part's reader, and the last key's rows that go on into the
    following parts are read from them (item parts are cut by rows, not by items).
    """
    if columns is not None:
        columns = list(dict.fromkeys([*columns, *KEYS[setting.kind]]))
    index = data._row_groups(setting).get(group, [])
    lo, hi = parts if parts is not None else (0, len(setting.parts))
    skip = None
    prior = [(k, ids) for k, ids in index if k < lo]
    if prior:  # the key the previous part ends with
        last = data._read_part(setting, prior[-1][0], prior[-1][1][-1:], group, columns)
        skip = _key_at(setting, last, last.num_rows - 1) if last.num_rows else None
    carried: pa.Table | None = None
    for k, ids in index:
        if not lo <= k < hi:
            continue
        files = data.parts(setting)
        runs: list[list[int]] = [[]]
        held = 0
        for i in ids:
            rows = files.row_group_rows(k, i)
            if runs[-1] and held + rows > limit:
                runs.append([])
                held = 0
            runs[-1].append(i)
            held += rows
        for run in runs:
            table = data._read_part(setting, k, run, group, columns)
            if skip is not None:
                start = _leading(setting, table, skip)
                table, skip = table.slice(start), skip if start == table.num_rows else None
            if carried is not None:
                table = pa.concat_tables([carried, table.cast(carried.schema) if table.schema != carried.schema else table])
            cut = _last_key(setting, table)
            carried = table.slice(cut)
            if cut:
                yield table.slice(0, cut)
    if carried is not None and carried.num_rows and hi < len(setting.parts):  # the last key may go on
        key = _key_at(setting, carried, carried.num_rows - 1)
        for k, ids in index:
            if k < hi:
                continue
            for i in ids:
                table = data._read_part(setting, k, [i], group, columns)
                n = _leading(setting, table, key)
                if n:
                    carried = pa.concat_tables([carried, table.slice(0, n).cast(carried.schema)])
                if n < table.num_rows:
                    break
            else:
                continue
            break
    if carried is not None and carried.num_rows:
        yield carried


#: the columns that name a key (rows of one key are never split between batches)
KEYS = {"items": ("item",), "units": ("layer", "doc_id")}


def _key_at(setting: Setting, table: pa.Table, i: int) -> tuple:
    return tuple(table.column(c)[i].as_py() for c in KEYS[setting.kind])


def _leading(setting: Setting, table: pa.Table, key: tuple) -> int:
    """How many rows at the start of ``table`` have the key ``key``."""
    n = 0
    if table.num_rows and _key_at(setting, table, 0) == key:
        starts = _starts(setting, table)
        n = int(starts[0]) if starts.size else table.num_rows
    return n


def _starts(setting: Setting, table: pa.Table) -> np.ndarray:
    """The rows where a new key begins (after the first); refuses keys that are not each one run of rows."""
    if setting.kind == "items":
        names, key = sorted_codes(table.column("item"))
    else:
        docs, doc = sorted_codes(table.column("doc_id"))
        layers, layer = sorted_codes(table.column("layer"))
        key = layer.astype(np.int64) * max(len(docs), 1) + doc
    starts = np.flatnonzero(np.diff(key)) + 1
    if starts.size + 1 != np.unique(key).size:
        raise DataError(f"{setting.path}: the rows of a {'item' if setting.kind == 'items' else 'document'} are not "
                        "together in the file; it cannot be read in batches")
    return starts


def _last_key(setting: Setting, table: pa.Table) -> int:
    """Where the rows of a table's last key begin."""
    if table.num_rows == 0:
        return 0
    starts = _starts(setting, table)
    return int(starts[-1]) if starts.size else 0
