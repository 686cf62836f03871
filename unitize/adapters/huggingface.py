"""Multi-annotator span data sets as Hugging Face ``datasets`` load them: Parquet or JSON lines, a row per document.

A row is ``{"id", "text", "annotations": [{"annotator", "spans": [{"id", "group", "layer", "label",
"start", "end"}, …]}, …]}``: the text, and per annotator the list of their spans (an empty list:
the annotator marked nothing). ``start``/``end`` are code points of ``text`` (Python string
indices), ``end`` exclusive; the fragments of a discontinuous span share its ``id``; ``group`` is
the sampling unit (``all`` when the data has one). ``annotations`` is a file (``.parquet``,
``.jsonl``) or a folder of them (``data/train.parquet``, … as ``unitize convert-format --to
huggingface`` writes them, read in name order).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..model import Corpus, Span, Submission
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, Option
from ._safe import InputError, load_json, offset_value, read_parquet
from ._spans import GROUP, SPAN_TRAITS, bad_span, decode_file, malformed, put_document, read_input, selected
from .files import input_files

#: the text is a cell of each row; offsets are code points of it
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(), encoding="utf-8")
SUFFIXES = (".parquet", ".jsonl")


def _rows(name: str, raw: bytes, corpus: Corpus) -> list[tuple[int, Any]] | None:
    """(row number, row) of a Parquet or JSON-lines file; ``None`` (and a finding) when unreadable."""
    if name.endswith(".parquet"):
        try:
            return [(i + 1, row) for i, row in enumerate(read_parquet(io.BytesIO(raw))[1])]
        except InputError as exc:
            corpus.findings.append(finding("file-unreadable", str(exc), "file left out", file=name))
            return None
    decoded = decode_file(raw, name, corpus)
    if decoded is None:
        return None
    out: list[tuple[int, Any]] = []
    for number, line in enumerate(decoded.text.split("\n"), 1):
        if line.strip():
            try:
                out.append((number, load_json(line)))
            except InputError as exc:
                malformed(corpus, name, number, f"not JSON: {exc}")
    return out


def _spans(corpus: Corpus, spans: Any, who: str, doc: str, name: str, line: int) -> int:
    """Add one annotator's spans of a row; how many elements (span ids) they make."""
    seen: dict[tuple[str, str], int] = {}
    for k, item in enumerate(spans if isinstance(spans, list) else []):
        if not isinstance(item, dict):
            malformed(corpus, name, line, f"span {k + 1} of {who} is not an object", "span left out", doc=doc, annotator=who)
            continue
        record = str(item.get("id") if item.get("id") is not None else k + 1)
        group = str(item.get("group") or GROUP)
        fragment = seen[(group, record)] = seen.get((group, record), -1) + 1
        layer, label = str(item.get("layer") or "span"), item.get("label")
        label = None if label is None else str(label)
        begin, end = offset_value(item.get("start")), offset_value(item.get("end"))
        if begin is None or end is None:
            corpus.spans.append(bad_span(who, doc, record, layer, label, name, line))
            corpus.findings.append(finding("offset-invalid", f"span {record} of {who}: start/end {item.get('start')!r}, {item.get('end')!r} "
                                           "are not non-negative integers", "span left out", file=name, record=f"line {line}", doc=doc,
                                           group=GROUP, annotator=who, layer=layer))
            continue
        corpus.spans.append(Span(who, doc, group, record, layer, fragment, begin, end, label=label, source=name, line=line))
    return len(seen)


def read(*, annotations: Path, base: Path | None = None, annotators: list[str] | None = None, progress: Progress | None = None) -> Corpus:
    """Read a multi-annotator span data set: Parquet or JSON-lines files, a row per document."""
    annotations = Path(annotations)
    base = Path(base) if base is not None else Path.cwd()
    corpus = Corpus(format="huggingface")
    files = input_files(annotations, base, corpus, lambda name: Path(name).suffix in SUFFIXES, "data set")
    wanted = set(annotators) if annotators else None
    for path in (progress or no_progress)(files, "reading annotations"):
        name, raw = read_input(path, base, corpus, "annotations")
        for line, row in (_rows(name, raw, corpus) or []) if raw is not None else []:
            if not isinstance(row, dict) or not isinstance(row.get("text"), str) or row.get("id") is None:
                malformed(corpus, name, line, "a row needs a string text and an id", "row left out")
                continue
            doc = str(row["id"])
            put_document(corpus, doc, row["text"], name)
            entries: list[Any] = row["annotations"] if isinstance(row.get("annotations"), list) else []
            for entry in entries:
                who = str(entry.get("annotator")) if isinstance(entry, dict) and entry.get("annotator") is not None else None
                if who is None:
                    malformed(corpus, name, line, "an annotation without an annotator", "annotation left out", doc=doc)
                    continue
                if not selected(corpus, wanted, who):
                    continue
                listed = entry.get("spans") if isinstance(entry.get("spans"), list) else []
                groups = {str(s.get("group") or GROUP) for s in listed if isinstance(s, dict)} or {GROUP}
                n = _spans(corpus, entry.get("spans"), who, doc, name, line)
                corpus.submissions.extend(Submission(name, who, doc, group, n) for group in sorted(groups))
    return corpus


ADAPTER = Adapter(
    suffixes=SUFFIXES,
    name="huggingface",
    text=TEXT,
    description="a multi-annotator span data set as Hugging Face datasets loads it: Parquet or JSON lines, text + per-annotator span lists",
    read=read,
    options={
        "annotations": Option("path", None, "a .parquet or .jsonl file, or a folder of them (data/train.parquet, …)", example="data",
                              required=True),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
    },
    traits=replace(SPAN_TRAITS, layers=()),
)
