"""Helpers shared by the span-tool adapters (brat, WebAnno TSV, CoNLL BIO, doccano, Label Studio, span tables).

These formats have no connective: every record goes into one group, :data:`GROUP`,
and the RAT relation-count rule does not apply (annotators mark different
numbers of entities by nature).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Corpus, Document, InputFile, Span
from ..model.findings import finding
from ..model.text import DecodedText, DecodeError, OffsetUnit, TextConventions, utf16_to_codepoints
from ..model.traits import FormatTraits
from ._safe import InputError, load_json, offset_value
from .files import clean_name, shown_name  # noqa: F401 (clean_name: the span readers take it from here)
from .sources import Source, Unreadable

#: the one group of span-tool data
GROUP = "all"

#: how an annotation file is decoded when no offset counts into it (brat's ``.ann``), or when it holds its
#: own text (JSON, TSV, CoNLL, CSV): line breaks as they are, a UTF-8 BOM dropped (no offset counts it)
IN_FILE = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")

#: the traits every span-tool format shares: one group, the layers found, no relation-count rule
SPAN_TRAITS = FormatTraits(group_by="none", default_layers="found", count_rule=False)


def _read_bytes(path: Path, name: str, corpus: Corpus) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError as exc:
        corpus.findings.append(
            finding("file-unreadable", f"cannot read the file: {exc.strerror or exc}", "file left out; check it and its permissions", file=name)
        )
        return None


def add_input(corpus: Corpus, name: str, raw: bytes | bytearray, role: str) -> str:
    """Record an input file in the manifest list; return its sha256."""
    sha = hashlib.sha256(raw).hexdigest()
    record_input(corpus, name, len(raw), sha, role)
    return sha


def record_input(corpus: Corpus, name: str, size: int, sha256: str, role: str) -> None:
    """Record an input file (its size and sha256 counted as it was read) in the manifest list."""
    corpus.inputs.append(InputFile(path=name, role=role, size=size, sha256=sha256))


def read_input(path: Path, base: Path, corpus: Corpus, role: str) -> tuple[str, bytes | None]:
    """Read a file's bytes (recorded as an input); ``None`` and a finding when it cannot be read."""
    name = shown_name(path, base, corpus)
    raw = _read_bytes(path, name, corpus)
    if raw is not None:
        add_input(corpus, name, raw, role)
    return name, raw


def decode_file(
    raw: bytes | bytearray,
    name: str,
    corpus: Corpus,
    conventions: TextConventions = IN_FILE,
    *,
    encoding: str | None = None,
    fallback: str | None = None,
    doc: str | None = None,
) -> DecodedText | None:
    """Decode an input's bytes as ``conventions`` say (in ``encoding`` when given), or report an encoding
    error; ``None`` then."""
    encoding = encoding or conventions.encoding
    try:
        decoded = conventions.decode(raw, encoding=encoding, fallback=fallback)
    except DecodeError as exc:
        corpus.findings.append(
            finding("encoding-error", f"file {exc}", "file left out; set [input] encoding or encoding_fallback", file=name, doc=doc)
        )
        return None
    if decoded.fallback_used:
        corpus.findings.append(
            finding("encoding-fallback", f"not valid {encoding}; decoded as {decoded.encoding}", "used the fallback decoding", file=name, doc=doc)
        )
    return decoded


def read_source(source: Source, corpus: Corpus, role: str = "annotations") -> bytearray | None:
    """One input file read whole (a ZIP member inflated as it is read) and recorded as an input of ``role``; ``None``
    and a ``file-unreadable`` finding when it cannot be read."""
    try:
        raw = source.read()
    except Unreadable as exc:
        corpus.findings.append(finding("file-unreadable", str(exc), exc.action, file=source.name))
        return None
    add_input(corpus, source.name, raw, role)
    return raw


