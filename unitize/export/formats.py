"""The export formats: one function per format, each writing its files and returning them."""

from __future__ import annotations

import contextlib
import csv
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..cells import rows as neutral_rows
from ..dataset.directory import Matrix, OutputData, Setting
from ..errors import DataError
from ..metrics.backends import category_counts, complete_rows
from ..names import file_name
from ..output import atomic_write_text, csv_text

FORMATS = ("rat", "reliability-csv", "long-csv", "nltk", "pygamma", "fleiss-table", "disagreements")
POSITIONS = ("units", "chars")


@dataclass
class Exported:
    """One file written by an export."""

    path: str  # relative to the export folder
    setting: str
    group: str
    layer: str
    rows: int
    left_out: int = 0
    note: str = ""


def safe_name(name: str) -> str:
    """A group or layer name as part of a file name, distinct for distinct names (:func:`unitize.names.file_name`:
    readable names as they are, the rest percent-encoded, a long one cut and hashed)."""
    return file_name(name, _PART_BYTES)


#: bytes of a name in an export's file name (``<group>_asis_…_<layer>.dat`` holds two)
_PART_BYTES = 96


class FileNames:
    """Hands out the files of one export, one per (setting, group, layer), never twice.

    Two keys whose names still meet — parts joined with ``_``, or names that differ
    only in case on a case-insensitive file system — get a hash of their key.
    """

    def __init__(self) -> None:
        self._owner: dict[str, tuple[str, ...]] = {}

    def take(self, key: tuple[str, ...], folder: str, stem: str, suffix: str) -> str:
        relative = f"{folder}/{stem}{suffix}"
        owner = self._owner.setdefault(relative.casefold(), key)
        if owner != key:
            digest = hashlib.sha1("\x00".join(key).encode("utf-8")).hexdigest()[:8]
            relative = f"{folder}/{stem}~{digest}{suffix}"
            if self._owner.setdefault(relative.casefold(), key) != key:  # pragma: no cover - a SHA-1 collision
                raise RuntimeError(f"two exports meet at {relative}")
        return relative


def crowd_refusal(fmt: str, setting: Setting, annotators: int) -> DataError:
    """The error for a format that needs a line or column per annotator over every unit, on crowd data."""
    return DataError(
        f"{setting.name}: crowd data ({annotators:,} annotators, a few per unit) has no {fmt} form "
        f"(one line per annotator over every unit); export long-csv or nltk (a row per unit and annotator) "
        f"or fleiss-table (category counts per unit) instead"
    )


def refuse_crowd(fmt: str, data: OutputData, settings: Iterable[Setting], groups: list[str] | None) -> None:
    """Refuse crowd data for a format of a line per annotator before any matrix is read, where the unit universe
    tells which groups are (:meth:`~unitize.dataset.directory.OutputData.crowd_groups`); elsewhere the matrix tells."""
    for setting in settings:
        crowd = data.crowd_groups(setting, groups)
        if crowd:
            raise crowd_refusal(fmt, setting, next(iter(crowd.values())))  # the first group's, as the matrices come


def _write(dest: Path, relative: str, text: str) -> None:
    path = dest / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)


def _unit_settings(data: OutputData, settings: list[str] | None) -> list[Setting]:
    return [data.setting(s) for s in settings] if settings else data.settings


def _complete(m: Matrix) -> tuple[np.ndarray, np.ndarray]:
    """Rows every annotator with data coded, and which annotators those are."""
    cols = ~np.all(np.isnan(m.values), axis=0) if m.values.size else np.zeros(len(m.annotators), bool)
    return complete_rows(m.values), cols


