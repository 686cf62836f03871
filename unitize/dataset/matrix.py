"""One (setting, group, layer)'s rows → a :class:`~unitize.dataset.model.Matrix` (units × annotators).

Wide tables are read column by column; long tables are pivoted, or — crowd data,
too wide for a column per annotator — counted per unit (:data:`DENSE_CELLS`).
Values become float codes with NaN for a missing annotator; labels become codes
into ``Matrix.categories``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .model import DataError, Matrix, Setting

def layer_rows(table: pa.Table, codes: np.ndarray, i: int) -> pa.Table:
    """The rows of a group's table whose layer index is ``i``."""
    rows = np.flatnonzero(codes == i)
    return table if rows.size == table.num_rows else table.take(pa.array(rows))


def matrix(setting: Setting, group: str, layer: str, table: pa.Table, crowd: bool | None = None) -> Matrix:
    """The matrix of one (group, layer)'s rows. A long table is counted per unit (crowd data) when its
    wide form would exceed :data:`DENSE_CELLS`, or as ``crowd`` says (a batch of a larger group)."""
    if setting.layout == "long":
        table = decode(table)
    if setting.kind == "items":
        return _items_matrix(setting, group, table, crowd)
    return _units_matrix(setting, group, layer, table, crowd)


def decode(table: pa.Table) -> pa.Table:
    """Dictionary columns as plain strings (simpler filtering and pivoting)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(f.type.value_type))
    return table


def _in_order(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _codes(columns: list[pa.ChunkedArray | pa.Array], numeric: bool) -> tuple[list[np.ndarray], list[str] | None]:
    """Columns of values as float arrays (NaN = null); strings become codes into sorted categories."""
    if numeric:
        out = []
        for col in columns:
            try:
                out.append(np.asarray(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise DataError(f"a value is not a number: {exc}") from None
        return out, None
    texts = [pc.cast(c, pa.string()) for c in columns]
    categories = sorted({v for c in texts for v in pc.unique(c).to_pylist() if v is not None})
    domain = pa.array(categories, pa.string())
    out = []
    for c in texts:
        idx = pc.index_in(c, value_set=domain).to_numpy(zero_copy_only=False)
        out.append(np.asarray(idx, dtype=np.float64))  # nulls come back as NaN
    return out, categories


def _is_text(col: pa.ChunkedArray) -> bool:
    return pa.types.is_string(col.type) or pa.types.is_large_string(col.type)


def sorted_codes(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """Distinct strings, sorted, and per row the index into them (dictionary columns stay encoded)."""
    chunks = [c if pa.types.is_dictionary(c.type) else pc.dictionary_encode(c) for c in column.chunks]
    dictionaries = [c.dictionary.to_pylist() for c in chunks]
    values = sorted({v for d in dictionaries for v in d})
    index = {v: i for i, v in enumerate(values)}
    parts = [
        c.indices.to_numpy(zero_copy_only=False) if d == values  # a sorted dictionary: its indices are the codes
        else np.array([index[v] for v in d], dtype=np.int64)[c.indices.to_numpy(zero_copy_only=False)] if d
        else np.zeros(len(c), np.int64)
        for c, d in zip(chunks, dictionaries)
    ]
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    used = np.flatnonzero(np.bincount(codes, minlength=len(values)))  # a dictionary may hold values no row uses
    if used.size == len(values):
        return values, codes
    lut = np.zeros(len(values), dtype=np.int64)
    lut[used] = np.arange(used.size)
    return [values[i] for i in used.tolist()], lut[codes]


def _units_matrix(setting: Setting, group: str, layer: str, table: pa.Table, crowd: bool | None = None) -> Matrix:
    keys = ["doc_id", "unit"]
    if setting.layout == "long":
        index = _LongIndex(table, keys)
        if index.too_wide if crowd is None else crowd:
            numeric = setting.value in ("binary", "bitmask") and not _is_text(table.column("value"))
            key_rows, counts, domain, categories = _value_counts(table, index, numeric)
            docs, row_doc = sorted_codes(key_rows.column("doc_id"))
            return Matrix(
                setting=setting, group=group, layer=layer, annotators=[], values=np.zeros((key_rows.num_rows, 0)),
                categories=categories, docs=docs, row_doc=row_doc, row_unit=key_rows.column("unit").to_numpy().astype(np.int64),
                crowd=len(index.annotators), counts=counts, value_domain=domain,
            )
        table, annotators = _pivot_long(table, index, keys, ["begin", "end"], setting.annotators)
    else:
        annotators = list(setting.annotators)
    numeric = setting.value in ("binary", "bitmask") and not any(_is_text(table.column(a)) for a in annotators)
    values, categories = _codes([table.column(a) for a in annotators], numeric)
    docs, row_doc = sorted_codes(table.column("doc_id"))
    unit = table.column("unit").to_numpy().astype(np.int64)
    order = np.lexsort((unit, row_doc))
    stacked = np.column_stack(values) if values else np.zeros((table.num_rows, 0))
    return Matrix(
        setting=setting,
        group=group,
        layer=layer,
        annotators=annotators,
        values=stacked[order],
        categories=categories,
        docs=docs,
        row_doc=row_doc[order],
        row_unit=unit[order],
    )


def _applicable(column: pa.ChunkedArray, not_applicable: str | None) -> pa.ChunkedArray:
    """Item labels as strings, the not-applicable value turned into null (missing, not a category)."""
    column = pc.cast(column, pa.string())
    if not_applicable is None:
        return column
    return pc.if_else(pc.equal(column, not_applicable), pa.scalar(None, pa.string()), column)


def _items_matrix(setting: Setting, group: str, table: pa.Table, crowd: bool | None = None) -> Matrix:
    level = setting.level(group)
    if setting.layout == "long":
        table = table.set_column(
            table.schema.get_field_index("value"), "value", _applicable(table.column("value"), setting.not_applicable)
        )
        index = _LongIndex(table, ["item"])
        if index.too_wide if crowd is None else crowd:
            key_rows, counts, domain, categories = _value_counts(table, index, numeric=level != "nominal")
            items = key_rows.column("item").to_pylist()
            return Matrix(
                setting=setting, group=group, layer="items", annotators=[], values=np.zeros((len(items), 0)),
                categories=categories, docs=[], row_doc=np.full(len(items), -1, dtype=np.int64),
                row_unit=np.arange(len(items), dtype=np.int64), row_names=items,
                crowd=len(index.annotators), counts=counts, value_domain=domain,
            )
        table, annotators = _pivot_long(table, index, ["item"], [], setting.annotators)
        columns = [table.column(a) for a in annotators]
    else:
        annotators = list(setting.annotators)
        columns = [_applicable(table.column(a), setting.not_applicable) for a in annotators]
    values, categories = _codes(columns, numeric=level != "nominal")
    items = table.column("item").to_pylist()
    order = sorted(range(len(items)), key=lambda i: items[i])
    stacked = np.column_stack(values) if values else np.zeros((len(items), 0))
    return Matrix(
        setting=setting,
        group=group,
        layer="items",
        annotators=annotators,
        values=stacked[order],
        categories=categories,
        docs=[],
        row_doc=np.full(len(items), -1, dtype=np.int64),
        row_unit=np.arange(len(items), dtype=np.int64),
        row_names=[items[i] for i in order],
    )


#: a long table whose wide form would exceed this many cells (rows × annotators) is measured
#: from value counts per unit (crowd data: thousands of annotators, a few per unit)
DENSE_CELLS = 20_000_000


class _LongIndex:
    """A long table's keys and annotators as indexes, computed once per matrix.

    ``row[i]``: the index of row i's key among the sorted distinct keys;
    ``first[k]``: the first row of key k; ``annotators``/``ann_code``: the
    sorted distinct annotators and each row's index into them.
    """

    def __init__(self, table: pa.Table, keys: list[str]):
        row_key = np.zeros(table.num_rows, dtype=np.int64)
        for k in keys:
            column = table.column(k)
            if pa.types.is_integer(column.type):
                values = column.to_numpy().astype(np.int64)
                values = values - (values.min() if values.size else 0)
                radix = int(values.max()) + 1 if values.size else 1
            else:
                names, values = sorted_codes(column)
                radix = max(len(names), 1)
            row_key = row_key * radix + values
        _, self.first, row = np.unique(row_key, return_index=True, return_inverse=True)
        self.row = row.reshape(-1)
        self.annotators, self.ann_code = sorted_codes(table.column("annotator"))

    @property
    def too_wide(self) -> bool:
        """Whether one column per annotator would exceed :data:`DENSE_CELLS`."""
        return len(self.first) * len(self.annotators) > DENSE_CELLS


def _value_counts(table: pa.Table, index: _LongIndex, numeric: bool):
    """A long table as per-key value counts: (key rows, counts, value domain, categories).

    A null value (a label that did not apply) counts for nothing.
    """
    value = table.column("value")
    if numeric:
        v = np.asarray(pc.cast(value, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        keep = ~np.isnan(v)
        values = np.unique(v[keep])
        code = np.searchsorted(values, v[keep])
        categories = None
    else:
        keep = pc.is_valid(value).to_numpy(zero_copy_only=False)
        categories, code = sorted_codes(pc.cast(value.filter(pa.array(keep)), pa.string()))
        values = np.arange(len(categories), dtype=np.float64)
    n_rows, n_values = len(index.first), len(values)
    if n_values:
        counts = np.bincount(index.row[keep] * n_values + code, minlength=n_rows * n_values).reshape(n_rows, n_values)
    else:
        counts = np.zeros((n_rows, 0), np.int64)
    return table.take(pa.array(index.first)), counts, values, categories


def _pivot_long(
    table: pa.Table, index: _LongIndex, keys: list[str], carried: list[str], declared: tuple[str, ...]
) -> tuple[pa.Table, list[str]]:
    """A long table (one row per key × annotator) as a wide one; absent rows become nulls."""
    found, row, first = index.annotators, index.row, index.first
    present = set(found)
    annotators = [a for a in declared if a in present] + [a for a in found if a not in set(declared)]
    annotators += [a for a in declared if a not in present]  # declared, without a row: all null
    position = {a: i for i, a in enumerate(annotators)}
    rank = np.array([position[a] for a in found], dtype=np.int64)
    col = rank[index.ann_code] if index.ann_code.size else index.ann_code.astype(np.int64)
    key_rows = table.select(keys + carried).take(pa.array(first))
    for c in carried:
        extents = table.column(c).to_numpy()
        if not np.array_equal(extents[first][row], extents):
            raise DataError(f"a long table gives one {'/'.join(keys)} two different extents")
    if np.unique(row * max(len(annotators), 1) + col).size != table.num_rows:
        raise DataError("a long table has two values for one unit and annotator")
    value = table.column("value")
    wide = key_rows
    for i, name in enumerate(annotators):
        take = np.full(key_rows.num_rows, -1, dtype=np.int64)
        sel = np.flatnonzero(col == i)
        take[row[sel]] = sel
        wide = wide.append_column(name, value.take(pa.array(take, mask=take < 0)))
    return wide, annotators
