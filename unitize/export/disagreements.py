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
from ..dataset.region_rows import COLUMNS, RegionRows, csv_row, region_batches
from ..output import csv_text, text_stream
from .formats import Exported, FileNames, safe_name


def export_disagreements(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    """Per setting its regions as CSV and JSON lines, written a batch of regions at a time (memory holds a batch)."""
    names = FileNames()
    out = []
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    for setting in chosen:
        stem = safe_name(setting.name)
        csv_path, jsonl_path = (names.take((setting.name, suffix), ".", stem, suffix).removeprefix("./") for suffix in (".csv", ".jsonl"))
        rows = RegionRows(data, setting)
        count = 0
        with text_stream(dest / csv_path) as csv_file, text_stream(dest / jsonl_path) as jsonl_file:
            csv_file.write(csv_text([COLUMNS]))
            for records in (chunk for batch in region_batches(data, setting, groups) for chunk in rows.records(batch)):
                csv_file.write(csv_text(csv_row(rec) for rec in records))
                jsonl_file.write("".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records))
                count += len(records)
        out += [Exported(relative, setting.name, "*", "*", count, 0, "one row per disagreement region") for relative in (csv_path, jsonl_path)]
    return out