def export_rat(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    names = FileNames()
    # the RAT format is 0/1 per unit; bit masks and labels have no RAT form
    chosen = [s for s in _unit_settings(data, settings) if s.kind == "units" and s.value == "binary"]
    refuse_crowd("RAT .dat", data, chosen, groups)
    for setting in chosen:
        for group, mats in data.by_group(setting, groups):
            crowd = [m.crowd for m in mats if m.crowd is not None]
            if crowd:
                raise crowd_refusal("RAT .dat", setting, crowd[0])
            # per layer (and None: the layers together) its complete rows and their annotators
            parts: list[tuple[Matrix | None, np.ndarray, np.ndarray]] = [(m, *_complete(m)) for m in mats]
            if len(mats) > 1:
                same = all(list(p[2]) == list(parts[0][2]) for p in parts)
                if same:
                    both = np.concatenate([p[1] for p in parts])
                    parts.append((None, both, parts[0][2]))
            for m, rows, cols in parts:
                layer = m.layer if m is not None else "Both" + "".join(x.layer for x in mats)
                annotators = [a for a, c in zip(mats[0].annotators, cols) if c]
                stem = f"{safe_name(group)}_asis_{setting.unit}_{setting.approach}_{len(annotators)}_{safe_name(layer)}"
                relative = names.take((setting.name, group, layer), setting.name, stem, ".dat")
                text = "".join(" ".join(str(int(v)) for v in rows[:, k]) + "\n" for k in range(rows.shape[1]))
                _write(dest, relative, text)
                total = sum(x.values.shape[0] for x in mats) if m is None else m.values.shape[0]
                out.append(Exported(relative, setting.name, group, layer, rows.shape[0], total - rows.shape[0], "annotators: " + " ".join(annotators)))
    return out


def export_reliability(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    files = FileNames()
    chosen = _unit_settings(data, settings)
    refuse_crowd("reliability-csv", data, chosen, groups)
    for setting in chosen:
        for group, mats in data.by_group(setting, groups):
            for m in mats:
                if m.crowd is not None:
                    raise crowd_refusal("reliability-csv", setting, m.crowd)
                names = m.item_names()
                lines: list[list[object]] = [["coder", *names]]
                for k, a in enumerate(m.annotators):
                    col = m.values[:, k]
                    lines.append([a, *("" if np.isnan(v) else m.label(v) for v in col)])
                relative = files.take((setting.name, group, m.layer), setting.name, f"{safe_name(group)}_{safe_name(m.layer)}", ".csv")
                _write(dest, relative, csv_text(lines))
                out.append(Exported(relative, setting.name, group, m.layer, len(m.annotators)))
    return out


def _triples(m: Matrix) -> Iterator[tuple[str, str, str]]:
    names = m.item_names()
    for k, a in enumerate(m.annotators):
        col = m.values[:, k]
        for i in np.nonzero(~np.isnan(col))[0]:
            yield a, names[i], m.label(col[i])


#: long tables are written in slices of this many rows
_LONG_SLICE = 1 << 16


def _long_triples(setting: Setting, table: pa.Table) -> Iterator[tuple[str, Iterable[tuple[str, str, str]]]]:
    """A long table's (layer, triples) as stored: one per row with a value (not applicable counts as none)."""
    value = pc.cast(table.column("value"), pa.string())
    keep = pc.is_valid(value)
    if setting.not_applicable is not None:
        keep = pc.and_(keep, pc.not_equal(value, setting.not_applicable))
    parts = [table.column("group")]
    parts += [table.column("item")] if setting.kind == "items" else [table.column("doc_id"), pc.cast(table.column("unit"), pa.string())]
    item = pc.binary_join_element_wise(*parts, "/")
    rows = pa.table({"layer": table.column("layer") if "layer" in table.column_names else pa.nulls(table.num_rows, pa.string()),
                     "coder": table.column("annotator"), "item": item, "label": value}).filter(keep)
    layers = rows.column("layer")
    for layer in (pc.unique(layers).to_pylist() if rows.num_rows else []):
        mine = rows.filter(pc.equal(layers, layer)) if layer is not None else rows

        def triples(mine: pa.Table = mine) -> Iterator[tuple[str, str, str]]:
            for start in range(0, mine.num_rows, _LONG_SLICE):
                chunk = mine.slice(start, _LONG_SLICE)
                yield from zip(*(chunk.column(c).to_pylist() for c in ("coder", "item", "label")))

        yield (layer if layer is not None else "items"), triples()


def export_long(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None, nltk: bool) -> list[Exported]:
    """Triples in one file per (setting, layer): long layouts written as stored, wide ones melted."""
    out = []
    names = FileNames()
    for setting in _unit_settings(data, settings):
        with contextlib.ExitStack() as files:  # every layer's file stays open until the setting is written
            triples_of = _TripleFiles(dest, names, setting.name, nltk,
                                      lambda path: files.enter_context(open(path, "w", encoding="utf-8", newline="")))
            if not setting.layout.columnar:
                for _, table in data.stored_tables(setting, groups):
                    for layer, triples in _long_triples(setting, table):
                        triples_of.write(layer, triples)
            else:
                for _, mats in data.by_group(setting, groups):
                    for m in mats:
                        triples_of.write(m.layer, _triples(m))
        out += [Exported(relative, setting.name, "*", layer, count) for layer, (relative, count) in triples_of.written.items()]
    return out


class _TripleFiles:
    """One (coder, item, label) file per layer of a setting, opened on the layer's first triples."""

    def __init__(self, dest: Path, names: FileNames, setting: str, nltk: bool, opener: Callable[[Path], TextIO]):
        self.dest, self.names, self.setting, self.nltk, self.opener = dest, names, setting, nltk, opener
        self.writers: dict[str, Any] = {}
        self.written: dict[str, tuple[str, int]] = {}  # layer -> (relative path, rows)

    def write(self, layer: str, triples: Iterable[tuple[str, str, str]]) -> None:
        if layer not in self.writers:
            relative = self.names.take((self.setting, "*", layer), self.setting, safe_name(layer), ".tsv" if self.nltk else ".csv")
            (self.dest / relative).parent.mkdir(parents=True, exist_ok=True)
            self.writers[layer] = csv.writer(self.opener(self.dest / relative), delimiter="\t" if self.nltk else ",", lineterminator="\n")
            if not self.nltk:
                self.writers[layer].writerow(("coder", "item", "label"))
            self.written[layer] = (relative, 0)
        relative, count = self.written[layer]
        for chunk in _batched(triples, _LONG_SLICE):
            self.writers[layer].writerows(chunk if self.nltk else neutral_rows(chunk))
            count += len(chunk)
        self.written[layer] = (relative, count)


def _batched(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _fleiss_rows(m: Matrix) -> tuple[list[str], list[list[object]], int, str]:
    """(categories, one row of counts per unit with a full set of raters, units left out, note)."""
    crowd = m.value_counts()
    if crowd is not None:
        # crowd data: a unit's raters are whoever coded it; Fleiss needs one number of raters, the usual one
        counts, domain = crowd
        per_unit = counts.sum(axis=1)
        raters = int(np.bincount(per_unit).argmax()) if per_unit.size else 0
        keep = np.flatnonzero(per_unit == raters) if raters else np.zeros(0, dtype=np.int64)
        used = np.flatnonzero(counts[keep].sum(axis=0) > 0)
        names = np.array(m.item_names(), dtype=object)[keep]
        rows = [[n, *r.tolist()] for n, r in zip(names, counts[keep][:, used])]
        return [m.label(domain[c]) for c in used], rows, per_unit.size - keep.size, f"raters per unit: {raters} (crowd: {m.crowd:,} annotators)"
    full, cols = _complete(m)
    counts, cats = category_counts(full)
    names = np.array(m.item_names(), dtype=object)[~np.any(np.isnan(m.values[:, cols]), axis=1)] if m.values.size else []
    rows = [[n, *r.tolist()] for n, r in zip(names, counts)]
    return [m.label(c) for c in cats], rows, m.values.shape[0] - full.shape[0], f"raters per unit: {int(cols.sum())}"


def export_fleiss(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    names = FileNames()
    for setting in _unit_settings(data, settings):
        for group, mats in data.by_group(setting, groups):
            for m in mats:
                categories, rows, left, note = _fleiss_rows(m)
                relative = names.take((setting.name, group, m.layer), setting.name, f"{safe_name(group)}_{safe_name(m.layer)}", ".csv")
                _write(dest, relative, csv_text([["item", *categories], *rows]))
                out.append(Exported(relative, setting.name, group, m.layer, len(rows), left, note))
    return out


#: a group whose continuum holds more segments than this is exported a file per document by default (pygamma's
#: gamma does not finish on a continuum of a few thousand units)
PER_DOCUMENT_ABOVE = 500


def export_pygamma(data: OutputData, dest: Path, groups: list[str] | None, positions: str, per_document: bool | None = None) -> list[Exported]:
    """One CSV per (unit, group) — every document laid end to end — or, with ``per_document`` (default: when a
    group has more than :data:`PER_DOCUMENT_ABOVE` segments), one per (unit, group, document), positions from 0."""
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {', '.join(POSITIONS)}")
    docs_path = data.path / "documents.parquet"
    if not docs_path.is_file():
        raise DataError(f"{data.path} has no documents.parquet (needed to lay documents end to end)")
    docs = pq.read_table(docs_path, columns=["doc_id", "chars", "tokens"]).to_pylist()
    out = []
    names = FileNames()
    units = sorted({s.unit for s in data.settings if s.kind == "units" and s.unit})
    for unit in units:
        table = data.segments(unit)
        if table is None or table.num_rows == 0:
            continue
        size_key = "chars" if positions == "chars" or unit == "char" else "tokens"
        size = {d["doc_id"]: d[size_key] or 0 for d in docs}
        by_label = any(s.value == "label" for s in data.settings if s.unit == unit)
        rows = table.to_pylist()
        key_b, key_e = ("begin", "end") if positions == "chars" else ("unit_begin", "unit_end")
        note = f"positions: {positions if unit == 'word' else 'chars'}"
        for group in sorted({r["group"] for r in rows}):
            if groups is not None and group not in groups:
                continue
            mine = [r for r in rows if r["group"] == group]
            doc_ids = sorted({r["doc_id"] for r in mine})
            split = per_document if per_document is not None else len(mine) > PER_DOCUMENT_ABOVE
            continua = [(d, [r for r in mine if r["doc_id"] == d], {d: 0}) for d in doc_ids] if split else [(None, mine, _laid_end_to_end(doc_ids, size))]
            for doc, segments, base in continua:
                lines, dropped = [], 0
                for r in sorted(segments, key=lambda r: (r["annotator"], r["layer"], r["doc_id"], r["unit_begin"])):
                    b, e = base[r["doc_id"]] + r[key_b], base[r["doc_id"]] + r[key_e]
                    if e <= b:
                        dropped += 1
                        continue
                    category = (r["label"] or r["layer"]) if by_label else r["layer"]
                    lines.append((r["annotator"], category, b, e))
                if doc is None:
                    relative = names.take((unit, group), unit, safe_name(group), ".csv")
                else:
                    relative = names.take((unit, group, doc), f"{unit}/{safe_name(group)}", safe_name(doc), ".csv")
                _write(dest, relative, csv_text(lines))
                out.append(Exported(relative, unit, group, "*", len(lines), dropped, note + (f"; document {doc}" if doc is not None else "")))
    return out


def _laid_end_to_end(doc_ids: list[str], size: dict[str, int]) -> dict[str, int]:
    """Each document's first position when the documents follow each other on one continuum."""
    base, at = {}, 0
    for d in doc_ids:
        base[d] = at
        at += size.get(d, 0)
    return base
