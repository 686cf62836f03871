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

from pathlib import Path

from ..dataset.directory import OutputData
from ..dataset.region_rows import RegionFiles, RegionRows, region_batches
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
        with RegionFiles(dest / csv_path, dest / jsonl_path) as written:
            for batch in region_batches(data, setting, groups):
                for records in rows.records(batch):
                    written.write(records)
        count = written.rows
        out += [Exported(relative, setting.name, "*", "*", count, 0, "one row per disagreement region") for relative in (csv_path, jsonl_path)]
    return out
