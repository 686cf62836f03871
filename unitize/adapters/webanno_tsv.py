"""WebAnno / INCEpTION TSV 3.x (``#FORMAT=WebAnno TSV 3.3``).

A header declares the layers (``#T_SP=`` span, ``#T_CH=`` chain, ``#T_RL=`` relation,
each followed by ``|``-separated features: one column per feature), then two empty
lines, then sentence blocks: ``#Text=`` lines and token rows
``sent-tok<TAB>begin-end<TAB>form<TAB>columns…`` (trailing TAB or not). Sub-tokens
are ``1-3.1``. Offsets are document-wide **UTF-16 code units** (converted here to
code points). In a span layer's label column, ``_`` is no annotation, ``*`` an
annotation without a value, ``A[1]|B[2]`` stacked annotations, and ``[N]`` joins the
rows of one multi-token annotation (also across sentences).

The text is rebuilt as INCEpTION's reader builds it: every ``#Text=`` line followed
by a line break, each sentence placed at its first token's offset (on the line
break ending the sentence before it, or after a gap filled with spaces), so the
text ends with a line break. A token row whose offsets are too large, jump more
than :data:`MAX_SENTENCE_GAP` past the text, or run past its sentence is reported
and left out. The file's tokens (not sub-tokens) are the word units (tokenizer
``"given"``). Annotators come from the project export layout
``annotation/<doc>/<user>.tsv``, read from a directory or from the export ZIP itself
(bounded by ``max_unzipped_mb``). Span layers become layers
(named by the last dotted part of the declared name, e.g. ``NamedEntity``) and the
label is the layer's ``value`` feature (``feature`` option), else its first feature;
chain and relation layers are not spans and are not read (reported once per file).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..model import Corpus, Document, Span, Submission
from ..model.findings import finding
from ..model.text import DecodeError, TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB
from ._spans import GROUP, SPAN_TRAITS, record_input
from .sources import Source, TextStream, Unreadable, annotation_sources
from .webanno_parse import Parsed, parse_file

#: the text is rebuilt from the file (its BOM dropped), offsets count UTF-16 code units of it
TEXT = TextConventions(newlines="keep", bom="strip", offsets="utf16", suffixes=(), encoding="utf-8")
#: export folders that hold no annotator's own annotations
_SKIP_DIRS = {"curation", "annotation_ser", "curation_ser"}


def _check_forms(text: str, cp: np.ndarray, forms: list[tuple[str, int]], name: str, corpus: Corpus, where: dict) -> None:
    """Report the first token whose form differs from the rebuilt text at its offsets (misaligned text)."""
    for (b, e), (form, line) in zip(cp.tolist(), forms):
        if text[b:e] != form:
            corpus.findings.append(
                finding(
                    "text-mismatch",
                    f"token {form!r} differs from the rebuilt text {text[b:e]!r} at {b}..{e}",
                    "kept; offsets are used (later tokens are not checked)",
                    file=name,
                    record=f"line {line}",
                    **where,
                )
            )
            return


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    encoding: str,
    feature: str | None = None,
    annotator: str,
    annotators: list[str] | None = None,
    max_unzipped_mb: float,
    progress: Progress | None = None,
) -> Corpus:
    """Read WebAnno TSV 3 files: an INCEpTION project export (directory or ZIP), a folder, or one file."""
    annotations = Path(annotations)
    if not annotations.exists():
        raise AdapterError(f"WebAnno TSV input not found: {annotations}")
    base = Path(base) if base is not None else Path.cwd()
    progress = progress or no_progress
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="webanno-tsv")
    first_text: dict[str, tuple[str, str]] = {}
    sources = annotation_sources(annotations, base, corpus, (".tsv",), max_unzipped_mb)
    for source in progress(sources, "reading annotations"):
        name, inner = source.name, source.inner
        parts = inner.split("/")
        if _SKIP_DIRS & set(parts[:-1]):
            continue
        doc, who = (parts[-2], parts[-1][: -len(".tsv")]) if len(parts) >= 2 else (parts[-1][: -len(".tsv")], annotator)
        if wanted is not None and who not in wanted:
            corpus.skipped_by_selection += 1
            corpus.not_selected.add(who)
            continue
        where = {"doc": doc, "annotator": who}
        parsed, size = _read_source(source, encoding, corpus, feature, where)
        if parsed is None:
            continue
        text = parsed.text
        _document(corpus, first_text, parsed, doc, name, size, encoding, where)
        offsets = TEXT.to_codepoints(text, np.array([(b, e) for _, _, b, e, _, _ in parsed.spans], dtype=np.int64).reshape(-1))
        for k, (layer, label, _, _, line, record) in enumerate(parsed.spans):
            corpus.spans.append(Span(who, doc, GROUP, record, layer, 0, int(offsets[2 * k]), int(offsets[2 * k + 1]), label=label, source=name, line=line))
        corpus.submissions.append(Submission(name, who, doc, GROUP, len(parsed.spans)))
    return corpus


def _document(corpus: Corpus, first_text: dict[str, tuple[str, str]], parsed: Parsed, doc: str, name: str, size: int,
              encoding: str, where: dict) -> None:
    """The document of a file's text, from the first file of that document (its tokens, as code points); a later
    file whose text differs is a ``text-copy-differs`` finding."""
    text = parsed.text
    seen = first_text.get(doc)
    if seen is not None:
        if seen[1] != text:
            corpus.findings.append(
                finding("text-copy-differs", f"the text in {name} differs from {seen[0]}", f"offsets checked against {seen[0]}", file=name, doc=doc)
            )
        return
    first_text[doc] = (name, text)
    tok = np.array(parsed.tokens, dtype=np.int64).reshape(-1, 2)
    cp = TEXT.to_codepoints(text, tok.reshape(-1)).reshape(-1, 2)
    keep = cp[:, 1] > cp[:, 0]
    _check_forms(text, cp, parsed.forms, name, corpus, where)
    corpus.documents[doc] = Document(doc_id=doc, text=text, source=name, encoding=encoding, newline="lf", size=size,
                                     sha256=corpus.inputs[-1].sha256,
                                     tokens=(np.ascontiguousarray(cp[keep, 0]), np.ascontiguousarray(cp[keep, 1])))


def _read_source(source: Source, encoding: str, corpus: Corpus, feature: str | None, where: dict) -> tuple[Parsed | None, int]:
    """Parse one TSV file as it is read and decoded (never held whole); record it as an input (when it
    could be read to its end), report a file that does not decode or cannot be read; its size in bytes."""
    stream = TextStream(source, encoding)
    mark = len(corpus.findings)
    try:
        parsed = parse_file(stream, source.name, corpus, feature, where)
        stream.finish()
    except DecodeError as exc:
        del corpus.findings[mark:]  # what the part read before the bad byte said
        try:
            stream.finish()
        except Unreadable:
            pass
        else:
            record_input(corpus, source.name, stream.size, stream.sha256(), "annotations")
        corpus.findings.append(finding("encoding-error", f"file {exc}", "file left out; set [input] encoding or encoding_fallback",
                                       file=source.name, doc=where["doc"]))
        return None, 0
    except Unreadable as exc:
        del corpus.findings[mark:]
        corpus.findings.append(finding("file-unreadable", str(exc), exc.action, file=source.name))
        return None, 0
    record_input(corpus, source.name, stream.size, stream.sha256(), "annotations")
    return parsed, stream.size


ADAPTER = Adapter(
    suffixes=(".tsv", ".zip"),
    text=TEXT,
    name="webanno-tsv",
    description="WebAnno / INCEpTION TSV 3.x: project export annotation/<doc>/<user>.tsv (directory or ZIP), offsets in UTF-16",
    read=read,
    options={
        "annotations": Option(
            "path", None, "an INCEpTION/WebAnno project export (directory or .zip), a folder of .tsv files, or one .tsv", example="export.zip",
            required=True,
        ),
        "encoding": Option("str", TEXT.encoding, "encoding of the TSV files"),
        "feature": Option("str", None, "feature whose value is the label (default: value when declared, else the layer's first feature)", example="value"),
        "annotator": Option("str", "annotator", "annotator of .tsv files not in a <doc>/<user>.tsv layout"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "max_unzipped_mb": Option(
            "float", MAX_UNZIPPED_MB, "the most an export ZIP may inflate to, in MB; larger or bomb-like members are reported, not read",
            minimum=MIN_UNZIPPED_MB, maximum=MAX_UNZIPPED_MB_LIMIT,
        ),
    },
    traits=replace(SPAN_TRAITS, tokenizer="given"),
)
