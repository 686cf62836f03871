"""``unitize export OUT --to disagreements``: the disagreement regions, one row each, for adjudication.

A region (:mod:`unitize.dataset.regions`) is a maximal run of units of one
document where the annotators' values are not all equal. Per setting one CSV
and one JSON lines file, rows sorted for adjudication: group, then document, then
position in the text, then layer (item data: group, then item). Each row says
which annotators marked the region, with which labels (for 0/1 matrices the
labels of the annotator's segments there, ``marked`` when they have none; for
bit masks the layers), who marked only part of it and who marked none of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..dataset.directory import OutputData, Setting
from ..dataset.regions import Region, SegmentLabels, doc_texts, regions, setting_cells
from .formats import Exported, FileNames, _write, csv_text, safe_name

#: the columns of the CSV file (the JSON lines add ``marks``: annotator -> [[label, begin, end], ...])
COLUMNS = ("setting", "group", "doc", "layer", "begin", "end", "unit_begin", "unit_end", "text",
           "marked_by", "partial", "not_marked_by", "labels")


def setting_regions(data: OutputData, setting: Setting, groups: list[str] | None = None) -> list[Region]:
    """Every region of a setting in adjudication order (group, document, position, layer)."""
    out: list[tuple[tuple, Region]] = []
    layer_rank = {layer: i for i, layer in enumerate(data.layers)}
    for c in setting_cells(data, setting, groups):
        doc_rank = {d: i for i, d in enumerate(c.docs)}
        for r in regions(c):
            key = (r.group, doc_rank[r.doc], r.begin if r.begin is not None else 0, r.end or 0, layer_rank.get(r.layer, len(layer_rank)), r.layer)
            out.append((key, r))
    out.sort(key=lambda x: x[0])
    return [r for _, r in out]


def region_record(r: Region, setting: Setting, text: str | None, segments: SegmentLabels) -> dict[str, Any]:
    """One region as an export row (lists and mappings kept; :func:`csv_row` flattens them)."""
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


def csv_row(record: dict[str, Any]) -> list[Any]:
    flat = dict(record)
    for key in ("marked_by", "partial", "not_marked_by"):
        flat[key] = ", ".join(record[key])
    flat["labels"] = "; ".join(f"{a}={'/'.join(v)}" for a, v in record["labels"].items())
    return ["" if flat[k] is None else flat[k] for k in COLUMNS]


def export_disagreements(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    texts = doc_texts(data)
    names = FileNames()
    out = []
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    for setting in chosen:
        units = setting.unit if setting.kind == "units" and setting.value == "binary" else None
        segments = SegmentLabels(data.segments(units) if units is not None else None)
        records = [region_record(r, setting, texts.get(r.doc), segments) for r in setting_regions(data, setting, groups)]
        stem = safe_name(setting.name)
        for suffix in (".csv", ".jsonl"):
            relative = names.take((setting.name, suffix), ".", stem, suffix).removeprefix("./")
            if suffix == ".csv":
                body = csv_text([COLUMNS, *(csv_row(rec) for rec in records)])
            else:
                body = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)
            _write(dest, relative, body)
            out.append(Exported(relative, setting.name, "*", "*", len(records), 0, "one row per disagreement region"))
    return out
