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
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..output import read_manifest
from .matrix import DENSE_CELLS, decode, layer_rows, matrix, sorted_codes
from .model import ITEM_KEYS, LEVELS, LONG_ITEM_COLUMNS, LONG_UNIT_COLUMNS, UNIT_KEYS, DataError, Matrix, Setting


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
        not_annotated=meta.get("not_annotated") if kind == "units" else None,
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
                    names = sorted_codes(pf.read_row_group(i, columns=["group"]).column(0))[0]
                for name in names:
                    index.setdefault(name, []).append(i)
            self._index[setting.path] = index
        return self._index[setting.path]

    def groups(self, setting: Setting) -> list[str]:
        return sorted(self._row_groups(setting))

    def _read_group(self, setting: Setting, group: str, columns: Sequence[str] | None = None) -> pa.Table:
        ids = self._row_groups(setting)[group]
        table = pq.ParquetFile(setting.path).read_row_groups(ids, columns=list(columns) if columns else None)
        column = table.column("group")
        if all(pa.types.is_dictionary(c.type) and c.dictionary.to_pylist() == [group] for c in column.chunks):
            return table  # every row is the group's (a dictionary of one value: no pass over the rows)
        names, codes = sorted_codes(column)
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
                table = decode(table)
                yield group, table, ["items"], np.zeros(table.num_rows, np.int64)
                continue
            found, codes = sorted_codes(table.column("layer"))
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

    def stored_tables(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
        """Each group's rows of a setting as stored (long layouts stay long), strings decoded, groups sorted."""
        for group in self.groups(setting):
            if groups is None or group in groups:
                yield group, decode(self._read_group(setting, group))

    def by_group(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, list[Matrix]]]:
        """The matrices of one group at a time (memory bounded by the largest group)."""
        for group, mats in itertools.groupby(self.matrices(setting, groups), key=lambda m: m.group):
            yield group, list(mats)

    # -- segments --

    def segments(self, unit: str) -> pa.Table | None:
        """``segments/<unit>.parquet`` with plain string columns, or None when absent."""
        if unit not in self._segments:
            path = self.path / "segments" / f"{unit}.parquet"
            self._segments[unit] = decode(pq.ParquetFile(path).read()) if path.is_file() else None
        return self._segments[unit]


__all__ = ["DENSE_CELLS", "DataError", "Matrix", "OutputData", "Setting", "layer_rows", "matrix", "read_setting", "sorted_codes"]
