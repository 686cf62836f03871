"""Guesses for ``unitize init``: options read off the headers of a data folder's tables.

Each ``suggest_*`` function takes the data folder and the options known so far
(what the user gave) and returns further options; it never changes what was
given and reads only table headers and a few rows. A guess is a starting point
written into a commented study file, so the rules are plain name matches.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

#: how many rows of a table the guesses look at
SAMPLE_ROWS = 200
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet")
LABEL_SUFFIXES = TABLE_SUFFIXES + (".json", ".jsonl", ".ndjson")

#: column names (lower case) that usually play a role, best first
NAMES = {
    "doc": ("doc_id", "doc", "document_id", "comment_id", "text_id", "post_id", "tweet_id", "sentence_id", "id"),
    "text": ("text", "comment_text", "document", "content", "body", "sentence", "tweet", "post"),
    "annotator": ("annotator", "worker", "worker_id", "_worker_id", "annotator_id", "rater", "rater_id", "coder", "user", "user_id"),
    "key": ("key", "annotation", "annotation_id", "assignment", "assignment_id"),
    "label": ("label", "type", "category", "tag", "class", "entity"),
    "begin": ("begin", "start", "start_offset", "char_start", "span_start", "from"),
    "end": ("end", "stop", "end_offset", "char_end", "span_end", "to"),
    "item": ("id", "item", "item_id", "itemid", "doc_id", "text_id", "sentence_id", "comment_id", "tweet_id", "post_id", "key"),
}
#: cell values that usually mean "not labelled"
MISSING = ("-", "?", "NA", "N/A", "n/a", "NaN", "null", "NULL", "None")
#: columns of free text, not labels
FREE_TEXT = ("text", "comment_text", "sentence", "content", "body", "tweet", "post", "title", "comment", "comments", "note", "notes", "remark", "remarks")


def read_sample(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """The column names and the first rows of a CSV, TSV, Parquet, JSON or JSON-lines table."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        rows = next(parquet.iter_batches(batch_size=SAMPLE_ROWS), None)
        return names, rows.to_pylist() if rows is not None else []
    text = path.read_bytes()[: 1 << 20].decode("utf-8", errors="replace").removeprefix("\ufeff")
    if suffix in (".json", ".jsonl", ".ndjson"):
        records: list[Any] = []
        if suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8-sig"))
            except (ValueError, UnicodeDecodeError):
                data = []
            records = list(data.values()) if isinstance(data, dict) else data if isinstance(data, list) else []
        else:
            for line in text.splitlines()[:SAMPLE_ROWS]:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
        rows = [r for r in records[:SAMPLE_ROWS] if isinstance(r, dict)]
        return list(dict.fromkeys(k for r in rows for k in r)), rows
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if suffix in (".tsv", ".tab") else ",")
    header = next(reader, [])
    rows = []
    for row in reader:
        if len(rows) == SAMPLE_ROWS:
            break
        rows.append(dict(zip(header, row)))
    return header, rows


def find(columns: list[str], role: str, *, exclude: tuple[str, ...] = ()) -> str | None:
    """The column that plays ``role`` by its name (case-insensitive), or ``None``."""
    lowered = {c.lower(): c for c in reversed(columns) if c not in exclude}
    return next((lowered[name] for name in NAMES[role] if name in lowered), None)


def _tables(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes and not p.name.startswith("."))


def _free_text(column: str, rows: list[dict[str, Any]]) -> bool:
    if column.lower() in FREE_TEXT:
        return True
    values = [str(r.get(column) or "") for r in rows]
    return bool(values) and sum(map(len, values)) / len(values) > 40


def suggest_span_table(folder: Path, given: dict[str, Any]) -> dict[str, Any]:
    """Which table of ``folder`` holds the spans, the texts and the roster, and the column of every role."""
    from .span_table import COLUMNS

    found: dict[str, tuple[Path, list[str]]] = {}
    for role in ("annotations", "texts", "roster"):
        if role in given:
            path = Path(given[role])
            found[role] = (path, read_sample(path)[0] if path.is_file() else [])
    for path in _tables(folder, TABLE_SUFFIXES):
        if any(path == p for p, _ in found.values()):
            continue
        header = read_sample(path)[0]
        if find(header, "begin") and find(header, "end"):
            role = "annotations"
        elif find(header, "text"):
            role = "texts"
        elif find(header, "annotator"):
            role = "roster"
        else:
            continue
        found.setdefault(role, (path, header))
    out: dict[str, Any] = {role: path for role, (path, _) in found.items() if role not in given}
    spans = found.get("annotations", (None, []))[1]
    texts = found.get("texts", (None, []))[1]
    roster = found.get("roster", (None, []))[1]
    text = find(texts, "text")
    columns = {"text": text, "doc": find(texts, "doc", exclude=(text or "",)) or next((c for c in texts if c != text), None)}
    columns |= {role: find(spans, role) for role in ("label", "begin", "end")}
    if roster:
        shared = [c for c in spans if c in roster and c != columns["doc"]]
        columns["key"] = find(shared, "key") or (shared[0] if shared else None)
        columns["annotator"] = find(roster, "annotator")
    else:
        columns["annotator"] = find(spans, "annotator")
    mapping = {role: columns[role] for role in COLUMNS if columns.get(role) and columns[role] != COLUMNS[role]}
    if mapping and "columns" not in given:
        out["columns"] = mapping
    return out


def suggest_labels(folder: Path, given: dict[str, Any]) -> dict[str, Any]:
    """The shape, the item column and the label columns of the label files in ``folder``."""
    target = Path(given.get("annotations", folder))
    files = _tables(target, LABEL_SUFFIXES)
    if not files:
        return {}
    out: dict[str, Any] = {}
    if "annotations" not in given:
        out["annotations"] = files[0] if len(files) == 1 else target
    columns, rows = read_sample(files[0])
    item = given.get("item") or find(columns, "item") or next((c for c in columns if c.lower().endswith("id")), None) or (columns[0] if columns else None)
    if item is None:
        return out
    if "item" not in given:
        out["item"] = item
    free = [c for c in columns if c != item and _free_text(c, rows)]
    annotator = given.get("annotator") or (None if len(files) > 1 else find(columns, "annotator", exclude=(item,)))
    shape = given.get("shape") or ("per-annotator" if len(files) > 1 else "long" if annotator else "wide")
    if "shape" not in given:
        out["shape"] = shape
    rest = [c for c in columns if c not in (item, annotator) and c not in free]
    if shape == "wide":
        if free and "ignore" not in given:
            out["ignore"] = free
        return out
    if annotator and "annotator" not in given and shape != "per-annotator":
        out["annotator"] = annotator
    if len(rows) >= 20:  # a column of distinct values in every row is a record id, not a label
        rest = [c for c in rest if len({r.get(c) for r in rows}) < len(rows)]
    if rest and "labels" not in given:
        out["labels"] = rest
    for path in files[1:20]:  # the other annotators' files may hold other tokens
        rows += read_sample(path)[1]
    tokens = sorted({str(r.get(c)).strip() for r in rows for c in out.get("labels", given.get("labels", []))} & set(MISSING))
    if tokens and "missing" not in given:
        out["missing"] = tokens
    return out
