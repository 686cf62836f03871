"""An output directory's datasets and each one's setting, as its files describe them: the manifest's format
version, the part files of every setting, and a setting read from its first part's ``unitize`` schema metadata."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .. import layouts
from ..errors import DataError
from ..layouts import WIDE
from ..schema import DATASETS, FORMAT_VERSION
from .model import LEVELS, Setting


def format_version(manifest: dict[str, Any], path: Path) -> int:
    """The output format of a directory (1 when the manifest does not say); a newer one than this unitize reads is refused."""
    version = manifest.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DataError(f"{path}: manifest.json has an unknown format_version {version!r}")
    if version > FORMAT_VERSION:
        raise DataError(
            f"{path} was written by unitize format {version}; this unitize reads formats 1–{FORMAT_VERSION}: upgrade unitize"
        )
    return version


def dataset_parts(path: Path, version: int) -> dict[str, list[Path]]:
    """Per setting name (sorted) its part files in order: ``<folder>/setting=<name>/part-*.parquet`` for the
    folders of :data:`~unitize.schema.DATASETS` (format 3: ``units/``, ``labels/``, ``long/``; format 2: all in
    ``units/``) or ``units/<name>/part-0.parquet`` (format 1)."""
    out: dict[str, list[Path]] = {}
    if version >= 2:
        for folder in DATASETS if version >= 3 else ("units",):
            for part in sorted((Path(path) / folder).glob("setting=*/part-*.parquet")):
                name = part.parent.name.removeprefix("setting=")
                if name in out and out[name][0].parent != part.parent:
                    raise DataError(f"{path}: setting {name!r} is in two folders ({out[name][0].parent}, {part.parent})")
                out.setdefault(name, []).append(part)
    else:
        for part in sorted((Path(path) / "units").glob("*/part-0.parquet")):
            out[part.parent.name] = [part]
    return dict(sorted(out.items()))


def _metadata(schema: pa.Schema, path: Path) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(b"unitize")
    if raw is None:
        raise DataError(f"{path}: no 'unitize' schema metadata; was it written by unitize?")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: unreadable 'unitize' schema metadata: {exc}") from None


def _columns(layout: layouts.Layout, kind: str) -> tuple[str, ...]:
    """The columns of a table of no annotator in a layout (the contracts in ``schemas/``)."""
    schema = layout.items_schema([], {}) if kind == "items" else layout.units_schema([], {})
    return tuple(schema.names)


def read_setting(path: Path, parts: Sequence[Path] = (), schema: pa.Schema | None = None) -> Setting:
    """Describe one unit-matrix dataset from the schema metadata of its first part ``path`` (``schema``: already read)."""
    if schema is None:
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{path} cannot be read: {exc}") from None
    meta = _metadata(schema, path)
    kind = meta.get("kind", "units")
    name = meta.get("layout", WIDE.name)  # format 1: every table was wide
    layout = layouts.LAYOUTS.get(name)
    if kind not in ("units", "items") or layout is None or (kind == "items" and layout.items_dataset is None):
        raise DataError(f"{path}: unknown kind {kind!r} or layout {name!r}")
    mode = meta.get("mode")
    value = meta.get("value") or ("label" if kind == "items" else "bitmask" if mode == "combined" else "binary")
    keys = _columns(WIDE, kind)  # the key columns: a columnar table without annotators
    if not layout.columnar:
        expected = _columns(layout, kind)
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
    layers = tuple(meta.get("layers") or ())
    if layout.implicit_rows and not layers:
        raise DataError(f"{path}: a {layout.name} table needs its layers in the metadata")
    return Setting(
        name=path.parent.name.removeprefix("setting="),
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
        parts=tuple(parts) or (path,),
        layers=layers,
    )