def decoded_sources(
    sources: Iterable[Source], corpus: Corpus, conventions: TextConventions, *, encoding: str | None = None, role: str = "annotations"
) -> Iterator[tuple[Source, DecodedText]]:
    """Each input file of ``role`` read whole, one at a time (:func:`read_source`), and decoded; a file that cannot be
    read or decoded is reported and passed over."""
    for source in sources:
        raw = read_source(source, corpus, role)
        if raw is None:
            continue
        decoded = decode_file(raw, source.name, corpus, conventions, encoding=encoding)
        del raw  # the text is what is read from here on
        if decoded is not None:
            yield source, decoded


def text_document(doc_id: str, text: str, source: str, **kw: Any) -> Document:
    """A document whose text came from inside an annotation file or table (sha256 of its UTF-8,
    unless ``kw`` gives the file's own)."""
    data = text.encode("utf-8")
    fields: dict[str, Any] = {"encoding": "utf-8", "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), **kw}
    return Document(doc_id=doc_id, text=text, source=source, **fields)


def bad_span(annotator: str, doc: str, record: str, layer: str, label: str | None, source: str, line: int | None) -> Span:
    """A span whose offsets could not be read: counted (offsets -1), reported by its adapter."""
    return Span(annotator, doc, GROUP, record, layer, 0, -1, -1, label=label, source=source, line=line)


def malformed(corpus: Corpus, source: str, line: int | None, message: str, action: str = "line left out; correct it", **where: str | None) -> None:
    """Report a record (line) an adapter could not parse."""
    corpus.findings.append(finding("record-malformed", message, action, file=source, record=None if line is None else f"line {line}", **where))



def selected(corpus: Corpus, wanted: set[str] | None, who: str) -> bool:
    """Whether annotator ``who`` is in the annotators selection ``wanted`` (``None``: every annotator); one who is
    not is counted in ``corpus.skipped_by_selection`` and named in ``corpus.not_selected``."""
    if wanted is None or who in wanted:
        return True
    corpus.skipped_by_selection += 1
    corpus.not_selected.add(who)
    return False


def first_record(
    corpus: Corpus, seen: dict[tuple[str, str], str], wanted: set[str] | None, doc: str, who: str, source: str, record: str,
    left_out: str = "record left out",
) -> bool:
    """Whether a record of (``doc``, ``who``) is read (``record`` names it in ``source``: ``line 3``, ``doc 2``): its
    annotator :func:`selected` and no earlier record for the pair in ``seen`` (else a ``duplicate-record``, the
    action ``left_out``); ``seen`` is updated."""
    if not selected(corpus, wanted, who):
        return False
    if (doc, who) in seen:
        corpus.findings.append(finding("duplicate-record", f"document {doc} again for annotator {who} (first in {seen[(doc, who)]})",
                                       left_out, file=source, record=record, doc=doc, group=GROUP, annotator=who))
        return False
    seen[(doc, who)] = source
    return True


def put_document(corpus: Corpus, doc: str, text: str, source: str, **kw: Any) -> None:
    """Add a document whose text came inside an annotation file; a later, different copy is reported."""
    seen = corpus.documents.get(doc)
    if seen is None or seen.text is None:
        corpus.documents[doc] = text_document(doc, text, source, **kw)
    elif seen.text != text:
        corpus.findings.append(
            finding("text-copy-differs", f"the text of {doc} in {source} differs from the one in {seen.source}",
                    f"offsets checked against {seen.source}", file=source, doc=doc)
        )


def to_codepoints(text: str, offsets: list[int], unit: OffsetUnit) -> list[int]:
    """Offsets in ``unit`` (``codepoint`` or ``utf16``) as code points of ``text``."""
    if unit == "codepoint" or not offsets:
        return offsets
    return utf16_to_codepoints(text, np.asarray(offsets, dtype=np.int64)).tolist()


def is_offset(value: Any) -> bool:
    """A usable offset from JSON: a non-negative integer (not a bool), bounded (see :func:`~unitize.adapters._safe.offset_value`)."""
    return offset_value(value) is not None


def json_lines(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, object) of every non-blank line of a JSON Lines text; (line, the error) for a line that is not JSON."""
    for number, line in enumerate(_lines(text), 1):
        if line.strip():
            try:
                yield number, load_json(line)
            except InputError as exc:
                yield number, exc


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` (split at line feeds) one at a time, never all at once."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]
