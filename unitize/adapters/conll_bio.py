"""CoNLL-style token files with BIO tags (CoNLL-2002/2003, GermEval, crowd NER files).

One token per line, columns separated by whitespace, a blank line between
sentences, ``-DOCSTART-`` lines between documents (documents are numbered
``doc00001``, ``doc00002``, … in file order, so the files of different annotators
line up, unless a ``# newdoc id = NAME`` comment, CoNLL-U's, names them), other
``#`` comment lines ignored. The token is in ``token_column`` (default 0).

Annotators: one file per annotator (the annotator is the file name without its
extension; the tags are in ``tag_column``, default the last column), or one
column per annotator in one file (``annotator_columns = {alice = 3, bob = 4}``;
a ``?`` or empty cell means that annotator did not tag the sentence).

Schemes (``scheme``): ``iob2`` (``B-`` starts every span), ``iob1`` (``I-``
starts a span, ``B-`` only between two adjacent spans of the same type, the
original CoNLL-2003), ``bioes`` (also BILOU: ``S-``/``U-`` single, ``E-``/``L-``
end), or ``auto`` (default: BIOES when ``E-``/``S-``/``L-``/``U-`` tags occur,
IOB1 when ``I-`` starts spans and ``B-`` never follows ``O``, else IOB2). Under
IOB2, an ``I-`` that does not continue a span of its type is reported and read
as a span start. A tag without a type (``B``, ``I``) gives a span without label.

The text is rebuilt by joining a sentence's tokens with single spaces and
sentences with ``\\n``, so character units are defined too; the tokens are the
word units (tokenizer ``"given"``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..model import Corpus, Span, Submission
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._spans import (
    GROUP,
    SPAN_TRAITS,
    clean_name,
    decode_file,
    malformed,
    put_document,
    read_input,
)

SCHEMES = ("auto", "iob1", "iob2", "bioes")
_TAG = re.compile(r"^([BIESLU])(?:[-_](.+))?$")
_MISSING = {"?", ""}
#: CoNLL-U's comment that starts and names a document
_NEWDOC = re.compile(r"^#\s*newdoc\s+id\s*=\s*(.*?)\s*$")
#: the text is rebuilt from the tokens of the file (its BOM dropped); offsets are code points of it
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")


def _sentences(text: str) -> list[tuple[str | None, list[list[tuple[int, list[str]]]]]]:
    """Documents → (id, sentences → (line, columns)); a ``-DOCSTART-`` line starts a new document, and so does a
    ``# newdoc id = NAME`` comment (CoNLL-U's), which names it."""
    docs: list[tuple[str | None, list]] = [(None, [])]
    sentence: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        named = _NEWDOC.match(line) if not sentence else None
        if line.startswith("-DOCSTART-") or named:
            if sentence:
                docs[-1][1].append(sentence)
                sentence = []
            if docs[-1][1] or (named and docs[-1][0] is not None):
                docs.append((None, []))
            if named:
                docs[-1] = (named.group(1), docs[-1][1])
            continue
        if not line.strip():
            if sentence:
                docs[-1][1].append(sentence)
                sentence = []
            continue
        if line.startswith("#") and not sentence:
            continue
        sentence.append((number, line.split()))
    if sentence:
        docs[-1][1].append(sentence)
    return [d for d in docs if d[1]]


def _detect(tags: list[str]) -> str:
    prev = "O"
    i_starts = b_after_other = False
    for tag in tags:
        m = _TAG.match(tag)
        if m and m.group(1) in "ESLU":
            return "bioes"
        p = _TAG.match(prev)
        same = p is not None and p.group(2) == (m.group(2) if m else None)
        if m and m.group(1) == "I" and not same:
            i_starts = True
        if m and m.group(1) == "B" and not same:
            b_after_other = True
        prev = tag
    return "iob1" if i_starts and not b_after_other else "iob2"


