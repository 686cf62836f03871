"""Write WebAnno / INCEpTION TSV 3.3: ``annotations/annotation/<doc>/<user>.tsv`` (the project export layout).

One file per annotator and document. The header declares one span layer per layer written
(``#T_SP=webanno.custom.<Layer>|value``); a sentence is a line of the text that begins with a
token, and a line that does not (blank, or starting with a space) goes with the sentence before
it, so the ``#Text=`` lines rebuild the text exactly — INCEpTION's reader ends it with a line
break, which a text without one gains (``text-changed``). Token rows ``sent-tok<TAB>begin-end``
count **UTF-16 code units**; the tokens are the document's own when its format gave them, else the
study tokenizer's (a zero-width token anchors a text that begins with a space). A span is its
tokens plus sub-token rows (``1-3.1``) where it cuts a token or lies between tokens, joined by a
``[N]`` id when it spans rows or is stacked; ``*`` is no label. Discontinuous spans and labels
with a TAB or line break are reported, not written.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.webanno_tsv import _SKIP_DIRS, TEXT
from ..model import Corpus, Span
from ..model.findings import finding
from ..model.text import codepoints_to_utf16
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts, by_submission, word_tokens
from .holds import holdable, not_held
from .offsets import TargetText

TRAITS = WriterTraits(discontinuous=False, label=r"[^\t\n\r]*", text="sentences")
_LAYER = re.compile(r"^[\w-]+$")
_RESERVED = re.compile(r"(->|[\\\[\]|_;*\t\n])")
#: what a ``#Text=`` line escapes, as INCEpTION's TSV 3.x writer does (``Escaping.escapeText``): the backslash and
#: the control characters with a short escape; ``[ ] | _ ; * ->`` are escaped in token forms and values only
TEXT_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\b": "\\b"}
_TEXT_RESERVED = re.compile("[" + re.escape("".join(TEXT_ESCAPES)) + "]")

#: a row: (token index, begin, end) in code points of the text; sub-token rows have begin/end inside or beside the token
Row = tuple[int, int, int]


def escape(value: str) -> str:
    """A feature value or token form with TSV's reserved characters escaped."""
    return _RESERVED.sub(lambda m: "\\" + m.group(1), value)


def escape_text(line: str) -> str:
    """A ``#Text=`` line as INCEpTION writes it: a backslash doubled, TAB, LF, CR, FF and BS as ``\\t \\n \\r \\f \\b``."""
    return _TEXT_RESERVED.sub(lambda m: TEXT_ESCAPES[m.group()], line)


def _sentence_starts(text: str, starts: list[int]) -> list[int]:
    """Where the sentences begin: 0, and every line start that is a token start."""
    token_starts = set(starts)
    return [0] + [p + 1 for p, ch in enumerate(text) if ch == "\n" and p + 1 in token_starts and p + 1 < len(text)]


def _rows_of(b: int, e: int, starts: list[int], ends: list[int]) -> list[Row]:
    """The rows that make the span ``[b, e)``: its whole tokens, sub-tokens where it cuts one, zero-width rows at a
    begin or end between tokens (a row at position ``p`` belongs to the last token starting at or before ``p``,
    which is in the sentence of ``p``)."""

    def owner(p: int) -> int:
        return bisect.bisect_right(starts, p) - 1

    rows: list[Row] = []
    first = int(np.searchsorted(ends, b, side="right"))
    for t in range(first, len(starts)):
        if starts[t] >= e:
            break
        rows.append((t, max(b, starts[t]), min(e, ends[t])))
    if not rows or rows[0][1] != b:
        rows.insert(0, (owner(b), b, b))
    if rows[-1][2] != e:
        rows.append((owner(e), e, e))
    return rows


