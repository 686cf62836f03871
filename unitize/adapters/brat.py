"""brat standoff: ``<doc>.txt`` + ``<doc>.ann``, one directory per annotator.

The project layout is bratiaa's: ``<annotations>/<annotator>/<path>/<doc>.{ann,txt}``
(the annotator is the first directory under ``annotations``; ``.ann`` files directly
in ``annotations`` belong to the annotator named by the ``annotator`` option). The
document id is the path below the annotator directory without the extension.

``T`` lines are spans: ``T1<TAB>Type 0 5;10 15<TAB>text`` — the type is the label,
``;`` separates the fragments of a discontinuous annotation. ``A``/``M``, ``N``
and ``#`` lines are stored in their target's attrs; ``R``, ``E`` and ``*`` lines
(relations, events, equivalences) are not spans and are stored in the attrs of
every ``T`` they name. Offsets are code points with ``end`` exclusive; the brat
server reads texts with universal newlines (``\\r\\n`` is one character), which is
the default here; ``newlines = "keep"`` counts ``\\r\\n`` as two (bratiaa's reading).
The server decodes texts with Python's ``utf8`` codec, so a UTF-8 BOM stays
character 0 and is counted (bratiaa reads it the same way); only the ``.ann``
file's BOM is dropped. Offsets of more digits than any text has are unreadable.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..model import Corpus, Document, Span, Submission
from ..model.findings import finding, span_finding
from ..model.text import NewlinePolicy, TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import parse_offset
from ._spans import (
    GROUP,
    SPAN_TRAITS,
    bad_span,
    clean_name,
    decode_file,
    malformed,
    put_document,
    read_input,
)
from .files import files_under

_ID = re.compile(r"^([A-Za-z]+|#[A-Za-z]*)([0-9]+)$")
_OFFSETS = re.compile(r"^(-?)([0-9]+) (-?)([0-9]+)$")
#: the brat server reads a ``.txt`` with universal newlines and Python's ``utf8`` codec (a BOM stays character 0)
TEXT = TextConventions(newlines="normalize", bom="keep", offsets="codepoint", suffixes=(".txt",), encoding="utf-8")
#: the ``newlines`` option: how the texts count line breaks (the default is TEXT's)
NEWLINES: dict[str, NewlinePolicy] = {"universal": "normalize", "keep": "keep"}
_ATTR_KEYS = {"A": "attributes", "M": "attributes", "N": "normalizations", "#": "notes", "R": "relations", "E": "events"}


def _fragment(text: str) -> tuple[int, int] | None:
    """``START END`` as integers (signs kept); ``None`` when not two integers an offset can be (see ``parse_offset``)."""
    m = _OFFSETS.match(text.strip())
    if m is None:
        return None
    b, e = parse_offset(m.group(2)), parse_offset(m.group(4))
    if b is None or e is None:
        return None
    return (-b if m.group(1) else b, -e if m.group(3) else e)


def _parse_ann(text: str, name: str, annotator: str, doc: str, layer: str, corpus: Corpus) -> tuple[list[Span], int]:
    """Spans of one ``.ann`` file and its number of T annotations."""
    spans: list[Span] = []
    by_id: dict[str, list[Span]] = {}
    others: list[tuple[int, str, str]] = []
    n_t = 0
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        ident, _, rest = line.partition("\t")
        ident = ident.strip()
        if ident == "*":
            others.append((number, "equivalences", rest))
            continue
        if not _ID.match(ident) or not rest:
            malformed(corpus, name, number, f"not a brat annotation line: {line[:60]!r}", doc=doc, annotator=annotator)
            continue
        if not ident.startswith("T"):
            others.append((number, ident, rest))
            continue
        n_t += 1
        made, readable = _text_bound(ident, rest, number, name, annotator, doc, layer, corpus)
        spans.extend(made)
        if readable:
            by_id[ident] = made
    _attach(others, by_id)
    return spans, n_t


def _text_bound(ident: str, rest: str, number: int, name: str, annotator: str, doc: str, layer: str, corpus: Corpus) -> tuple[list[Span], bool]:
    """The fragments of one T annotation as spans, and whether its offsets could be read (if not: one unplaced span, a finding)."""
    middle, _, stored = rest.partition("\t")
    label, _, offsets = middle.strip().partition(" ")
    parsed = [_fragment(p) for p in offsets.split(";")] if offsets else [None]
    frags = [f for f in parsed if f is not None]
    if not label or len(frags) < len(parsed):
        corpus.findings.append(finding(
            "offset-invalid", f"T annotation {ident} has no readable offsets: {middle[:60]!r}",
            "annotation left out; write it as `Type START END[;START END]*`",
            file=name, record=ident, doc=doc, group=GROUP, annotator=annotator, layer=layer,
        ))
        return [bad_span(annotator, doc, ident, layer, label or None, name, number)], False
    made = []
    for i, (b, e) in enumerate(frags):
        if b < 0 or e < 0:
            b = e = -1
        made.append(Span(annotator, doc, GROUP, ident, layer, i, b, e, label=label, source=name, line=number,
                         stored_text=stored if len(frags) == 1 and stored else None))
    if any(not s.valid for s in made):
        corpus.findings.append(
            span_finding("offset-invalid", made[0], f"T annotation {ident} (line {number}) has a negative offset", "fragment left out")
        )
    ordered = sorted(f for f in frags if f[0] >= 0)
    if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
        corpus.findings.append(span_finding(
            "fragments-overlap", made[0], f"fragments {offsets} of {ident} (line {number}) overlap (brat itself rejects this)",
            "kept; the fragments are unitized as one element",
        ))
    return made, True


def _attach(others: list[tuple[int, str, str]], by_id: dict[str, list[Span]]) -> None:
    """Relations, events, attributes and equivalences onto the spans of the T annotations they name."""
    for _number, kind, rest in others:
        fields = rest.split("\t")
        head = fields[0].split()
        key = _ATTR_KEYS.get(kind[0], "equivalences")
        # events name their trigger in the first field (Type:T3), relations and equivalences list ids
        named = head if key == "events" else head[1:] if key in ("relations", "equivalences") else head[1:2]
        refs = [h.split(":", 1)[-1] for h in named]
        for ref in refs:
            for span in by_id.get(ref, ()):
                if key == "attributes":
                    span.attrs.setdefault(key, {})[head[0]] = head[2] if len(head) > 2 else True
                else:
                    span.attrs.setdefault(key, []).append(f"{kind}\t{rest}".rstrip("\t"))


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    encoding: str,
    encoding_fallback: str | None = None,
    newlines: str,
    layer: str,
    annotator: str | None = None,
    annotators: list[str] | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read a brat project: every ``.ann`` under ``annotations`` with its ``.txt`` beside it."""
    annotations = Path(annotations)
    if not annotations.is_dir():
        raise AdapterError(f"brat project directory not found: {annotations}")
    if newlines not in NEWLINES:
        raise AdapterError(f"[input] newlines must be one of {', '.join(NEWLINES)}, not {newlines!r}")
    text = replace(TEXT, newlines=NEWLINES[newlines])
    base = Path(base) if base is not None else Path.cwd()
    progress = progress or no_progress
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="brat")
    for path in progress(files_under(annotations, base, corpus, lambda n: n.endswith(".ann")), "reading annotations"):
        if not path.is_file():
            continue
        parts = path.relative_to(annotations).with_suffix("").parts
        who, doc = (parts[0], "/".join(parts[1:])) if len(parts) > 1 else (annotator or annotations.name, parts[0])
        who, doc = clean_name(who), clean_name(doc)
        if wanted is not None and who not in wanted:
            corpus.skipped_by_selection += 1
            corpus.not_selected.add(who)
            continue
        name, raw = read_input(path, base, corpus, "annotations")
        if raw is None:
            continue
        decoded = decode_file(raw, name, corpus, encoding=encoding, fallback=encoding_fallback, doc=doc)
        if decoded is None:
            continue
        spans, n_t = _parse_ann(decoded.text, name, who, doc, layer, corpus)
        corpus.spans.extend(spans)
        corpus.submissions.append(Submission(name, who, doc, GROUP, n_t))
        _read_text(path.with_suffix(".txt"), doc, base, corpus, text, encoding, encoding_fallback)
    return corpus


