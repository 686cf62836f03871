"""Span tables: the relational shape crowd platforms export (CSV or Parquet).

Three tables, columns named by the ``columns`` mapping:

- **texts** (``texts``): one row per document — ``doc``, ``text``;
- **roster** (``roster``, optional): one row per assignment — ``key``, ``doc``,
  ``annotator``. An annotator on the roster with no span on that document has
  *not annotated* it (zeros), which is not the same as *missing* (no row at all);
- **spans** (``annotations``): one row per span — ``label``, ``begin``, ``end``, and
  either ``key`` (a roster row) or ``doc`` and ``annotator`` (without a roster,
  the annotators of a document are those with a span on it).

Offsets are code points of the text cell, ``end`` exclusive. ToxicSpans
(``comments.csv``, ``annotations.csv``, ``spans.csv``) reads with
``columns = {doc = "comment_id", text = "comment_text", annotator = "worker",
key = "annotation", label = "type", begin = "start", end = "end"}``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ..cells import value as cell_value
from ..model import Corpus, Document, SpanStream
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import SPREADSHEET_SAFE_HELP, InputError, csv_source, offset_value, parse_offset, read_parquet
from ._spans import GROUP, SPAN_TRAITS, decode_file, malformed, read_input, text_document
from .span_rows import RowBatch, SpanRows
from .suggest import TABLE_SUFFIXES, find, read_sample, tables

#: the texts are cells of a table (its BOM dropped); offsets are code points of a cell
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")
#: column mapping defaults: role -> column name
COLUMNS = {"doc": "doc_id", "text": "text", "annotator": "annotator", "key": "key", "label": "label", "begin": "begin", "end": "end"}


def _rows(path: Path, base: Path, corpus: Corpus, role: str, needed: list[str],
          spreadsheet_safe: bool = False) -> Iterator[tuple[int, dict[str, Any]]] | None:
    """(line or row number, row) of a CSV or Parquet table; ``None`` (and a finding) when unusable.
    ``spreadsheet_safe``: CSV cells were written by :func:`unitize.cells.cell` (read back with their values)."""
    name, raw = read_input(path, base, corpus, role)
    if raw is None:
        return None
    if path.suffix.lower() == ".parquet":
        try:
            header, table_rows = read_parquet(io.BytesIO(raw))
        except InputError as exc:
            corpus.findings.append(finding("file-unreadable", str(exc), "table left out", file=name))
            return None
        rows: Iterator[tuple[int, dict[str, Any]]] = ((i + 1, r) for i, r in enumerate(table_rows))
    else:
        decoded = decode_file(raw, name, corpus, TEXT)
        if decoded is None:
            return None
        reader = csv.DictReader(csv_source(decoded.text))
        header = list(reader.fieldnames or [])
        rows = ((reader.line_num, r) for r in reader)
        if spreadsheet_safe:
            header = [cell_value(h) for h in header]
            reader.fieldnames = header
            rows = ((n, {k: cell_value(v) if isinstance(v, str) else v for k, v in r.items()}) for n, r in rows)
    missing = [c for c in needed if c not in header]
    if missing:
        corpus.findings.append(
            finding(
                "file-unreadable",
                f"{role} table lacks the mapped column(s) {', '.join(missing)}; its columns are {', '.join(map(str, header)) or 'none'}",
                "table left out; set [input] columns (e.g. columns = {doc = \"...\"})",
                file=name,
            )
        )
        return None
    return rows


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _offset(value: Any) -> int | None:
    """A CSV cell (text) or Parquet value (integer, or a float holding one) as an offset, else ``None``."""
    if isinstance(value, str):
        return parse_offset(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return offset_value(value)


def read(
    *,
    annotations: Path,
    texts: Path,
    roster: str | None = None,
    columns: dict[str, str] | None = None,
    layer: str,
    annotators: list[str] | None = None,
    spreadsheet_safe: bool,
    base: Path | None = None,
    progress: Progress | None = None,
    stream: bool = False,
) -> Corpus:
    """Read a spans table (``annotations``), a texts table and an optional roster table.

    ``stream``: the spans are held as arrays (:mod:`.span_rows`) and the corpus's
    :class:`~unitize.model.SpanStream` makes them into spans a batch of whole documents at a time."""
    base = Path(base) if base is not None else Path.cwd()
    unknown = set(columns or {}) - set(COLUMNS)
    if unknown:
        raise AdapterError(f"[input] columns: unknown role(s) {', '.join(sorted(unknown))}; roles are {', '.join(COLUMNS)}")
    paths = {"annotations": Path(annotations), "texts": Path(texts)}
    if roster is not None:
        paths["roster"] = base / roster
    for role, path in paths.items():
        if not path.is_file():
            raise AdapterError(f"{role} table not found: {path}")
    tables = _Tables(Corpus(format="span-table"), {**COLUMNS, **(columns or {})}, base, spreadsheet_safe, set(annotators) if annotators else None,
                     SpanRows(GROUP, layer))
    tables.read_texts(paths["texts"])
    if roster is not None:
        tables.read_roster(paths["roster"])
    tables.read_spans(paths["annotations"], layer, progress or no_progress, rostered=roster is not None)
    return tables.finish(stream)


@dataclass
class _Tables:
    """The tables of one study read in turn: texts, the roster (when given), spans; who annotated what."""

    corpus: Corpus
    col: dict[str, str]
    base: Path
    spreadsheet_safe: bool
    wanted: set[str] | None
    #: the spans kept and who was assigned (or annotated) which document
    rows: SpanRows
    #: roster key -> its assignment's index in ``rows``, or -1 (a duplicate row, or an annotator not selected)
    keys: dict[str, int] = field(default_factory=dict)
    #: duplicate roster rows: key -> [finding, spans left out]
    duplicates: dict[str, list] = field(default_factory=dict)

    def read_texts(self, path: Path) -> None:
        col, corpus = self.col, self.corpus
        text_rows = _rows(path, self.base, corpus, "text", [col["doc"], col["text"]], self.spreadsheet_safe)
        texts_name = corpus.inputs[-1].path if corpus.inputs else str(path)
        for line, row in text_rows or ():
            doc = _str(row[col["doc"]])
            if doc in corpus.documents:
                corpus.findings.append(
                    finding("duplicate-text", f"a second text row for document {doc}", "the first row used", file=texts_name, record=f"line {line}", doc=doc)
                )
                continue
            corpus.documents[doc] = text_document(doc, _str(row[col["text"]]), texts_name)

    def read_roster(self, path: Path) -> None:
        col, corpus, keys = self.col, self.corpus, self.keys
        corpus.assigned = True
        roster_rows = _rows(path, self.base, corpus, "roster", [col["key"], col["doc"], col["annotator"]], self.spreadsheet_safe)
        roster_name = corpus.inputs[-1].path
        for line, row in roster_rows or ():
            key, doc, who = _str(row[col["key"]]), _str(row[col["doc"]]), _str(row[col["annotator"]])
            if self.wanted is not None and who not in self.wanted:
                keys[key] = -1
                corpus.skipped_by_selection += 1
                corpus.not_selected.add(who)
                continue
            if key in keys or self.rows.assigned(doc, who):
                what = f"key {key} appears twice" if key in keys else f"annotator {who} has a second assignment for document {doc}"
                report = finding("duplicate-record", f"roster {what}", "this roster row and its spans left out (the first is used)",
                                 file=roster_name, record=f"line {line}", doc=doc, group=GROUP, annotator=who)
                corpus.findings.append(report)
                if key not in keys:
                    keys[key] = -1
                    self.duplicates[key] = [report, 0]
                continue
            keys[key] = self.rows.assign(doc, who, roster_name)

    def read_spans(self, path: Path, layer: str, progress: Progress, *, rostered: bool) -> None:
        col, corpus = self.col, self.corpus
        needed = [col["label"], col["begin"], col["end"]] + ([col["key"]] if rostered else [col["doc"], col["annotator"]])
        span_rows = _rows(path, self.base, corpus, "annotations", needed, self.spreadsheet_safe)
        name = self.rows.source = corpus.inputs[-1].path if span_rows is not None else ""
        for line, row in progress(span_rows or (), "reading spans"):
            owner = self._owner(row, name, line, rostered)
            if owner is None:
                continue
            label = _str(row[col["label"]]).strip() or None
            begin, end = _offset(row[col["begin"]]), _offset(row[col["end"]])
            if begin is None or end is None:
                begin = end = -1  # counted, and reported
                doc, who = self.rows.owner(owner)
                corpus.findings.append(finding(
                    "offset-invalid", f"begin {_str(row[col['begin']])[:40]!r} / end {_str(row[col['end']])[:40]!r} are not non-negative integers",
                    "span left out", file=name, record=f"line {line}", doc=doc, group=GROUP, annotator=who, layer=layer,
                ))
            self.rows.add(owner, label, begin, end, line)

    def _owner(self, row: dict[str, Any], name: str, line: int, rostered: bool) -> int | None:
        """The assignment (its index in ``rows``) of a span row, or ``None`` when the row is left out (reported, or not
        selected)."""
        col = self.col
        if rostered:
            key = _str(row[col["key"]])
            if key not in self.keys:
                malformed(self.corpus, name, line, f"span row names roster key {key!r}, which the roster does not have", "span left out")
                return None
            owner = self.keys[key]
            if owner < 0:  # reported with its roster row, or not selected
                if key in self.duplicates:
                    self.duplicates[key][1] += 1
                return None
            return owner
        doc, who = _str(row[col["doc"]]), _str(row[col["annotator"]])
        if self.wanted is not None and who not in self.wanted:
            self.corpus.skipped_by_selection += 1
            self.corpus.not_selected.add(who)
            return None
        return self.rows.assign(doc, who, name)

    def finish(self, stream: bool) -> Corpus:
        """The spans and submissions (one per document and annotator) — or, ``stream``, the batches that make them —,
        every document they name, the duplicates' span counts."""
        corpus, rows = self.corpus, self.rows
        for report, n in self.duplicates.values():
            report.action = f"this roster row and its {n} span(s) left out (the first row is used)"
        for doc in rows.documents:
            corpus.documents.setdefault(doc, Document(doc_id=doc, text=None))
        if stream and rows.documents:
            kinds = frozenset((rows.layer, label) for label in rows.labels)
            corpus.stream = SpanStream(rows.annotators, [partial(RowBatch.corpus, batch, corpus.format) for batch in rows.batches()], kinds=kinds)
            return corpus
        for batch in rows.batches(0):
            whole = batch.corpus(corpus.format)
            corpus.spans, corpus.submissions = whole.spans, whole.submissions
        return corpus


