"""One (setting, group, layer)'s rows → a :class:`~unitize.dataset.model.Matrix` (units × annotators).

Columnar tables are read column by column; a layout with a row per (unit, annotator)
(:mod:`unitize.layouts.long`) is pivoted, or — crowd data, too wide for a column per
annotator — counted per unit (:data:`~unitize.layouts.long.DENSE_CELLS`). Values become float
codes with NaN for a missing annotator; labels become codes into ``Matrix.categories``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from ..layouts.long import LongIndex, pivot, value_counts
from ..model.codes import decode, sorted_codes
from .model import Matrix, Setting


def layer_rows(table: pa.Table, codes: np.ndarray, i: int) -> pa.Table:
    """The rows of a group's table whose layer index is ``i``."""
    rows = np.flatnonzero(codes == i)
    return table if rows.size == table.num_rows else table.take(pa.array(rows))


def matrix(setting: Setting, group: str, layer: str, table: pa.Table, crowd: bool | None = None) -> Matrix:
    """The matrix of one (group, layer)'s rows. A long table is counted per unit (crowd data) when its
    wide form would exceed :data:`DENSE_CELLS`, or as ``crowd`` says (a batch of a larger group)."""
    if not setting.layout.columnar:
        table = decode(table)
    if setting.kind == "items":
        return _items_matrix(setting, group, table, crowd)
    return _units_matrix(setting, group, layer, table, crowd)


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


def _units_matrix(setting: Setting, group: str, layer: str, table: pa.Table, crowd: bool | None = None) -> Matrix:
    keys = ["doc_id", "unit"]
    if not setting.layout.columnar:
        index = LongIndex(table, keys)
        if index.too_wide if crowd is None else crowd:
            numeric = setting.value in ("binary", "bitmask") and not _is_text(table.column("value"))
            key_rows, counts, domain, categories = value_counts(table, index, numeric)
            docs, row_doc = sorted_codes(key_rows.column("doc_id"))
            return Matrix(
                setting=setting, group=group, layer=layer, annotators=[], values=np.zeros((key_rows.num_rows, 0)),
                categories=categories, docs=docs, row_doc=row_doc, row_unit=key_rows.column("unit").to_numpy().astype(np.int64),
                crowd=len(index.annotators), counts=counts, value_domain=domain,
            )
        table, annotators = pivot(table, index, keys, ["begin", "end"], setting.annotators)
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
    if not setting.layout.columnar:
        table = table.set_column(
            table.schema.get_field_index("value"), "value", _applicable(table.column("value"), setting.not_applicable)
        )
        index = LongIndex(table, ["item"])
        if index.too_wide if crowd is None else crowd:
            key_rows, counts, domain, categories = value_counts(table, index, numeric=level != "nominal")
            items = key_rows.column("item").to_pylist()
            return Matrix(
                setting=setting, group=group, layer="items", annotators=[], values=np.zeros((len(items), 0)),
                categories=categories, docs=[], row_doc=np.full(len(items), -1, dtype=np.int64),
                row_unit=np.arange(len(items), dtype=np.int64), row_names=items,
                crowd=len(index.annotators), counts=counts, value_domain=domain,
            )
        table, annotators = pivot(table, index, ["item"], [], setting.annotators)
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