def _chunks(tags: list[str], scheme: str) -> tuple[list[tuple[int, int, str | None]], list[tuple[int, str]], list[int]]:
    """Spans (first token, last token, type), tag-sequence problems (token, message), unknown tags (token)."""
    spans: list[list] = []
    problems: list[tuple[int, str]] = []
    unknown: list[int] = []
    open_span: list | None = None
    for i, tag in enumerate(tags):
        if tag == "O":
            open_span = None
            continue
        m = _TAG.match(tag)
        if m is None:
            unknown.append(i)
            open_span = None
            continue
        kind, typ = m.group(1), m.group(2)
        if kind == "I" or (kind in "EL" and scheme == "bioes"):
            if open_span is not None and open_span[2] == typ:  # it continues the open span
                open_span[1] = i
            else:
                if scheme != "iob1":
                    problems.append((i, f"{tag} does not continue a span of its type; read as a span start"))
                open_span = [i, i, typ]
                spans.append(open_span)
            if kind in "EL":
                open_span = None
        elif kind == "B" or (kind in "SU" and scheme == "bioes"):
            open_span = [i, i, typ]
            spans.append(open_span)
            if kind in "SU":
                open_span = None
        else:
            unknown.append(i)
            open_span = None
    return [tuple(s) for s in spans], problems, unknown


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    encoding: str,
    scheme: str,
    token_column: int,
    tag_column: int,
    annotator_columns: dict[str, int] | None = None,
    layer: str,
    annotators: list[str] | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read CoNLL BIO files: one per annotator, or one with a tag column per annotator."""
    annotations = Path(annotations)
    if scheme not in SCHEMES:
        raise AdapterError(f"[input] scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    if annotations.is_dir():
        files = sorted(p for p in annotations.iterdir() if p.is_file() and not p.name.startswith("."))
    elif annotations.is_file():
        files = [annotations]
    else:
        raise AdapterError(f"CoNLL input not found: {annotations}")
    if any(isinstance(c, bool) or not isinstance(c, int) for c in (token_column, tag_column)):
        raise AdapterError("[input] token_column and tag_column must be column numbers (0 = first, -1 = last)")
    if annotator_columns is not None and (
        not isinstance(annotator_columns, dict) or not all(isinstance(v, int) for v in annotator_columns.values())
    ):
        raise AdapterError("[input] annotator_columns must map annotator names to column numbers, e.g. {alice = 3}")
    base = Path(base) if base is not None else Path.cwd()
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="conll-bio")
    for path in (progress or no_progress)(files, "reading annotations"):
        name, raw = read_input(path, base, corpus, "annotations")
        if raw is None:
            continue
        decoded = decode_file(raw, name, corpus, TEXT, encoding=encoding)
        if decoded is None:
            continue
        columns = annotator_columns or {clean_name(path.stem): tag_column}
        for d, (named, sentences) in enumerate(_sentences(decoded.text), 1):
            doc = named or f"doc{d:05d}"
            _read_doc(corpus, name, doc, sentences, columns, token_column, scheme, layer, wanted)
    return corpus


def _read_doc(corpus: Corpus, name: str, doc: str, sentences: list, columns: dict[str, int], token_column: int, scheme: str,
              layer: str, wanted: set | None) -> None:
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    lines: list[int] = []
    rows: list[list[str]] = []
    at = 0
    for s, sentence in enumerate(sentences):
        if s:
            pieces.append("\n")
            at += 1
        for t, (line, cells) in enumerate(sentence):
            if t:
                pieces.append(" ")
                at += 1
            token = cells[token_column] if -len(cells) <= token_column < len(cells) else ""
            pieces.append(token)
            starts.append(at)
            at += len(token)
            ends.append(at)
            lines.append(line)
            rows.append(cells)
    text = "".join(pieces)
    put_document(corpus, doc, text, name, tokens=(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)))
    for who, column in columns.items():
        if wanted is not None and who not in wanted:
            corpus.skipped_by_selection += 1
            corpus.not_selected.add(who)
            continue
        tags = []
        for line, cells in zip(lines, rows):
            if not -len(cells) <= column < len(cells):
                malformed(corpus, name, line, f"no tag in column {column} for {who}", "token read as O", doc=doc, annotator=who)
                tags.append("O")
            else:
                tags.append(cells[column])
        if all(t in _MISSING for t in tags):
            continue  # this annotator did not tag the document
        tags = ["O" if t in _MISSING else t for t in tags]
        chunks, problems, unknown = _chunks(tags, _detect(tags) if scheme == "auto" else scheme)
        for i, message in problems:
            corpus.findings.append(finding("tag-sequence", message, "kept", file=name, record=f"line {lines[i]}", doc=doc, group=GROUP,
                                           annotator=who, layer=layer))
        for i in unknown:
            malformed(corpus, name, lines[i], f"tag {tags[i]!r} is not O, B-, I-, E-, S-, L- or U-", "token read as O", doc=doc, annotator=who)
        for first, last, typ in chunks:
            # records must differ between the annotators of one file (a record is one element)
            record = f"line {lines[first]}" if len(columns) == 1 else f"line {lines[first]}/{who}"
            corpus.spans.append(Span(who, doc, GROUP, record, layer, 0, starts[first], ends[last], label=typ, source=name, line=lines[first]))
        corpus.submissions.append(Submission(name, who, doc, GROUP, len(chunks)))


ADAPTER = Adapter(
    name="conll-bio",
    text=TEXT,
    description="CoNLL token files with BIO/IOB1/BIOES tags: one file per annotator, or one tag column per annotator",
    read=read,
    options={
        "annotations": Option(
            "path", None, "a CoNLL file, or a directory with one file per annotator (annotator = file name without extension)", example="annotations",
            required=True,
        ),
        "encoding": Option("str", TEXT.encoding, "encoding of the files"),
        "scheme": Option("str", "auto", "tagging scheme: auto, iob1, iob2 or bioes (BILOU too)", choices=SCHEMES),
        "token_column": Option("int", 0, "column of the token (0: the first)"),
        "tag_column": Option("int", -1, "column of the tags with one file per annotator (-1: the last)"),
        "annotator_columns": Option(
            "table", None, "one file, one tag column per annotator: name = column", example={"ayse": 1, "burak": 2}, item="int"
        ),
        "layer": Option("str", "Entity", "layer name of the spans", example="NER"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
    },
    traits=replace(SPAN_TRAITS, layers=("Entity",), tokenizer="given"),
)
