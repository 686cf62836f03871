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

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..model import Corpus, Document, Span, Submission
from ..model.findings import finding
from ..model.text import DecodeError, TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB, parse_offset
from ._spans import GROUP, SPAN_TRAITS, malformed, record_input
from .sources import Source, TextStream, Unreadable, annotation_sources

_FORMAT = re.compile(r"^#FORMAT=WebAnno TSV (3(?:\.\d+)?)\s*$")
_KNOWN_VERSIONS = {"3", "3.1", "3.2", "3.3"}
_DECL = re.compile(r"^#(T_SP|T_CH|T_RL)=(.*)$")
_ROW = re.compile(r"^([0-9]+)-([0-9]+)(?:\.([0-9]+))?$")
_OFFSETS = re.compile(r"^([0-9]+)-([0-9]+)$")
#: the most UTF-16 units a sentence may start after the text before it (the gap is
#: filled with spaces, as INCEpTION does); a larger jump is a damaged offset
MAX_SENTENCE_GAP = 1 << 20
_ITEM_ID = re.compile(r"\[(\d+)(?:_\d+)?\]$")
#: a stacked item of a cell: escaped characters (a backslash and the next one) and any other but ``|``
_ITEM = re.compile(r"(?:\\.|[^\\|])*", re.DOTALL)
_UNESCAPE = re.compile(r"\\(->|[\\\[\]|_;*\t\n])")
#: in ``#Text=`` lines a carriage return is written ``\r`` too (undone in the same pass, so ``\\r`` stays a backslash and an r)
#: the escapes of a ``#Text=`` line, as INCEpTION's reader undoes them (``Escaping.unescapeText``): any other
#: backslash, ``\\_`` or ``\\[`` too, is text
_TEXT_UNESCAPE = re.compile(r"\\([\\tnrfb])")
_TEXT_UNESCAPED = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "f": "\f", "b": "\b"}
#: the text is rebuilt from the file (its BOM dropped), offsets count UTF-16 code units of it
TEXT = TextConventions(newlines="keep", bom="strip", offsets="utf16", suffixes=(), encoding="utf-8")
#: export folders that hold no annotator's own annotations
_SKIP_DIRS = {"curation", "annotation_ser", "curation_ser"}


def _items(cell: str) -> list[str]:
    """A cell's stacked items: split at each ``|`` that no backslash escapes (``x\\\\|PER`` is ``x\\`` and ``PER``)."""
    if "\\" not in cell:
        return cell.split("|")
    return [m.group() for m in _ITEM.finditer(cell) if m.start() == 0 or cell[m.start() - 1] == "|"]


def _item_id(item: str) -> re.Match[str] | None:
    """The ``[n]`` (or ``[n_m]``) that ends an item and is not itself escaped (an even count of backslashes
    before its ``[``: ``C:\\\\[1]`` is ``C:\\`` with id 1, ``x\\[1]`` a value without one)."""
    found = _ITEM_ID.search(item)
    if found is None:
        return None
    slashes = len(item[: found.start()]) - len(item[: found.start()].rstrip("\\"))
    return found if slashes % 2 == 0 else None


def _unescape(value: str) -> str:
    return _UNESCAPE.sub(lambda m: m.group(1), value)


def _unescape_text(line: str) -> str:
    return _TEXT_UNESCAPE.sub(lambda m: _TEXT_UNESCAPED[m.group(1)], line)


@dataclass
class _Layer:
    name: str
    kind: str
    features: list[str]
    column: int  # index of its first column after the three fixed ones
    label_column: int


@dataclass
class _Parsed:
    text: str = ""
    tokens: list[tuple[int, int]] = field(default_factory=list)  # UTF-16
    forms: list[tuple[str, int]] = field(default_factory=list)  # (form, line) of each token
    # (layer, label, begin16, end16, first line, record)
    spans: list[tuple[str, str | None, int, int, int, str]] = field(default_factory=list)


