"""Reading a ``unitize`` output directory for measurement and export.

The output directory and its manifest are the interface: unit matrices are
read from ``units/*/part-0.parquet`` through pyarrow (wide or long layout, unit
or item data, as the ``unitize`` schema metadata says), segments from
``segments/<unit>.parquet``. Nothing here imports the run.

A matrix comes out as a float array, units × annotators, with NaN where the
annotator is missing; categorical values are integer codes into
``Matrix.categories``.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..output import OutputError, read_manifest

UNIT_KEYS = ("group", "doc_id", "layer", "unit", "begin", "end")
ITEM_KEYS = ("group", "item")
LONG_UNIT_COLUMNS = ("group", "doc_id", "layer", "unit", "begin", "end", "annotator", "value")
LONG_ITEM_COLUMNS = ("group", "item", "annotator", "value")
LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class Setting:
    """One unit-matrix dataset of an output directory (``units/<name>/``)."""

    name: str
    path: Path
    kind: str  # "units" or "items"
    layout: str  # "wide" or "long"
    value: str  # "binary", "bitmask", "label"
    unit: str | None  # "char", "word"; None for items
    approach: str | None
    mode: str | None
    annotators: tuple[str, ...]
    levels: dict[str, str] = field(default_factory=dict)
    layer_bits: dict[str, int] = field(default_factory=dict)
    #: item data: the value meaning "this level did not apply to the annotator" (measured as missing)
    not_applicable: str | None = None

    def level(self, group: str) -> str:
        """Level of measurement for Krippendorff's alpha: declared for items, nominal otherwise."""
        return self.levels.get(group, "nominal") if self.kind == "items" else "nominal"


@dataclass
class Matrix:
    """One (setting, group, layer) matrix: rows are units (or items), columns annotators."""

    setting: Setting
    group: str
    layer: str
    annotators: list[str]
    values: np.ndarray  # float64 (rows, annotators); NaN = annotator missing
    categories: list[str] | None  # code -> label for label data; None when values are numbers
    docs: list[str]  # documents of the group's universe (empty for items)
    row_doc: np.ndarray  # per row: index into docs (-1 for items)
    row_unit: np.ndarray  # per row: unit index within the document (item index for items)
    row_names: list[str] | None = None  # item names for items
    continuum: "Matrix | None" = None  # layers laid end to end: the one-layer matrix whose units are the continuum
    crowd: int | None = None  # crowd data (see _value_counts): the number of annotators; values is then empty
    counts: np.ndarray | None = None  # crowd data: rows × values, how many annotators gave each value
    value_domain: np.ndarray | None = None  # crowd data: the value (or category code) of each counts column

    @property
    def binary(self) -> bool:
        return self.setting.value == "binary" and self.categories is None

    def item_names(self) -> list[str]:
        """Stable names of the rows: ``group/doc/unit`` (units) or ``group/item`` (items)."""
        if self.row_names is not None:
            return [f"{self.group}/{n}" for n in self.row_names]
        return [f"{self.group}/{self.docs[d]}/{u}" for d, u in zip(self.row_doc.tolist(), self.row_unit.tolist())]

    def label(self, code: float) -> str:
        """The written form of a value."""
        if self.categories is not None:
            return self.categories[int(code)]
        return str(int(code)) if float(code).is_integer() else repr(float(code))

    def doc_units(self) -> np.ndarray:
        """Units per document of the universe, in ``docs`` order."""
        if self.continuum is not None:
            return self.continuum.doc_units()
        return np.bincount(self.row_doc, minlength=len(self.docs)) if self.docs else np.zeros(0, dtype=np.int64)

    def doc_presence(self) -> np.ndarray:
        """(documents, annotators) bool: the annotator has data for the document."""
        out = np.zeros((len(self.docs), len(self.annotators)), dtype=bool)
        if self.docs and self.values.size:
            for k in range(len(self.annotators)):
                present = ~np.isnan(self.values[:, k])
                out[:, k] = np.bincount(self.row_doc, weights=present, minlength=len(self.docs)) > 0
        return out


class DataError(OutputError):
    """An output directory whose tables do not follow the contract."""


def _metadata(schema: pa.Schema, path: Path) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(b"unitize")
    if raw is None:
        raise DataError(f"{path}: no 'unitize' schema metadata; was it written by unitize?")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: unreadable 'unitize' schema metadata: {exc}") from None