def _document(view: TargetText, tokens: tuple[np.ndarray, np.ndarray], elements: list[list[Span]], layers: list[str]) -> tuple[str, int]:
    """The TSV file of one annotator's document, and how many spans it holds."""
    text = view.text
    as_cp = replace(view, conventions=replace(view.conventions, offsets="codepoint"))
    tok = as_cp.convert(np.column_stack(tokens).ravel() if len(tokens[0]) else np.zeros(0, np.int64)).reshape(-1, 2)
    starts, ends = tok[:, 0].tolist(), tok[:, 1].tolist()
    if text and (not starts or starts[0] != 0):
        starts, ends = [0, *starts], [0, *ends]  # a zero-width anchor: the first sentence starts at 0
    sentences = _sentence_starts(text, starts) if text else []
    spans = as_cp.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
    cells: dict[Row, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    rows_of = [_rows_of(b, e, starts, ends) for b, e in spans]
    stacked: dict[tuple[Row, str], int] = defaultdict(int)
    for frags, rows in zip(elements, rows_of):
        for row in rows:
            stacked[(row, frags[0].layer)] += 1
    next_id = 0
    for k, (frags, rows) in enumerate(zip(elements, rows_of)):
        layer, label = frags[0].layer, frags[0].label
        needs_id = len(rows) > 1 or label == "" or any(stacked[(row, layer)] > 1 for row in rows)
        if needs_id:
            next_id += 1
        value = "*" if label is None else escape(label)
        for row in rows:
            cells[row][layer].append((k, value + (f"[{next_id}]" if needs_id else "")))
    token_rows: dict[int, list[Row]] = defaultdict(list)
    for row in cells:
        if row != (row[0], starts[row[0]], ends[row[0]]):
            token_rows[row[0]].append(row)
    flat = [p for t in range(len(starts)) for p in (starts[t], ends[t])] + [p for rows in token_rows.values() for r in rows for p in r[1:]]
    utf16 = dict(zip(flat, codepoints_to_utf16(text, np.asarray(flat, dtype=np.int64)).tolist()))
    bounds = sentences[1:] + [len(text)]
    out = ["#FORMAT=WebAnno TSV 3.3", *(f"#T_SP=webanno.custom.{layer}|value" for layer in layers), "", ""]
    t = 0
    for s, (begin, end) in enumerate(zip(sentences, bounds), 1):
        body = text[begin:end]
        body = body[:-1] if body.endswith("\n") else body
        out += [f"#Text={escape_text(line)}" for line in body.split("\n")]
        n = 0
        while t < len(starts) and starts[t] < end:
            n += 1
            whole = (t, starts[t], ends[t])
            out.append(_row(f"{s}-{n}", whole, text, utf16, cells.get(whole, {}), layers))
            for sub, row in enumerate(sorted(token_rows.get(t, ()), key=lambda r: (r[1], r[2])), 1):
                out.append(_row(f"{s}-{n}.{sub}", row, text, utf16, cells[row], layers))
            t += 1
        out.append("")
    return "\n".join(out) + "\n", len(elements)


def _row(ident: str, row: Row, text: str, utf16: dict[int, int], cells: dict[str, list[tuple[int, str]]], layers: list[str]) -> str:
    columns = ["|".join(v for _, v in sorted(cells.get(layer, []))) or "_" for layer in layers]
    return "\t".join([ident, f"{utf16[row[1]]}-{utf16[row[2]]}", escape(text[row[1] : row[2]]), *columns]) + "\t"


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as WebAnno TSV 3.3 files, one per annotator and document, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "webanno-tsv")
    written.take(held)
    bad = [s for s in held.spans if not _LAYER.match(s.layer)]
    for frags in {(s.annotator, s.doc_id, s.group, s.record, s.layer): [s] for s in bad}.values():
        written.findings.append(not_held("webanno-tsv", frags, "its layer name is not a TSV layer name (letters, digits, _ and - only)"))
    spans = [s for s in held.spans if _LAYER.match(s.layer)]
    layers = sorted({s.layer for s in spans})
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    changed: set[str] = set()
    for (annotator, doc), elements in by_submission(corpus, spans).items():
        view = texts.get(doc)
        if view is None:
            continue
        document = corpus.documents[doc]
        folder = written.names("documents", doc)
        if folder in _SKIP_DIRS:
            written.findings.append(
                finding("not-convertible", f"document id {doc!r} cannot be a folder of the export", "its annotations were not written",
                        doc=doc, annotator=annotator)
            )
            continue
        if not view.text and elements:
            written.findings += [not_held("webanno-tsv", frags, "its document is empty, with no token to hold it") for frags in elements]
            elements = []
        data, n = _document(view, word_tokens(document, source.get("tokenizer")), elements, layers)
        name = f"annotations/annotation/{folder}/{written.names('annotators', annotator)}.tsv"
        target.file(name).write_text(data, encoding="utf-8", newline="\n")
        target.record(name, n)
        written.add_file("annotations")
        written.spans += n
        written.relations += n
        if view.text and not view.text.endswith("\n") and doc not in changed:
            changed.add(doc)
            written.findings.append(
                finding("text-changed", f"document {doc} does not end with a line break; INCEpTION's TSV reader ends every text with one",
                        "written; the text read back has one more character, a line break after the last", doc=doc)
            )
    written.study = {"format": "webanno-tsv", "annotations": "annotations"}
    written.unitize["tokenizer"] = "given"
    return written


TARGET = Target("webanno-tsv", "WebAnno / INCEpTION TSV 3.3, annotation/<doc>/<user>.tsv (UTF-16 offsets)", write, TRAITS, reads_as="webanno-tsv")