class _Text:
    """The document text as INCEpTION's TSV reader builds it (lengths in UTF-16 units).

    Every ``#Text=`` line is appended with a line break. A sentence starts at its
    first token's offset: on the line break that ended the sentence before it
    (which is then dropped), or after a gap filled with spaces. The last
    sentence keeps its line break, so the text ends with one.
    """

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length16 = 0

    def place(self, lines: list[str], begin16: int) -> str | None:
        """Append a sentence's ``#Text=`` lines at ``begin16``; why they overlap the text before them, or ``None``."""
        problem = None
        gap = begin16 - self.length16
        if gap == -1 and self.pieces and self.pieces[-1].endswith("\n"):
            self.pieces[-1] = self.pieces[-1][:-1]
            self.length16 -= 1
        elif gap < 0:
            problem = f"sentence starts at {begin16}, inside the text before it (ends at {self.length16})"
        else:
            self.pieces.append(" " * gap)
            self.length16 = begin16
        body = "".join(_unescape_text(line) + "\n" for line in lines)
        self.pieces.append(body)
        self.length16 += len(body.encode("utf-16-le")) // 2
        return problem


def _header(
    numbered: Iterator[tuple[int, str]], name: str, corpus: Corpus, feature: str | None, where: dict
) -> tuple[list[_Layer], list[tuple[int, str]]] | None:
    """The layers a file declares, and the (number, line) after the declarations (none at the end), read from ``numbered``."""
    first = next(((n, line) for n, line in numbered if line.strip()), None)
    m = _FORMAT.match(first[1]) if first is not None else None
    if first is None or m is None or m.group(1) not in _KNOWN_VERSIONS:
        versioned = m or (first is not None and first[1].startswith("#FORMAT="))
        what = "an unknown version: " + first[1].strip()[:40] if versioned and first is not None else "no #FORMAT=WebAnno TSV 3.x header"
        corpus.findings.append(
            finding("file-unreadable", f"not a WebAnno TSV 3 file ({what})", "file left out; export it as WebAnno TSV 3.x", file=name,
                    record=f"line {first[0] if first is not None else 1}", **where)
        )
        return None
    layers: list[_Layer] = []
    declarations: list[str] = []
    column = 0
    rest: list[tuple[int, str]] = []
    for number, line in numbered:
        declaration = _DECL.match(line)
        if declaration is None:
            rest = [(number, line)]
            break
        declarations.append(line)
        kind, decl = declaration.groups()
        parts = decl.split("|")
        features = parts[1:]
        width = max(len(features), 1)
        label_at = features.index(feature) if feature is not None and feature in features else features.index("value") if "value" in features else 0
        short = parts[0].rsplit(".", 1)[-1]
        layers.append(_Layer(short, kind, features, column, column + label_at))
        column += width
    names = [layer.name for layer in layers]
    for layer, decl_line in zip(layers, declarations):
        if names.count(layer.name) > 1:
            layer.name = decl_line.split("=", 1)[1].split("|", 1)[0]
    return layers, rest


