"""Regions as rows for a person to read: in adjudication order, with their text and who marked what.

What ``unitize export --to disagreements`` writes and the review queue of ``unitize adjudicate``
(:mod:`unitize.adjudicate`) share: regions (:mod:`.regions`) sorted for adjudication — group, then
document, then position in the text, then layer (item data: group, then item) — and each region as
a record naming which annotators marked it, with which labels (for 0/1 matrices the labels of the
annotator's segments there, ``marked`` when they have none; for bit masks the layers), who marked
only part of it and who marked none of it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from ..output import csv_text, text_stream
from .directory import OutputData, Setting
from .pieces import Pieces, layer_pieces
from .regions import Region, regions
from .texts import Texts

#: the columns of a region's CSV row (the JSON lines add ``marks``: annotator -> [[label, begin, end], ...])
COLUMNS = ("setting", "group", "doc", "layer", "begin", "end", "unit_begin", "unit_end", "text",
           "marked_by", "partial", "not_marked_by", "labels")


T = TypeVar("T")


def ordered(data: OutputData, found: Iterable[tuple[list[str], list[T]]], region: Callable[[T], Region] | None = None) -> list[T]:
    """The regions of several (group, layer)s in adjudication order (group, document, position, layer); ``found``:
    per (group, layer) its documents in the order of its cells (:attr:`.regions.Cells.docs`; read in pieces: the
    pieces' documents one after another) and its regions (or what carries one, ``region`` says which)."""
    out: list[tuple[tuple, T]] = []
    layer_rank = {layer: i for i, layer in enumerate(data.layers)}
    of = region or _itself
    for docs, rs in found:
        doc_rank = {d: i for i, d in enumerate(docs)}
        for x in rs:
            r = of(x)
            key = (r.group, doc_rank[r.doc], r.begin if r.begin is not None else 0, r.end or 0, layer_rank.get(r.layer, len(layer_rank)), r.layer)
            out.append((key, x))
    out.sort(key=lambda x: x[0])
    return [x for _, x in out]


def _itself(x: Any) -> Any:
    """What it is given: a region is its own region, a record its own row."""
    return x


class InOrder(Generic[T]):
    """Regions (or what carries one: ``region`` says which) of a setting's (group, layer)s as they are found, let
    out in adjudication order (:func:`ordered`) as soon as nothing read later can come before them: after every
    piece of a group with one layer (item data, most crowd data), else once the group's last layer is read.
    Memory holds a piece's regions, or a group's, never the setting's."""

    def __init__(self, data: OutputData, region: Callable[[T], Region] | None = None):
        self._data, self._region = data, region
        self._found: list[tuple[list[str], list[T]]] = []
        self._at: Pieces | None = None

    def add(self, pieces: Pieces, docs: list[str], found: list[T]) -> list[T]:
        """One piece's documents and regions; what may go out now."""
        if self._at is not pieces:
            self._found.append(([], []))
            self._at = pieces
        self._found[-1][0].extend(docs)
        self._found[-1][1].extend(found)
        return self.ready(pieces, done=False)

    def ready(self, pieces: Pieces, done: bool = True) -> list[T]:
        """What may go out after a piece of ``pieces`` (``done``: after its last piece)."""
        if len(pieces.layers) > 1 and not (done and pieces.last):
            return []
        found, self._found, self._at = self._found, [], None
        return ordered(self._data, found, self._region)


def region_batches(data: OutputData, setting: Setting, groups: list[str] | None = None) -> Iterator[list[Region]]:
    """A setting's disagreement regions in adjudication order, a batch at a time (:class:`InOrder`); a crowd group
    is read a piece of whole documents at a time (:func:`.pieces.layer_pieces`), a sparse group as its stored rows."""
    order: InOrder[Region] = InOrder(data)
    for _, _, pieces in layer_pieces(data, setting, groups=groups, implicit=True):
        for c in pieces:
            if batch := order.add(pieces, c.docs, regions(c)):
                yield batch
        if batch := order.ready(pieces):
            yield batch


def setting_regions(data: OutputData, setting: Setting, groups: list[str] | None = None) -> list[Region]:
    """Every disagreement region of a setting in adjudication order (group, document, position, layer)."""
    return [r for batch in region_batches(data, setting, groups) for r in batch]


class SegmentLabels:
    """The labels of the resolved segments (``segments/<unit>.parquet``) under a character extent,
    per (group, document, layer, annotator): what a 0/1 matrix does not say about a marked region."""

    def __init__(self, table: pa.Table | None):
        self._index: dict[tuple[str, str, str, str], list[tuple[int, int, str]]] = {}
        if table is None:
            return
        columns = [table.column(c).to_pylist() for c in SEGMENT_COLUMNS]
        for g, d, layer, a, b, e, label in zip(*columns):
            if label is not None:
                self._index.setdefault((g, d, layer, a), []).append((b, e, label))

    def under(self, group: str, doc: str, layer: str, annotator: str, begin: int, end: int) -> list[str]:
        """Labels of the annotator's segments overlapping ``[begin, end)``, in text order, once each."""
        found = sorted(s for s in self._index.get((group, doc, layer, annotator), ()) if s[0] < end and s[1] > begin)
        return list(dict.fromkeys(label for _, _, label in found))


#: what :class:`SegmentLabels` reads of the segments
SEGMENT_COLUMNS = ("group", "doc_id", "layer", "annotator", "begin", "end", "label")


class RegionRows:
    """Regions of one setting as records (:func:`region_record`), a batch at a time: the texts and, for a 0/1
    setting, the segment labels of the batch's documents are looked up for it, not held for the corpus."""

    def __init__(self, data: OutputData, setting: Setting):
        self.setting = setting
        self._texts = Texts(data) if setting.kind == "units" else None
        unit = setting.unit if setting.kind == "units" and setting.value == "binary" else None
        table = data.segments(unit, columns=SEGMENT_COLUMNS) if unit is not None else None
        self._segments = table.filter(pc.is_valid(table.column("label"))) if table is not None else None

    def records(self, batch: list[Region]) -> Iterator[list[dict[str, Any]]]:
        """The batch's regions as records, in the batch's order, :data:`RECORDS` at a time."""
        for at in range(0, len(batch), RECORDS):
            chunk = batch[at:at + RECORDS]
            docs = list(dict.fromkeys(r.doc for r in chunk))
            texts = {}
            if self._texts is not None:
                texts = self._texts.of(docs)
                self._texts.let_go()  # a mapped column's pages read for these: let go
            segments = None
            if self._segments is not None:
                groups = pa.array(list(dict.fromkeys(r.group for r in chunk)), pa.string())
                segments = self._segments.filter(pc.and_(pc.is_in(self._segments.column("group"), groups),
                                                         pc.is_in(self._segments.column("doc_id"), pa.array(docs, pa.string()))))
            labels = SegmentLabels(segments)
            yield [region_record(r, self.setting, texts.get(r.doc), labels) for r in chunk]


#: regions made records at once (a record, its marks and its JSON line are held until written)
RECORDS = 4096


def region_record(r: Region, setting: Setting, text: str | None, segments: SegmentLabels) -> dict[str, Any]:
    """One region as a row (lists and mappings kept; :func:`csv_row` flattens them)."""
    marks: dict[str, list[list[Any]]] = {}
    labels: dict[str, list[str]] = {}
    for a, rs in r.runs.items():
        for value, b, e, empty in rs:
            if empty:
                continue
            named = [value]
            if setting.value == "binary" and b is not None and e is not None:
                named = segments.under(r.group, r.doc, r.layer, a, b, e) or ["marked"]
            for label in named:
                marks.setdefault(a, []).append([label, b, e])
                labels.setdefault(a, [])
                if label not in labels[a]:
                    labels[a].append(label)
    return {
        "setting": r.setting, "group": r.group, "doc": r.doc, "layer": r.layer,
        "begin": r.begin, "end": r.end, "unit_begin": r.unit_begin if r.begin is not None else None,
        "unit_end": r.unit_end if r.begin is not None else None,
        "text": text[r.begin:r.end] if text is not None and r.begin is not None else None,
        "marked_by": r.marked_by, "partial": r.partial, "not_marked_by": r.not_marked_by,
        "labels": labels, "marks": marks,
    }


def csv_row(record: dict[str, Any], columns: Iterable[str] = COLUMNS) -> list[Any]:
    """A region's record as CSV cells: annotator lists comma-joined, labels as ``a=L/M; b=N``, None empty."""
    flat = dict(record)
    for key in ("marked_by", "partial", "not_marked_by"):
        flat[key] = ", ".join(record[key])
    flat["labels"] = "; ".join(f"{a}={'/'.join(v)}" for a, v in record["labels"].items())
    return ["" if flat[k] is None else flat[k] for k in columns]


class RegionFiles:
    """Region records into a CSV file and a JSON lines file as they come, a batch at a time, each file under a
    temporary name until the block ends without an error (:func:`~unitize.output.text_stream`). ``cells`` and
    ``line`` turn a record into the CSV row's values by column and into the JSON line's object."""

    def __init__(self, csv_path: Path, jsonl_path: Path, header: Sequence[str] = COLUMNS,
                 cells: Callable[[dict[str, Any]], dict[str, Any]] = _itself, line: Callable[[dict[str, Any]], dict[str, Any]] = _itself):
        self._paths, self.header, self._cells, self._line = (csv_path, jsonl_path), tuple(header), cells, line
        self._files = contextlib.ExitStack()
        self.rows = 0

    def __enter__(self) -> Self:
        self._csv, self._jsonl = (self._files.enter_context(text_stream(p)) for p in self._paths)
        self._csv.write(csv_text([self.header]))
        return self

    def __exit__(self, *exc: Any) -> None:
        self._files.__exit__(*exc)

    def write(self, records: list[dict[str, Any]]) -> None:
        """A batch of records, in order."""
        self._csv.write(csv_text(csv_row(self._cells(r), self.header) for r in records))
        self._jsonl.write("".join(json.dumps(self._line(r), ensure_ascii=False) + "\n" for r in records))
        self.rows += len(records)