def _read_text(path: Path, doc: str, base: Path, corpus: Corpus, text: TextConventions, encoding: str, fallback: str | None) -> None:
    """Read an annotator's copy of a document's text; the first copy read is the document."""
    if not path.is_file():
        corpus.documents.setdefault(doc, Document(doc_id=doc, text=None))
        return
    name, raw = read_input(path, base, corpus, "text")
    if raw is None:
        return
    decoded = decode_file(raw, name, corpus, text, encoding=encoding, fallback=fallback, doc=doc)
    if decoded is None:
        return
    put_document(
        corpus,
        doc,
        decoded.text,
        name,
        encoding=decoded.encoding,
        newline=decoded.newline,
        bom=decoded.bom,
        size=len(raw),
        sha256=corpus.inputs[-1].sha256,
    )


ADAPTER = Adapter(
    suffixes=(".ann",),
    text=TEXT,
    name="brat",
    description="brat standoff .ann + .txt, one directory per annotator (bratiaa's project layout)",
    read=read,
    options={
        "annotations": Option("path", None, "brat project directory: <annotator>/<doc>.ann with <doc>.txt beside it", example="project", required=True),
        "encoding": Option("str", TEXT.encoding, "encoding of .ann and .txt files"),
        "encoding_fallback": Option("str", None, "encoding tried when a file is not valid in `encoding`", example="latin-1"),
        "newlines": Option(
            "str",
            next(name for name, policy in NEWLINES.items() if policy == TEXT.newlines),
            "universal (as the brat server counts: \\r\\n = 1) or keep (\\r\\n = 2, as bratiaa)",
            choices=tuple(NEWLINES),
        ),
        "layer": Option("str", "Entity", "layer name of the spans (T annotations)", example="NER"),
        "annotator": Option("str", None, "annotator of .ann files directly in the project directory (default: the directory's name)", example="gold"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["Lisa", "Max"]),
    },
    traits=replace(SPAN_TRAITS, layers=("Entity",)),
)
