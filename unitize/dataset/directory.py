"""Reading a ``unitize`` output directory for measurement and export.

The output directory and its manifest are the interface: unit matrices are
read from ``<folder>/setting=<name>/part-<NNNNN>.parquet`` (format 3: ``units/``, ``labels/`` for
labels mode, ``long/`` for the long item matrix; format 2: all in ``units/``; format 1:
``units/<name>/part-0.parquet``) through pyarrow (wide, sparse or long layout,
unit or item data, as the ``unitize`` schema metadata says), segments from
``segments/<unit>.parquet``. A sparse setting is read back dense, one group at
a time (:mod:`.sparse`), so every consumer sees the wide layout's matrices.
Nothing here imports the run.

A matrix comes out as a float array, units × annotators, with NaN where the
annotator is missing; categorical values are integer codes into
``Matrix.categories``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import layouts
from ..errors import DataError
from ..layouts.sparse import Stored, dense_group, group_universe
from ..model.codes import decode, positions, sorted_codes
from ..model.traits import DEFAULT as DEFAULT_TRAITS
from ..model.traits import FormatTraits
from ..output import read_manifest
from .matrix import layer_rows, matrix
from .model import Matrix, Setting
from .parts import Index, PartFiles
from .segments import SegmentFile
from .settings import dataset_parts, format_version, read_setting
from .universe import Universe

#: the one layer of an item group (items have no layers of their own)
ITEM_LAYER = "items"


class OutputData:
    """A ``unitize`` output directory opened for reading.

    ``annotators`` selects some of the annotators (a role's, a pair): every setting then has only
    those of its annotators, in its own order, and every table read — columns, long rows, segments —
    holds only theirs, as if the others had never annotated."""

    def __init__(self, path: Path, annotators: Sequence[str] | None = None):
        self.path = Path(path)
        #: the manifest but its ``inputs``, a line per input file (16 MiB as Python objects in the full TDB preset): :meth:`inputs`
        self.manifest = {k: v for k, v in read_manifest(self.path, inputs=False).items() if k != "inputs"}
        self.format_version = format_version(self.manifest, self.path)
        datasets = dataset_parts(self.path, self.format_version)
        if not datasets:
            where = ("{units,labels,long}/setting=*/part-*.parquet" if self.format_version >= 3
                     else "units/setting=*/part-*.parquet" if self.format_version >= 2 else "units/*/part-0.parquet")
            raise DataError(f"{self.path} holds no unit matrices ({where})")
        self._parts: dict[Path, PartFiles] = {}
        self.settings = []
        for parts in datasets.values():
            files = self._parts[parts[0]] = PartFiles(parts)
            self.settings.append(read_setting(parts[0], parts, files.schema))
        self.selected: tuple[str, ...] | None = None if annotators is None else tuple(annotators)
        if self.selected is not None:
            keep = set(self.selected)
            self.settings = [replace(s, annotators=tuple(a for a in s.annotators if a in keep)) for s in self.settings]
        self.layers: list[str] = list(self.manifest.get("settings", {}).get("layers") or [])
        self.universe = Universe(self.path)
        self._segments: dict[str, pa.Table | None] = {}

    @cached_property
    def traits(self) -> FormatTraits:
        """The traits of the format the output was converted from (the manifest's ``format``), as its adapter
        declares them; the defaults when the manifest names none or its adapter is not installed."""
        from ..adapters import available, get_adapter  # here: the registry loads the adapters' entry points

        name = self.manifest.get("settings", {}).get("format")
        if name not in available():
            return DEFAULT_TRAITS
        try:
            return get_adapter(name).traits
        except Exception:  # a broken plugin: its traits are unknown, as if it were not installed
            return DEFAULT_TRAITS

    def inputs(self) -> list[dict[str, Any]]:
        """The manifest's ``inputs`` (path, role, bytes, sha256 of each input file), read again from the file: kept by
        no reader, as they grow with the study."""
        inputs: list[dict[str, Any]] = read_manifest(self.path)["inputs"]
        return inputs

    def setting(self, name: str) -> Setting:
        for s in self.settings:
            if s.name == name:
                return s
        raise DataError(f"{self.path}: no setting {name!r}; there are {', '.join(s.name for s in self.settings)}")

    # -- unit matrices --

    def parts(self, setting: Setting) -> PartFiles:
        """The part files of a setting, each opened once (:class:`~.parts.PartFiles`)."""
        if setting.path not in self._parts:
            self._parts[setting.path] = PartFiles(setting.parts or (setting.path,))
        return self._parts[setting.path]

    def schema(self, setting: Setting) -> pa.Schema:
        """The Arrow schema of a setting's parts (read once)."""
        return self.parts(setting).schema

    def _row_groups(self, setting: Setting) -> Index:
        """group -> (part, the part's Parquet row groups holding its rows), from the statistics where they say it."""
        return self.parts(setting).index()

    def groups(self, setting: Setting) -> list[str]:
        if setting.layout.implicit_rows:  # a group without a mark or a missing annotator may have no stored row
            return sorted(set(self.universe.groups()) | set(self._row_groups(setting)))
        return sorted(self._row_groups(setting))

    def _read_group(self, setting: Setting, group: str, columns: Sequence[str] | None = None) -> pa.Table:
        """A group's rows (dense: a sparse setting's implicit rows restored), sorted by (layer, doc_id, unit)."""
        wanted = list(columns) if columns else None
        if setting.layout.implicit_rows and wanted is not None:
            wanted = [c for c in self.schema(setting).names if c in set(wanted) | {"group", "doc_id", "layer", "unit"}]
        table = self._stored_rows(setting, group, wanted)
        if setting.layout.implicit_rows:
            table = dense_group(setting, setting.layers, self.universe, group, table, wanted)
        return table

    def _stored_rows(self, setting: Setting, group: str, wanted: list[str] | None) -> pa.Table:
        """A group's rows as stored (wide: sorted by (layer, doc_id, unit); sparse: in part order)."""
        pieces = [self._read_part(setting, k, ids, group, wanted) for k, ids in self._row_groups(setting).get(group, [])]
        if not pieces:
            pieces = [self.schema(setting).empty_table().select(wanted) if wanted else self.schema(setting).empty_table()]
        table = pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
        if len(pieces) > 1 and setting.kind == "units" and not setting.layout.implicit_rows:  # parts hold runs of documents: layers back together
            names, codes = sorted_codes(table.column("layer"))
            order = {layer: i for i, layer in enumerate(sorted(names))}
            rank = np.array([order[n] for n in names], dtype=np.int64)[codes]
            table = table.take(pa.array(np.argsort(rank, kind="stable")))
        return table

    def _stored_group(self, setting: Setting, group: str, columns: Sequence[str] | None) -> tuple[Stored, np.ndarray]:
        """A sparse group as stored (:class:`~.sparse.Stored`: the implicit rows as counts) and per
        stored row the index of its layer — the layers and documents the dense rows would have."""
        docs, units = group_universe(setting, self.universe, group)
        keep = units > 0  # a document without units has no dense row
        docs, units = [d for d, k in zip(docs, keep) if k], units[keep]
        order = {layer: i for i, layer in enumerate(self.layers)}
        layers = sorted(setting.layers, key=lambda x: (order.get(x, len(order)), x)) if units.sum() else []
        wanted = [c for c in self.schema(setting).names if c in set(columns) | {"group", "layer"}] if columns else None
        table = self._stored_rows(setting, group, wanted)
        codes = np.zeros(0, np.int64)
        if table.num_rows:
            codes, unknown = positions(table.column("layer"), {x: i for i, x in enumerate(layers)})
            if unknown:
                raise DataError(f"sparse rows of group {group!r} name {', '.join(map(repr, unknown[:3]))}, "
                                "not a layer of the setting")
        dense = lambda: self._read_group(setting, group, columns)  # noqa: E731
        column = lambda name: self._stored_rows(setting, group, [name]).column(name)  # noqa: E731
        return Stored(group, table, docs, units, layers, dense, column), codes

    def _read_part(self, setting: Setting, k: int, ids: list[int], group: str, columns: list[str] | None) -> pa.Table:
        """A group's rows in some row groups of part ``k`` (:meth:`.parts.PartFiles.read`); with selected
        annotators, only their rows in a layout of a row per annotator."""
        selecting = self.selected is not None and not setting.layout.columnar
        borrowed = selecting and columns is not None and "annotator" not in columns  # the filter's column, read for it alone
        table = self.parts(setting).read(k, ids, group, [*columns, "annotator"] if borrowed and columns is not None else columns)
        if selecting and table.num_rows:
            table = table.filter(pc.is_in(pc.cast(table.column("annotator"), pa.string()), pa.array(self.selected, pa.string())))
        return table.drop_columns(["annotator"]) if borrowed else table

    def group_tables(
        self, setting: Setting, groups: Sequence[str] | None = None, columns: Sequence[str] | None = None,
        implicit: bool = False,
    ) -> Iterator[tuple[str, pa.Table | Stored, list[str], np.ndarray]]:
        """Per group (sorted): its rows (only ``columns`` when given), its layers in the manifest's
        order and per row the index of its layer among them (items: one layer, ``items``).

        A sparse setting's rows come dense (implicit rows built) unless ``implicit``: then as
        stored, a :class:`~.sparse.Stored` with the implicit rows as counts (for
        :func:`~.columns.cells`, which counts them instead of building them)."""
        for group in self.groups(setting):
            if groups is not None and group not in groups:
                continue
            if implicit and setting.layout.implicit_rows:
                stored, codes = self._stored_group(setting, group, columns)
                yield group, stored, stored.layers, codes
                continue
            yield self.group_table(setting, group, self._read_group(setting, group, columns))

    def group_table(self, setting: Setting, group: str, table: pa.Table) -> tuple[str, pa.Table, list[str], np.ndarray]:
        """Rows of a group (or of a batch of them): the rows, their layers in the manifest's order, per row its layer's index."""
        if setting.kind == "items":
            table = decode(table)
            return group, table, [ITEM_LAYER], np.zeros(table.num_rows, np.int64)
        found, codes = sorted_codes(table.column("layer"))
        layers = self.layer_order(found)
        position = np.array([layers.index(x) for x in found], dtype=np.int64)
        return group, table, layers, position[codes]

    def layer_order(self, found: Iterable[str]) -> list[str]:
        """Layers in the manifest's order, any other after them by name."""
        order = {layer: i for i, layer in enumerate(self.layers)}
        return sorted(found, key=lambda x: (order.get(x, len(order)), x))

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

    def crowd_groups(self, setting: Setting, groups: Sequence[str] | None = None) -> dict[str, int]:
        """The groups (all, or of ``groups``) whose matrices are counted per unit, not pivoted (crowd data:
        :func:`~unitize.layouts.long.counted_per_unit`), each with its annotators, as the unit universe tells
        before any row is read. Empty for a columnar layout, and where no universe tells (item data, format 1):
        there the matrix tells (:attr:`Matrix.crowd`)."""
        if setting.layout.columnar or setting.kind != "units" or not self.universe.exists:
            return {}
        sizes = self.universe.long_sizes(setting.unit or "char", self.selected)
        return {group: annotators for group, (units, annotators) in sizes.items()
                if (groups is None or group in groups) and layouts.long.counted_per_unit(units, annotators)}

    def by_group(self, setting: Setting, groups: Sequence[str] | None = None) -> Iterator[tuple[str, list[Matrix]]]:
        """The matrices of one group at a time (memory bounded by the largest group)."""
        for group, mats in itertools.groupby(self.matrices(setting, groups), key=lambda m: m.group):
            yield group, list(mats)

    # -- documents --

    def documents(self) -> list[dict[str, Any]]:
        """``documents.parquet``'s rows (source, bytes, sha256, encoding, newline, bom, text, …) sorted by
        doc_id; empty when the directory has none (item data)."""
        path = self.path / "documents.parquet"
        if not path.is_file():
            return []
        try:
            rows = pq.read_table(path).to_pylist()
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{path} cannot be read: {exc}") from None
        return sorted(rows, key=lambda r: r["doc_id"])

    # -- segments --

    def segment_file(self, unit: str, columns: Sequence[str] | None = None) -> SegmentFile | None:
        """``segments/<unit>.parquet`` to read group by group (:class:`~.segments.SegmentFile`), or None when absent."""
        path = self.path / "segments" / f"{unit}.parquet"
        return SegmentFile(path, columns) if path.is_file() else None

    def segments(self, unit: str, groups: Sequence[str] | None = None, columns: Sequence[str] | None = None) -> pa.Table | None:
        """``segments/<unit>.parquet`` with plain string columns, or None when absent; with ``groups`` only
        their rows (a pushed-down filter: row groups whose statistics exclude them are not read), with ``columns``
        only those columns; either way not cached."""
        path = self.path / "segments" / f"{unit}.parquet"
        if groups is not None or columns is not None:
            if not path.is_file():
                return None
            read = list(dict.fromkeys([*columns, "annotator"])) if columns is not None else None
            table = self._selected(decode(pq.read_table(path, columns=read, filters=[("group", "in", list(groups))] if groups is not None else None)))
            return table.select(list(columns)) if columns is not None else table
        if unit not in self._segments:
            self._segments[unit] = self._selected(decode(pq.ParquetFile(path).read())) if path.is_file() else None
        return self._segments[unit]

    def segment_slices(self, unit: str, columns: Sequence[str], rows: int) -> Iterator[pa.Table]:
        """``segments/<unit>.parquet``'s ``columns`` (plain strings) of the selected annotators, read ``rows`` rows at a
        time, in the file's order (nothing when absent): a crowd study's segments are never held whole."""
        path = self.path / "segments" / f"{unit}.parquet"
        if not path.is_file():
            return
        read = list(dict.fromkeys([*columns, "annotator"]))
        for batch in pq.ParquetFile(path).iter_batches(batch_size=rows, columns=read):
            yield self._selected(decode(pa.Table.from_batches([batch]))).select(list(columns))

    def _selected(self, table: pa.Table) -> pa.Table:
        """The rows of the selected annotators (all rows without a selection)."""
        if self.selected is None or not table.num_rows:
            return table
        return table.filter(pc.is_in(table.column("annotator"), pa.array(self.selected, pa.string())))


def densify(out: Path | str | OutputData, setting: str, *, group: str | None = None, layer: str | None = None) -> pa.Table:
    """The dense wide rows of one setting (of one group and/or layer), as the wide layout writes them.

    For a user's own backend: a sparse setting's implicit rows (every annotator 0, ``O`` for labels)
    restored, one group at a time; a wide setting's rows as stored. Long layouts stay long.
    """
    data = out if isinstance(out, OutputData) else OutputData(Path(out))
    chosen = data.setting(setting)
    groups = data.groups(chosen)
    if group is not None and group not in groups:
        raise DataError(f"{data.path}: setting {setting!r} has no group {group!r}; groups are: {', '.join(groups[:20])}")
    tables = []
    for name in [group] if group is not None else groups:
        table = data._read_group(chosen, name)
        if layer is not None:
            names, codes = sorted_codes(table.column("layer")) if table.num_rows else ([], np.zeros(0, np.int64))
            if layer not in names:
                raise DataError(f"{data.path}: setting {setting!r}, group {name!r} has no layer {layer!r}; layers are: {', '.join(names)}")
            table = table.take(pa.array(np.flatnonzero(codes == names.index(layer))))
        tables.append(table)
    schema = data.schema(chosen)
    if not tables:
        return schema.empty_table()
    return pa.concat_tables([t.cast(schema) if t.schema != schema else t for t in tables])


__all__ = ["DataError", "Matrix", "OutputData", "Setting", "densify", "format_version", "layer_rows", "matrix",
           "read_setting"]
