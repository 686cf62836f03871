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

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model import Corpus, Document, SpanStream
from ..model.codes import places
from ..model.documents import TextTable, lacking
from ..model.findings import finding
from ..runtime.memory import give_back
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import SPREADSHEET_SAFE_HELP
from ._spans import GROUP, SPAN_TRAITS, malformed
from .span_rows import RowBatch, SpanRows
from .suggest import TABLE_SUFFIXES, find, read_sample, tables
from .table_columns import TEXT, Table, as_offsets, as_text, read_table, to_text

#: column mapping defaults: role -> column name
COLUMNS = {"doc": "doc_id", "text": "text", "annotator": "annotator", "key": "key", "label": "label", "begin": "begin", "end": "end"}


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
    # each table's transients given back before the next is read (at 200,000 texts, the roster's were 270 MiB)
    tables.read_texts(paths["texts"])
    give_back()
    if roster is not None:
        tables.read_roster(paths["roster"])
        give_back()
    tables.read_spans(paths["annotations"], layer, progress or no_progress, rostered=roster is not None)
    give_back()
    return tables.finish(stream)


@dataclass
class _Tables:
    """The tables of one study read in turn: texts, the roster (when given), spans; who annotated what. The roster and
    the spans are read a column at a time (Arrow and NumPy), a row made Python values only when a finding names it."""

    corpus: Corpus
    col: dict[str, str]
    base: Path
    spreadsheet_safe: bool
    wanted: set[str] | None
    #: the spans kept and who was assigned (or annotated) which document
    rows: SpanRows
    #: the roster's keys (distinct), and per key the index of its assignment in ``rows``, or -1 (a duplicate row, or an
    #: annotator not selected)
    keys: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    key_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    #: duplicate roster rows: key's code -> [finding, spans left out]
    duplicates: dict[int, list] = field(default_factory=dict)

    def read_texts(self, path: Path) -> None:
        col, corpus = self.col, self.corpus
        table = read_table(path, self.base, corpus, "text", [col["doc"], col["text"]], self.spreadsheet_safe, by_row_group=True)
        if table is None:
            return
        # the ids first, then the texts a piece at a time (2 M texts: 400 MB as a column, never held whole)
        docs = pa.concat_arrays([as_text(piece.columns[col["doc"]]) for piece in table.pieces(TEXT_ROWS, [col["doc"]])]
                                or [pa.array([], pa.string())])
        first = _first(pc.dictionary_encode(docs).indices.to_numpy(zero_copy_only=False))
        for r in np.flatnonzero(~first).tolist():  # a document's first row is its text
            doc = docs[r].as_py()
            corpus.findings.append(finding("duplicate-text", f"a second text row for document {doc}", "the first row used",
                                           file=table.name, record=f"line {int(table.lines_of(r, r + 1)[0])}", doc=doc))
        kept = np.flatnonzero(first)
        texts = (_taken(as_text(piece.columns[col["text"]]), np.flatnonzero(first[piece.first:piece.first + piece.num_rows]))
                 for piece in table.pieces(TEXT_ROWS))
        corpus.documents = TextTable(_taken(docs, kept), texts, table.name)

    def read_roster(self, path: Path) -> None:
        col, corpus = self.col, self.corpus
        corpus.assigned = True
        table = read_table(path, self.base, corpus, "roster", [col["key"], col["doc"], col["annotator"]], self.spreadsheet_safe)
        if table is None:
            return
        # a key's first row decides; another row of it is a duplicate
        key, doc, who = table.as_text([col["key"], col["doc"], col["annotator"]])
        self.keys, code, first_key = _sorted_codes(key)
        del key
        give_back()  # the key column (its values are the sorted keys now) and the sort's
        selected = self._selected(who)
        candidate = np.flatnonzero(selected & first_key)
        # documents and annotators coded once, over the rows that can be assignments (in the order first met, as the
        # assignments are made: a row left out is a second row of an earlier pair)
        pair = self.rows.pairs(_taken(doc, candidate), _taken(who, candidate))
        # a repeated key's row as values (a row of a pair made later: the pair's names); the columns let go before the
        # pairs are sorted and the assignments made
        rows = pa.array(np.flatnonzero(selected & ~first_key), pa.int64())
        names = {r: (d, w) for r, d, w in zip(rows.to_pylist(), doc.take(rows).to_pylist(), who.take(rows).to_pylist())}
        del doc, who, selected, rows
        give_back()  # the columns and the names' encodings
        first_pair = _first(pair)
        assigned, at_second = candidate[first_pair], np.flatnonzero(~first_pair)  # an annotator's second row for a document
        names |= {int(candidate[i]): self.rows.names_of(int(pair[i])) for i in at_second.tolist()}
        owned = pair[first_pair]
        del pair, first_pair, candidate, at_second
        give_back()  # the pairs' sort, before the assignments are made
        self.key_owner = np.full(len(self.keys), -1, np.int32)
        # the spans name a roster key: no other assignment is made
        self.key_owner[code[assigned]] = self.rows.assign_once(owned, table.name)
        del owned
        for r in sorted(names):
            (d, w), k = names[r], self.keys[int(code[r])].as_py()
            repeated = not first_key[r]
            what = f"key {k} appears twice" if repeated else f"annotator {w} has a second assignment for document {d}"
            report = finding("duplicate-record", f"roster {what}", "this roster row and its spans left out (the first is used)",
                             file=table.name, record=f"line {int(table.lines_of(r, r + 1)[0])}", doc=d, group=GROUP, annotator=w)
            corpus.findings.append(report)
            if not repeated:
                self.duplicates[int(code[r])] = [report, 0]

    def _selected(self, who: pa.Array) -> np.ndarray:
        """Per row, whether its annotator is selected; the others are counted and named in the corpus."""
        if self.wanted is None:
            return np.ones(len(who), dtype=bool)
        selected = pc.is_in(who, value_set=pa.array(sorted(self.wanted), pa.string())).to_numpy(zero_copy_only=False)
        if not selected.all():
            self.corpus.skipped_by_selection += int((~selected).sum())
            self.corpus.not_selected.update(pc.unique(who.filter(pa.array(~selected))).to_pylist())
        return selected

    def read_spans(self, path: Path, layer: str, progress: Progress, *, rostered: bool) -> None:
        col = self.col
        needed = [col["label"], col["begin"], col["end"]] + ([col["key"]] if rostered else [col["doc"], col["annotator"]])
        table = read_table(path, self.base, self.corpus, "annotations", needed, self.spreadsheet_safe, by_row_group=True)
        self.rows.source = table.name if table is not None else ""
        if table is None:
            return
        for piece in progress(table.pieces(SPAN_ROWS), "reading spans"):
            self._spans(piece, layer, rostered)
            give_back()  # the piece's columns and lookups: left to the allocators, they crept up by 120 MB at 8 M spans

    def _spans(self, table: Table, layer: str, rostered: bool) -> None:
        """One slice of the spans table, in file order: each row's assignment, label and offsets; a row left out is
        reported (an unknown roster key, unreadable offsets) or counted (a duplicate roster row's, an annotator not
        selected)."""
        col, corpus, lines = self.col, self.corpus, table.lines_of(0, table.num_rows)
        unknown = np.zeros(table.num_rows, dtype=bool)
        if rostered:
            key = as_text(table.columns[col["key"]])
            code = self._roster_codes(key)
            unknown = code < 0
            owner = np.where(unknown, -1, self.key_owner[np.maximum(code, 0)] if self.key_owner.size else -1)
            if self.duplicates:
                for k, n in zip(*np.unique(code[~unknown & (owner < 0)], return_counts=True)):
                    if int(k) in self.duplicates:
                        self.duplicates[int(k)][1] += int(n)
        else:
            doc, who = as_text(table.columns[col["doc"]]), as_text(table.columns[col["annotator"]])
            kept = np.flatnonzero(self._selected(who))
            owner = np.full(table.num_rows, -1, np.int64)
            owner[kept] = self.rows.assign(doc.take(kept), who.take(kept), table.name)
        begin, end = as_offsets(table.columns[col["begin"]]), as_offsets(table.columns[col["end"]])
        bad = (owner >= 0) & ((begin < 0) | (end < 0))
        begin[bad] = end[bad] = -1  # counted, and reported
        for r in np.flatnonzero(unknown | bad).tolist():
            if unknown[r]:
                malformed(corpus, table.name, int(lines[r]), f"span row names roster key {key[r].as_py()!r}, which the roster does not have",
                          "span left out")
                continue
            doc_id, annotator = self.rows.owner(int(owner[r]))
            shown = [to_text(table.columns[col[role]][r].as_py())[:40] for role in ("begin", "end")]
            corpus.findings.append(finding(
                "offset-invalid", f"begin {shown[0]!r} / end {shown[1]!r} are not non-negative integers", "span left out",
                file=table.name, record=f"line {int(lines[r])}", doc=doc_id, group=GROUP, annotator=annotator, layer=layer,
            ))
        kept = np.flatnonzero(owner >= 0)
        labels = pc.dictionary_encode(as_text(table.columns[col["label"]]).take(kept))
        names = [name.strip() or None for name in labels.dictionary.to_pylist()]
        self.rows.add(owner[kept], names, labels.indices.to_numpy(zero_copy_only=False).astype(np.int64), begin[kept], end[kept], lines[kept])

    def _roster_codes(self, key: pa.Array) -> np.ndarray:
        """Each span row's roster key code (-1: a key the roster does not have): the roster's keys (sorted) looked up
        among the slice's distinct ones (:func:`~unitize.model.codes.places`), not a hash of the roster's millions."""
        return places(self.keys, key, names_sorted=True)

    def finish(self, stream: bool) -> Corpus:
        """The spans and submissions (one per document and annotator) — or, ``stream``, the batches that make them —,
        every document they name, the duplicates' span counts."""
        corpus, rows = self.corpus, self.rows
        self.keys, self.key_owner = self.keys[:0], self.key_owner[:0]  # the roster's keys: the spans are read
        for report, n in self.duplicates.values():
            report.action = f"this roster row and its {n} span(s) left out (the first row is used)"
        for doc in lacking(corpus.documents, rows.document_names):
            corpus.documents[doc] = Document(doc_id=doc, text=None)
        give_back()  # the ids' hash
        if stream and len(rows.document_names):
            kinds = frozenset((rows.layer, label) for label in rows.labels)
            corpus.stream = SpanStream(rows.annotators, [partial(RowBatch.corpus, batch, corpus.format) for batch in rows.batches()], kinds=kinds)
            return corpus
        for batch in rows.batches(0):
            whole = batch.corpus(corpus.format)
            corpus.spans, corpus.submissions = whole.spans, whole.submissions
        return corpus


