"""The export formats: one function per format, each writing its files and returning them."""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pyarrow.parquet as pq

from ..agree.backends import category_counts, complete_rows
from ..agree.data import DataError, Matrix, OutputData, Setting
from ..output import atomic_write_text

FORMATS = ("rat", "reliability-csv", "long-csv", "nltk", "pygamma", "fleiss-table")
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
    """A file-name-safe form of a group or layer name (``hem ... hem`` -> ``hem_..._hem``)."""
    cleaned = re.sub(r"[^\w.+-]+", "_", name, flags=re.UNICODE).strip("._")
    return cleaned or "_"


def _write(dest: Path, relative: str, text: str) -> None:
    path = dest / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)


def csv_text(rows: Iterable[Iterable[object]], delimiter: str = ",") -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def _unit_settings(data: OutputData, settings: list[str] | None) -> list[Setting]:
    return [data.setting(s) for s in settings] if settings else data.settings


def _complete(m: Matrix) -> tuple[np.ndarray, np.ndarray]:
    """Rows every annotator with data coded, and which annotators those are."""
    cols = ~np.all(np.isnan(m.values), axis=0) if m.values.size else np.zeros(len(m.annotators), bool)
    return complete_rows(m.values), cols


def export_rat(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    for setting in _unit_settings(data, settings):
        if setting.kind != "units" or setting.value != "binary":
            continue  # the RAT format is 0/1 per unit; bit masks and labels have no RAT form
        for group, mats in data.by_group(setting, groups):
            parts = []
            for m in mats:
                rows, cols = _complete(m)
                parts.append((m, rows, cols))
            if len(mats) > 1:
                same = all(list(p[2]) == list(parts[0][2]) for p in parts)
                if same:
                    both = np.concatenate([p[1] for p in parts])
                    parts.append((None, both, parts[0][2]))
            for m, rows, cols in parts:
                layer = m.layer if m is not None else "Both" + "".join(x.layer for x in mats)
                annotators = [a for a, c in zip(mats[0].annotators, cols) if c]
                name = f"{safe_name(group)}_asis_{setting.unit}_{setting.approach}_{len(annotators)}_{safe_name(layer)}.dat"
                relative = f"{setting.name}/{name}"
                text = "".join(" ".join(str(int(v)) for v in rows[:, k]) + "\n" for k in range(rows.shape[1]))
                _write(dest, relative, text)
                total = sum(x.values.shape[0] for x in mats) if m is None else m.values.shape[0]
                out.append(Exported(relative, setting.name, group, layer, rows.shape[0], total - rows.shape[0], "annotators: " + " ".join(annotators)))
    return out


def export_reliability(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    for setting in _unit_settings(data, settings):
        for group, mats in data.by_group(setting, groups):
            for m in mats:
                names = m.item_names()
                lines: list[list[object]] = [["coder", *names]]
                for k, a in enumerate(m.annotators):
                    col = m.values[:, k]
                    lines.append([a, *("" if np.isnan(v) else m.label(v) for v in col)])
                relative = f"{setting.name}/{safe_name(group)}_{safe_name(m.layer)}.csv"
                _write(dest, relative, csv_text(lines))
                out.append(Exported(relative, setting.name, group, m.layer, len(m.annotators)))
    return out


def _triples(m: Matrix) -> Iterator[tuple[str, str, str]]:
    names = m.item_names()
    for k, a in enumerate(m.annotators):
        col = m.values[:, k]
        for i in np.nonzero(~np.isnan(col))[0]:
            yield a, names[i], m.label(col[i])


def export_long(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None, nltk: bool) -> list[Exported]:
    """Triples streamed group by group into one file per (setting, layer), renamed into place at the end."""
    out = []
    for setting in _unit_settings(data, settings):
        files: dict[str, tuple[Path, object, object, list[int]]] = {}
        try:
            for _, mats in data.by_group(setting, groups):
                for m in mats:
                    if m.layer not in files:
                        final = dest / setting.name / f"{safe_name(m.layer)}.{'tsv' if nltk else 'csv'}"
                        final.parent.mkdir(parents=True, exist_ok=True)
                        tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
                        fh = open(tmp, "w", encoding="utf-8", newline="")
                        writer = csv.writer(fh, delimiter="\t" if nltk else ",", lineterminator="\n")
                        if not nltk:
                            writer.writerow(("coder", "item", "label"))
                        files[m.layer] = (final, fh, writer, [0])
                    _, _, writer, count = files[m.layer]
                    triples = list(_triples(m))
                    writer.writerows(triples)
                    count[0] += len(triples)
        except BaseException:
            for final, fh, _, _ in files.values():
                fh.close()
                final.with_name(f".{final.name}.tmp-{os.getpid()}").unlink(missing_ok=True)
            raise
        for final, fh, _, _ in files.values():
            fh.close()
        for layer, (final, _, _, count) in files.items():
            os.replace(final.with_name(f".{final.name}.tmp-{os.getpid()}"), final)
            out.append(Exported(str(final.relative_to(dest)), setting.name, "*", layer, count[0]))
    return out


def export_fleiss(data: OutputData, dest: Path, settings: list[str] | None, groups: list[str] | None) -> list[Exported]:
    out = []
    for setting in _unit_settings(data, settings):
        for group, mats in data.by_group(setting, groups):
            for m in mats:
                rows, cols = _complete(m)
                counts, cats = category_counts(rows)
                names = np.array(m.item_names(), dtype=object)[~np.any(np.isnan(m.values[:, cols]), axis=1)] if m.values.size else []
                lines: list[list[object]] = [["item", *(m.label(c) for c in cats)]]
                lines += [[n, *r.tolist()] for n, r in zip(names, counts)]
                relative = f"{setting.name}/{safe_name(group)}_{safe_name(m.layer)}.csv"
                _write(dest, relative, csv_text(lines))
                left = m.values.shape[0] - rows.shape[0]
                out.append(Exported(relative, setting.name, group, m.layer, rows.shape[0], left, f"raters per unit: {int(cols.sum())}"))
    return out


def export_pygamma(data: OutputData, dest: Path, groups: list[str] | None, positions: str) -> list[Exported]:
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {', '.join(POSITIONS)}")
    docs_path = data.path / "documents.parquet"
    if not docs_path.is_file():
        raise DataError(f"{data.path} has no documents.parquet (needed to lay documents end to end)")
    docs = pq.read_table(docs_path, columns=["doc_id", "chars", "tokens"]).to_pylist()
    out = []
    units = sorted({s.unit for s in data.settings if s.kind == "units" and s.unit})
    for unit in units:
        table = data.segments(unit)
        if table is None or table.num_rows == 0:
            continue
        size_key = "chars" if positions == "chars" or unit == "char" else "tokens"
        size = {d["doc_id"]: d[size_key] or 0 for d in docs}
        by_label = any(s.value == "label" for s in data.settings if s.unit == unit)
        rows = table.to_pylist()
        for group in sorted({r["group"] for r in rows}):
            if groups is not None and group not in groups:
                continue
            mine = [r for r in rows if r["group"] == group]
            doc_ids = sorted({r["doc_id"] for r in mine})
            base, at = {}, 0
            for d in doc_ids:
                base[d] = at
                at += size.get(d, 0)
            lines, dropped = [], 0
            key_b, key_e = ("begin", "end") if positions == "chars" else ("unit_begin", "unit_end")
            for r in sorted(mine, key=lambda r: (r["annotator"], r["layer"], r["doc_id"], r["unit_begin"])):
                b, e = base[r["doc_id"]] + r[key_b], base[r["doc_id"]] + r[key_e]
                if e <= b:
                    dropped += 1
                    continue
                category = (r["label"] or r["layer"]) if by_label else r["layer"]
                lines.append((r["annotator"], category, b, e))
            relative = f"{unit}/{safe_name(group)}.csv"
            _write(dest, relative, csv_text(lines))
            out.append(Exported(relative, unit, group, "*", len(lines), dropped, f"positions: {positions if unit == 'word' else 'chars'}"))
    return out
