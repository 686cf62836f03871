"""Regions as rows for a person to read: in adjudication order, with their text and who marked what.

What ``unitize export --to disagreements`` writes and the review queue of ``unitize adjudicate``
(:mod:`unitize.adjudicate`) share: regions (:mod:`.regions`) sorted for adjudication — group, then
document, then position in the text, then layer (item data: group, then item) — and each region as
a record naming which annotators marked it, with which labels (for 0/1 matrices the labels of the
annotator's segments there, ``marked`` when they have none; for bit masks the layers), who marked
only part of it and who marked none of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from .directory import OutputData, Setting
from .regions import Region, layer_pieces, regions

#: the columns of a region's CSV row (the JSON lines add ``marks``: annotator -> [[label, begin, end], ...])
COLUMNS = ("setting", "group", "doc", "layer", "begin", "end", "unit_begin", "unit_end", "text",
           "marked_by", "partial", "not_marked_by", "labels")


def ordered(data: OutputData, found: Iterable[tuple[list[str], list[Region]]]) -> list[Region]:
    """The regions of several (group, layer)s in adjudication order (group, document, position, layer); ``found``:
    per (group, layer) its documents in the order of its cells (:attr:`.regions.Cells.docs`; read in pieces: the
    pieces' documents one after another) and its regions."""
    out: list[tuple[tuple, Region]] = []
    layer_rank = {layer: i for i, layer in enumerate(data.layers)}
    for docs, rs in found:
        doc_rank = {d: i for i, d in enumerate(docs)}
        for r in rs:
            key = (r.group, doc_rank[r.doc], r.begin if r.begin is not None else 0, r.end or 0, layer_rank.get(r.layer, len(layer_rank)), r.layer)
            out.append((key, r))
    out.sort(key=lambda x: x[0])
    return [r for _, r in out]


def setting_regions(data: OutputData, setting: Setting, groups: list[str] | None = None) -> list[Region]:
    """Every disagreement region of a setting in adjudication order (group, document, position, layer); a crowd
    group is read a piece of whole documents at a time (:func:`.regions.layer_pieces`): memory holds a piece's
    cells and the regions, not the group's cells."""
    found = []
    for _, _, pieces in layer_pieces(data, setting, groups=groups, implicit=True):  # a sparse group: its stored rows
        docs: list[str] = []
        rs: list[Region] = []
        for c in pieces:
            docs += c.docs
            rs += regions(c)
        found.append((docs, rs))
    return ordered(data, found)


class SegmentLabels:
    """The labels of the resolved segments (``segments/<unit>.parquet``) under a character extent,
    per (group, document, layer, annotator): what a 0/1 matrix does not say about a marked region."""

    def __init__(self, table: pa.Table | None):
        self._index: dict[tuple[str, str, str, str], list[tuple[int, int, str]]] = {}
        if table is None:
            return
        columns = [table.column(c).to_pylist() for c in ("group", "doc_id", "layer", "annotator", "begin", "end", "label")]
        for g, d, layer, a, b, e, label in zip(*columns):
            if label is not None:
                self._index.setdefault((g, d, layer, a), []).append((b, e, label))

    def under(self, group: str, doc: str, layer: str, annotator: str, begin: int, end: int) -> list[str]:
        """Labels of the annotator's segments overlapping ``[begin, end)``, in text order, once each."""
        found = sorted(s for s in self._index.get((group, doc, layer, annotator), ()) if s[0] < end and s[1] > begin)
        return list(dict.fromkeys(label for _, _, label in found))


def segment_labels(data: OutputData, setting: Setting) -> SegmentLabels:
    """The labels of the segments under a region, for a 0/1 setting (none for other settings)."""
    units = setting.unit if setting.kind == "units" and setting.value == "binary" else None
    return SegmentLabels(data.segments(units) if units is not None else None)


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