def _parse(lines: Iterable[str], name: str, corpus: Corpus, feature: str | None, where: dict) -> _Parsed | None:
    """A TSV file read line by line (``lines``: its text split at line feeds, as a stream decodes it)."""
    numbered = enumerate(lines, 1)
    head = _header(numbered, name, corpus, feature, where)
    if head is None:
        return None
    layers, rest = head
    skipped = [layer.name for layer in layers if layer.kind != "T_SP"]
    if skipped:
        corpus.findings.append(
            finding("unknown-element", f"chain/relation layer(s) {', '.join(skipped)} are not spans", "not read", file=name, **where)
        )
    out = _Parsed()
    text = _Text()
    sentence: list[str] = []
    open_ids: dict[tuple[int, str], list] = {}  # (layer index, id) -> [label, b, e, line]
    record_of: dict[tuple[int, str], str] = {}
    for number, line in itertools.chain(rest, numbered):
        line = line.rstrip("\r")
        if line.startswith("#Text="):
            sentence.append(line[len("#Text=") :])
            continue
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if cells and cells[-1] == "":
            cells = cells[:-1]  # INCEpTION ends rows with a TAB
        row = _ROW.match(cells[0]) if cells else None
        offsets = _OFFSETS.match(cells[1]) if len(cells) > 1 else None
        if row is None or offsets is None:
            malformed(corpus, name, number, f"not a token row: {line[:60]!r}", **where)
            continue
        b16, e16 = parse_offset(offsets.group(1)), parse_offset(offsets.group(2))
        if b16 is None or e16 is None:
            malformed(corpus, name, number, f"token offsets {cells[1][:60]!r} are too large to be offsets", "row left out", **where)
            continue
        if sentence:
            if b16 - text.length16 > MAX_SENTENCE_GAP:
                malformed(
                    corpus, name, number,
                    f"sentence starts at {b16}, {b16 - text.length16:,} UTF-16 units after the text before it (at most {MAX_SENTENCE_GAP:,} are filled)",
                    "row left out; the sentence is placed at its next row", **where,
                )
                continue
            overlap = text.place(sentence, b16)
            if overlap:
                malformed(corpus, name, number, overlap, "offsets kept; the text may be misaligned", **where)
            sentence = []
        if e16 > text.length16:
            malformed(corpus, name, number, f"token offsets {b16}-{e16} run past the text of the sentences before them "
                      f"({text.length16} UTF-16 units)", "row left out", **where)
            continue
        if row.group(3) is None:
            out.tokens.append((b16, e16))
            out.forms.append((_unescape(cells[2]) if len(cells) > 2 else "", number))
        for li, layer in enumerate(layers):
            if layer.kind != "T_SP":
                continue
            at = 3 + layer.label_column
            cell = cells[at] if at < len(cells) else "_"
            if cell == "_" or cell == "":
                continue
            items = _items(cell)
            for k, item in enumerate(items):
                ident = _item_id(item)
                value = item[: ident.start()] if ident else item
                label = None if value == "*" else _unescape(value)
                if ident is None:
                    # stacked items without an id are separate annotations: separate records
                    record = f"line {number}" if len(items) == 1 else f"line {number}/{k + 1}"
                    out.spans.append((layer.name, label, b16, e16, number, record))
                    continue
                key = (li, ident.group(1))
                if key in open_ids:
                    entry = open_ids[key]
                    entry[1], entry[2] = min(entry[1], b16), max(entry[2], e16)
                else:
                    open_ids[key] = [label, b16, e16, number]
                    record_of[key] = f"{layer.name}[{ident.group(1)}]"
    for key, (label, b16, e16, number) in open_ids.items():
        out.spans.append((layers[key[0]].name, label, b16, e16, number, record_of[key]))
    out.text = "".join(text.pieces)
    return out


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
        seen = first_text.get(doc)
        if seen is None:
            first_text[doc] = (name, text)
            tok = np.array(parsed.tokens, dtype=np.int64).reshape(-1, 2)
            cp = TEXT.to_codepoints(text, tok.reshape(-1)).reshape(-1, 2)
            keep = cp[:, 1] > cp[:, 0]
            _check_forms(text, cp, parsed.forms, name, corpus, where)
            corpus.documents[doc] = Document(
                doc_id=doc,
                text=text,
                source=name,
                encoding=encoding,
                newline="lf",
                size=size,
                sha256=corpus.inputs[-1].sha256,
                tokens=(np.ascontiguousarray(cp[keep, 0]), np.ascontiguousarray(cp[keep, 1])),
            )
        elif seen[1] != text:
            corpus.findings.append(
                finding("text-copy-differs", f"the text in {name} differs from {seen[0]}", f"offsets checked against {seen[0]}", file=name, doc=doc)
            )
        offsets = TEXT.to_codepoints(text, np.array([(b, e) for _, _, b, e, _, _ in parsed.spans], dtype=np.int64).reshape(-1))
        for k, (layer, label, _, _, line, record) in enumerate(parsed.spans):
            corpus.spans.append(Span(who, doc, GROUP, record, layer, 0, int(offsets[2 * k]), int(offsets[2 * k + 1]), label=label, source=name, line=line))
        corpus.submissions.append(Submission(name, who, doc, GROUP, len(parsed.spans)))
    return corpus


def _read_source(source: Source, encoding: str, corpus: Corpus, feature: str | None, where: dict) -> tuple[_Parsed | None, int]:
    """Parse one TSV file as it is read and decoded (never held whole); record it as an input (when it
    could be read to its end), report a file that does not decode or cannot be read; its size in bytes."""
    stream = TextStream(source, encoding)
    mark = len(corpus.findings)
    try:
        parsed = _parse(stream, source.name, corpus, feature, where)
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