#: span rows read at a time
SPAN_ROWS = 1 << 20
#: texts read at a time
TEXT_ROWS = 1 << 16


def _first(codes: np.ndarray) -> np.ndarray:
    """Per row, whether it is the first row of its code."""
    first = np.zeros(codes.size, dtype=bool)
    first[np.unique(codes, return_index=True)[1]] = True
    return first


def _sorted_codes(values: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The distinct strings of ``values`` sorted, per row its code among them, and per row whether it is the first
    row of its value. By a sort, not a hash: a hash of 6 M roster keys took 760 MiB, the sort 310."""
    order = pc.array_sort_indices(values).to_numpy(zero_copy_only=False)  # stable: a value's rows in row order
    ordered = values.take(pa.array(order))
    new = np.ones(len(values), dtype=bool)
    if len(values) > 1:
        new[1:] = pc.not_equal(ordered.slice(1), ordered.slice(0, len(values) - 1)).to_numpy(zero_copy_only=False)
    distinct = ordered.filter(pa.array(new))
    del ordered
    small = np.int32 if len(values) < 1 << 31 else np.int64
    code = np.empty(len(values), dtype=small)
    code[order] = np.cumsum(new, dtype=small) - 1
    first = np.zeros(len(values), dtype=bool)
    first[order[new]] = True
    return distinct, code, first


def _taken(values: pa.Array, rows: np.ndarray) -> pa.Array:
    """The values of ``rows`` (ascending, distinct): the array itself when they are all of its rows (no copy)."""
    return values if rows.size == len(values) else values.take(pa.array(rows))


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