def read_setting(path: Path) -> Setting:
    """Describe one ``units/<name>/part-0.parquet`` from its schema metadata."""
    schema = pq.read_schema(path)
    meta = _metadata(schema, path)
    kind = meta.get("kind", "units")
    layout = meta.get("layout", "wide")
    if kind not in ("units", "items") or layout not in ("wide", "long"):
        raise DataError(f"{path}: unknown kind {kind!r} or layout {layout!r}")
    mode = meta.get("mode")
    value = meta.get("value") or ("label" if kind == "items" else "bitmask" if mode == "combined" else "binary")
    keys = ITEM_KEYS if kind == "items" else UNIT_KEYS
    if layout == "long":
        expected = LONG_ITEM_COLUMNS if kind == "items" else LONG_UNIT_COLUMNS
        if tuple(schema.names) != expected:
            raise DataError(f"{path}: a long table needs exactly the columns {', '.join(expected)}")
        annotators = tuple(meta.get("annotators") or ())
    else:
        missing = [k for k in keys if k not in schema.names]
        if missing:
            raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
        columns = [n for n in schema.names if n not in keys]
        annotators = tuple(meta.get("annotators") or columns)
        absent = [a for a in annotators if a not in schema.names]
        if absent:
            raise DataError(f"{path}: annotator column(s) {', '.join(absent)} named in the metadata are missing")
    levels = meta.get("levels") or {}
    bad = {g: lv for g, lv in levels.items() if lv not in LEVELS}
    if bad:
        raise DataError(f"{path}: unknown level(s) {bad}; use one of {', '.join(LEVELS)}")
    return Setting(
        name=path.parent.name,
        path=path,
        kind=kind,
        layout=layout,
        value=value,
        unit=meta.get("unit") if kind == "units" else None,
        approach=meta.get("approach") if kind == "units" else None,
        mode=mode if kind == "units" else None,
        annotators=annotators,
        levels=dict(levels),
        layer_bits=dict(meta.get("layer_bits") or {}),
        not_applicable=meta.get("not_applicable") if kind == "items" else None,
    )


