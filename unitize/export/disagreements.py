"""``unitize export OUT --to disagreements``: the disagreement regions, one row each, for adjudication.

A region (:mod:`unitize.dataset.regions`) is a maximal run of units of one
document where the annotators' values are not all equal. Per setting one CSV
and one JSON lines file, rows sorted for adjudication and shaped by
:mod:`unitize.dataset.region_rows`: group, then document, then position in the
text, then layer (item data: group, then item). Each row says which annotators
marked the region, with which labels (for 0/1 matrices the labels of the
annotator's segments there, ``marked`` when they have none; for bit masks the
layers), who marked only part of it and who marked none of it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..dataset.directory import OutputData
from ..dataset.region_rows import COLUMNS, csv_row, region_record, segment_labels, setting_regions
from ..dataset.regions import doc_texts
from ..output import csv_text
from .formats import Exported, FileNames, _write, safe_name


def export_disagreements(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    texts = doc_texts(data)
    names = FileNames()
    out = []
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    for setting in chosen:
        segments = segment_labels(data, setting)
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