def suggest(folder: Path, given: dict[str, Any]) -> dict[str, Any]:
    """For ``unitize init``: which table of ``folder`` holds the spans, the texts and the roster, and the
    column of every role (names that differ from :data:`COLUMNS`)."""
    found: dict[str, tuple[Path, list[str]]] = {}
    for role in ("annotations", "texts", "roster"):
        if role in given:
            path = Path(given[role])
            found[role] = (path, read_sample(path)[0] if path.is_file() else [])
    for path in tables(folder, TABLE_SUFFIXES):
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


ADAPTER = Adapter(
    suffixes=(".csv", ".tsv", ".parquet"),
    name="span-table",
    text=TEXT,
    description="span tables (CSV or Parquet): texts, optional roster of assignments, spans — crowd exports such as ToxicSpans",
    read=read,
    options={
        "annotations": Option("path", None, "the spans table: label, begin, end and a roster key (or doc and annotator)", example="spans.csv", required=True),
        "texts": Option("path", None, "the texts table: doc and text", example="texts.csv", required=True),
        "roster": Option(
            "path", None, "optional roster table (key, doc, annotator): who was assigned which document; no spans = not annotated", example="roster.csv"
        ),
        "columns": Option(
            "table",
            None,
            "column names per role (doc, text, annotator, key, label, begin, end) where they differ from the role",
            example={"doc": "comment_id", "text": "comment_text", "annotator": "worker", "begin": "start"},
        ),
        "layer": Option("str", "span", "layer name of the spans", example="toxic"),
        "annotators": Option("list", None, "only these annotators", example=["868", "1316"]),
        "spreadsheet_safe": Option("bool", False, SPREADSHEET_SAFE_HELP),
    },
    traits=replace(SPAN_TRAITS, layers=("span",), streams=True),
    suggest=suggest,
)