class OutputData:
    """A ``unitize`` output directory opened for reading."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        parts = sorted((self.path / "units").glob("*/part-0.parquet"))
        if not parts:
            raise DataError(f"{self.path} holds no unit matrices (units/*/part-0.parquet)")
        self.settings = [read_setting(p) for p in parts]
        self.layers: list[str] = list(self.manifest.get("settings", {}).get("layers") or [])
        self._segments: dict[str, pa.Table | None] = {}
        self._index: dict[Path, dict[str, list[int]]] = {}

    def setting(self, name: str) -> Setting:
        for s in self.settings:
            if s.name == name:
                return s
        raise DataError(f"{self.path}: no setting {name!r}; there are {', '.join(s.name for s in self.settings)}")

    # -- unit matrices --

    def _row_groups(self, setting: Setting) -> dict[str, list[int]]:
        """group -> the Parquet row groups holding its rows (from the statistics where they say it)."""
        if setting.path not in self._index:
            pf = pq.ParquetFile(setting.path)
            col = pf.schema_arrow.get_field_index("group")
            index: dict[str, list[int]] = {}
            for i in range(pf.num_row_groups):
                stats = pf.metadata.row_group(i).column(col).statistics
                if stats is not None and stats.has_min_max and stats.min == stats.max:
                    names = [stats.min.decode() if isinstance(stats.min, bytes) else stats.min]
                else:
                    names = _sorted_codes(pf.read_row_group(i, columns=["group"]).column(0))[0]
                for name in names:
                    index.setdefault(name, []).append(i)
            self._index[setting.path] = index
        return self._index[setting.path]

    def groups(self, setting: Setting) -> list[str]:
        return sorted(self._row_groups(setting))

    def _read_group(self, setting: Setting, group: str, columns: Sequence[str] | None = None) -> pa.Table:
        ids = self._row_groups(setting)[group]
        table = pq.ParquetFile(setting.path).read_row_groups(ids, columns=list(columns) if columns else None)
        names, codes = _sorted_codes(table.column("group"))
        if names != [group]:
            table = table.take(pa.array(np.nonzero(codes == names.index(group))[0]))
        return table

    def group_tables(
        self, setting: Setting, groups: Sequence[str] | None = None, columns: Sequence[str] | None = None
    ) -> Iterator[tuple[str, pa.Table, list[str], np.ndarray]]:
        """Per group (sorted): its rows (only ``columns`` when given), its layers in the manifest's
        order and per row the index of its layer among them (items: one layer, ``items``)."""
        for group in self.groups(setting):
            if groups is not None and group not in groups:
                continue
            table = self._read_group(setting, group, columns)
            if setting.kind == "items":
                table = _decode(table)
                yield group, table, ["items"], np.zeros(table.num_rows, np.int64)
                continue
            found, codes = _sorted_codes(table.column("layer"))
            order = {layer: i for i, layer in enumerate(self.layers)}
            layers = sorted(found, key=lambda x: (order.get(x, len(order)), x))
            position = np.array([layers.index(x) for x in found], dtype=np.int64)
            yield group, table, layers, position[codes]

    def tables(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, str, pa.Table]]:
        """Every (group, layer, rows) of a setting, groups sorted, layers in the manifest's order."""
        for group, table, layers, codes in self.group_tables(setting, groups):
            for i, layer in enumerate(layers):
                yield group, layer, layer_rows(table, codes, i)

    def matrices(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[Matrix]:
        """Every (group, layer) matrix of a setting, groups sorted, layers in the manifest's order."""
        for group, layer, table in self.tables(setting, groups):
            yield matrix(setting, group, layer, table)

    def tables(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
        """Each group's rows of a setting as stored (long layouts stay long), strings decoded, groups sorted."""
        for group in self.groups(setting):
            if groups is None or group in groups:
                yield group, _decode(self._read_group(setting, group))

    def by_group(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, list[Matrix]]]:
        """The matrices of one group at a time (memory bounded by the largest group)."""
        for group, mats in itertools.groupby(self.matrices(setting, groups), key=lambda m: m.group):
            yield group, list(mats)

    # -- segments --

    def segments(self, unit: str) -> pa.Table | None:
        """``segments/<unit>.parquet`` with plain string columns, or None when absent."""
        if unit not in self._segments:
            path = self.path / "segments" / f"{unit}.parquet"
            self._segments[unit] = _decode(pq.ParquetFile(path).read()) if path.is_file() else None
        return self._segments[unit]


def layer_rows(table: pa.Table, codes: np.ndarray, i: int) -> pa.Table:
    """The rows of a group's table whose layer index is ``i``."""
    rows = np.flatnonzero(codes == i)
    return table if rows.size == table.num_rows else table.take(pa.array(rows))


def matrix(setting: Setting, group: str, layer: str, table: pa.Table) -> Matrix:
    """The matrix of one (group, layer)'s rows."""
    if setting.layout == "long":
        table = _decode(table)
    if setting.kind == "items":
        return _items_matrix(setting, group, table)
    return _units_matrix(setting, group, layer, table)


def sorted_codes(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """Distinct strings of a column, sorted, and per row the index into them."""
    return _sorted_codes(column)


def _decode(table: pa.Table) -> pa.Table:
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


def _sorted_codes(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
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


def _units_matrix(setting: Setting, group: str, layer: str, table: pa.Table) -> Matrix:
    keys = ["doc_id", "unit"]
    if setting.layout == "long":
        index = _LongIndex(table, keys)
        if index.too_wide:
            numeric = setting.value in ("binary", "bitmask") and not _is_text(table.column("value"))
            key_rows, counts, domain, categories = _value_counts(table, index, numeric)
            docs, row_doc = _sorted_codes(key_rows.column("doc_id"))
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
    docs, row_doc = _sorted_codes(table.column("doc_id"))
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


def _items_matrix(setting: Setting, group: str, table: pa.Table) -> Matrix:
    level = setting.level(group)
    if setting.layout == "long":
        table = table.set_column(
            table.schema.get_field_index("value"), "value", _applicable(table.column("value"), setting.not_applicable)
        )
        index = _LongIndex(table, ["item"])
        if index.too_wide:
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
                names, values = _sorted_codes(column)
                radix = max(len(names), 1)
            row_key = row_key * radix + values
        _, self.first, row = np.unique(row_key, return_index=True, return_inverse=True)
        self.row = row.reshape(-1)
        self.annotators, self.ann_code = _sorted_codes(table.column("annotator"))

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
        categories, code = _sorted_codes(pc.cast(value.filter(pa.array(keep)), pa.string()))
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
