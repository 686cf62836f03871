"""What the PDTB-family readers share: relations, annotators, groups, span records.

A format module (``pdtb3``, ``pdtb2``, ``conll16``) declares itself once as a
:class:`RelationFormat` — the parser of its files (into :class:`Relation` objects per
document, offsets as the file gives them), its texts' conventions, which files are
annotation files, where the raw texts are by default — and :func:`relation_adapter`
makes its adapter. :func:`read_relations` does the rest the same way for every format:
annotators (one directory each, or a single input), raw texts, offset conversion,
relation type selection, grouping (connective, type, sense, none), span records and
the per-(document, group) submissions that RAT's missing-annotator and count rules
work on.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Corpus, Finding, InputFile, Span
from ..model.findings import finding
from ..model.text import TextConventions
from ..model.traits import FormatTraits
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import parse_offset
from .files import files_under, index_texts, printable, read_texts, relative
from .groups import ALL, GROUP_BY, INVISIBLE, check_grouping, group_name, submissions

#: relation layers every PDTB-family reader can give: arguments, connective,
#: supplements, and the attribution spans of the relation and of each argument
LAYERS = ("Arg1", "Arg2", "Conn", "Sup1", "Sup2", "Attr", "Arg1Attr", "Arg2Attr")
#: the traits of every PDTB-family format: one group unless asked, every layer, spans checked against word boundaries
TRAITS = FormatTraits(group_by="none", layers=LAYERS, check_boundaries=True)

_SPAN = re.compile(r"^\s*([0-9]+)\s*\.\.\s*([0-9]+)\s*$")


@dataclass
class Relation:
    """One discourse relation as a file gives it.

    ``spans`` maps a layer to its fragments, offsets in the file's own units;
    a fragment that could not be parsed is ``(-1, -1)`` (already reported).
    ``stored`` maps a layer to the text the file stores for it, if any.
    """

    record: str
    line: int | None
    type: str
    spans: dict[str, list[tuple[int, int]]]
    senses: list[str] = field(default_factory=list)
    inserted: str | None = None
    stored: dict[str, str] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedFile:
    """One annotation file: relations per document, and what could not be read."""

    relations: dict[str, list[Relation]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    size: int = 0
    sha256: str = ""
    readable: bool = True


#: parse(path, name, annotator) -> ParsedFile; ``name`` is the path shown in reports
Parser = Callable[[Path, str, str], ParsedFile]


@dataclass(frozen=True)
class RelationFormat:
    """One PDTB-family format, declared once.

    ``parse`` reads one annotation file; ``text`` are the conventions of its raw texts;
    ``glob`` is the default of the ``glob`` option (which files under an annotator's
    directory are annotation files), of which files ending in one of ``ignore`` are
    not, nor hidden files unless ``hidden``; ``texts`` is the help of the ``texts``
    option, and ``texts_beside`` the folder beside the annotations that holds the raw
    texts when the option is not given (``None``: it must be given).
    """

    name: str
    parse: Parser
    text: TextConventions
    glob: str
    texts: str
    ignore: tuple[str, ...] = ()
    hidden: bool = False
    texts_beside: str | None = None

    def files(self, directory: Path, glob: str) -> Iterator[Path]:
        """The annotation files under ``directory`` that ``glob`` names."""
        for path in directory.glob(glob):
            if path.is_file() and (self.hidden or not path.name.startswith(".")) and path.suffix.lower() not in self.ignore:
                yield path

    def options(self) -> dict[str, Option]:
        """The [input] keys every PDTB-family reader accepts, with this format's defaults and help."""
        return {
            "annotations": Option("path", None, "one annotator's annotations (a file or a directory); see also annotators", example="ann"),
            "annotators": Option(
                "toml",
                None,
                "table of annotator name -> directory (or file), each with the same relative file names",
                example={"ayse": "ann/ayse", "burak": "ann/burak"},
            ),
            "annotator": Option("str", "gold", "name of the single annotator of `annotations`"),
            "texts": Option("path", None, self.texts, example="raw"),
            "encoding": Option("str", self.text.encoding, "encoding of the raw texts"),
            "encoding_fallback": Option("str", None, "encoding tried when a raw text is not valid in `encoding`", example="latin-1"),
            "group_by": Option(
                "str", TRAITS.group_by, "the sampling unit agreement is measured over: none (one group), connective, type or sense", choices=GROUP_BY
            ),
            "sense_level": Option("int", None, "with group_by = sense: how many levels of the sense hierarchy (default: all)", example=1, minimum=1),
            "types": Option("list", None, "only these relation types (default all)", example=["Explicit", "Implicit"]),
            "groups": Option("list", None, "only these groups", example=["but", "because"]),
            "glob": Option("str", self.glob, "which files under an annotator's directory are annotation files"),
        }


def relation_adapter(
    fmt: RelationFormat,
    description: str,
    *,
    suffixes: tuple[str, ...] = (),
    read: Callable[..., Corpus] | None = None,
    options: Mapping[str, Option] | None = None,
) -> Adapter:
    """The adapter of a PDTB-family format: :func:`read_relations` over ``fmt`` (or ``read``, for a format with
    ``options`` of its own besides the common ones)."""
    return Adapter(
        name=fmt.name,
        description=description,
        read=read or partial(read_relations, fmt),
        options={**fmt.options(), **(options or {})},
        traits=TRAITS,
        suffixes=suffixes,
        text=fmt.text,
    )


def home(source: Path) -> Path:
    """The folder of an annotator's annotations (a directory, or a file's folder)."""
    return source if source.is_dir() else source.parent


def parse_span_list(
    value: str, layer: str, *, where: dict[str, Any], findings: list[Finding]
) -> list[tuple[int, int]]:
    """``b..e;b..e`` -> fragments; a malformed part becomes ``(-1, -1)`` and a finding."""
    value = value.strip()
    if not value:
        return []
    out: list[tuple[int, int]] = []
    for i, part in enumerate(value.split(";")):
        m = _SPAN.match(part)
        begin, end = (parse_offset(m.group(1)), parse_offset(m.group(2))) if m else (None, None)
        if begin is None or end is None:
            findings.append(
                finding(
                    "offset-invalid",
                    f"{layer} span {i + 1} (line {where.get('line')}): {part[:60]!r} is not of the form begin..end "
                    "(two integers, no longer than any offset can be)",
                    "span left out; write it as two integers joined by '..'",
                    **{k: v for k, v in where.items() if k != "line"},
                    layer=layer,
                )
            )
            out.append((-1, -1))
        else:
            out.append((begin, end))
    return out


def read_bytes_for(path: Path, name: str, annotator: str) -> tuple[bytes | None, ParsedFile]:
    """A file's bytes, with its size and sha256 filled in; ``None`` (and a finding) when unreadable or empty."""
    out = ParsedFile()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.readable = False
        out.findings.append(
            finding("file-unreadable", f"cannot read the file: {exc.strerror or exc}", "file skipped; check its permissions", file=name, annotator=annotator)
        )
        return None, out
    out.size = len(raw)
    out.sha256 = hashlib.sha256(raw).hexdigest()
    return raw, out


def _annotator_sources(
    annotations: Path | None, annotators: dict[str, Path] | list[str] | None, annotator: str
) -> dict[str, Path]:
    if isinstance(annotators, dict):
        if annotations is not None:
            raise AdapterError("give either [input] annotations (one annotator) or an [input.annotators] table, not both")
        if not annotators:
            raise AdapterError("[input.annotators] is empty; map each annotator name to its directory")
        sources = {str(name): Path(path) for name, path in annotators.items()}
    elif annotators is not None:
        raise AdapterError(
            "[input] annotators must be a table of annotator name -> directory for this format, "
            'e.g. [input.annotators] ayse = "ann/ayse"'
        )
    elif annotations is None:
        raise AdapterError("no input: set [input] annotations (one annotator) or an [input.annotators] table")
    else:
        sources = {annotator: Path(annotations)}
    for name, path in sources.items():
        if not name:
            raise AdapterError("an annotator name is empty")
        if not path.exists():
            raise AdapterError(f"annotations of {name} not found: {path}")
    return sources


def read_relations(
    fmt: RelationFormat,
    *,
    annotations: Path | None = None,
    annotators: dict[str, Path] | list[str] | None = None,
    annotator: str,
    texts: Path | None = None,
    encoding: str,
    encoding_fallback: str | None = None,
    group_by: str,
    sense_level: int | None = None,
    types: list[str] | None = None,
    groups: list[str] | None = None,
    glob: str,
    base: Path | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read every annotator's files of the PDTB-family format ``fmt`` into a corpus (the options: ``fmt.options()``)."""
    check_grouping(group_by, sense_level)
    if types is not None and (not isinstance(types, list) or not all(isinstance(t, str) for t in types)):
        raise AdapterError("types must be a list of relation types, e.g. [\"Explicit\", \"Implicit\"]")
    sources = _annotator_sources(annotations, annotators, annotator)
    base = Path(base) if base is not None else Path.cwd()
    if texts is None:
        if fmt.texts_beside is None:
            raise AdapterError("set [input] texts: the directory of the raw texts")
        texts = home(next(iter(sources.values()))) / fmt.texts_beside
    texts = Path(texts)
    if not texts.is_dir():
        raise AdapterError(f"texts directory not found: {texts}")
    wanted_types = {t.lower() for t in types} if types else None
    wanted_groups = set(groups) if groups else None
    progress = progress or no_progress

    corpus = Corpus(format=fmt.name)
    jobs: list[tuple[str, Path, str]] = []
    for name, source in sorted(sources.items()):
        if not source.is_file():
            files_under(source, base, corpus, lambda _: False, annotator=name)  # a folder the glob below cannot list is reported
        paths = [source] if source.is_file() else sorted(fmt.files(source, glob))
        for path in paths:
            shown = printable(relative(path, base))
            if shown is not None:
                corpus.findings.append(
                    finding("filename-pattern", "file name is not valid UTF-8", "file skipped; rename it", file=shown, annotator=name)
                )
                continue
            jobs.append((name, path, relative(path, base)))

    # (annotator, doc) -> (relations, file)
    read: dict[tuple[str, str], tuple[list[Relation], str]] = {}
    for name, path, shown in progress(jobs, "reading annotations"):
        parsed = fmt.parse(path, shown, name)
        corpus.findings.extend(parsed.findings)
        if parsed.size or parsed.sha256:
            corpus.inputs.append(InputFile(path=shown, role="annotations", size=parsed.size, sha256=parsed.sha256))
        for doc, relations in parsed.relations.items():
            key = (name, doc)
            if key in read:
                corpus.findings.append(
                    finding(
                        "duplicate-file",
                        f"a second file with document {doc} for annotator {name} (the first is {read[key][1]})",
                        f"its relations for {doc} are skipped, {read[key][1]} used; remove one of them",
                        file=shown,
                        doc=doc,
                        annotator=name,
                    )
                )
                continue
            read[key] = (relations, shown)

    docs = {doc for _, doc in read}
    read_texts(
        docs,
        index_texts(texts, base, corpus, suffixes=fmt.text.suffixes, any_name=True),
        base,
        corpus,
        fmt.text,
        encoding=encoding,
        fallback=encoding_fallback,
    )

    counts: Counter[tuple[str, str, str]] = Counter()
    for (name, doc), (relations, shown) in sorted(read.items()):
        raw = corpus.documents[doc].text
        for rel in relations:
            if wanted_types is not None and rel.type.lower() not in wanted_types:
                corpus.skipped_by_selection += 1
                continue
            spans = _code_points(rel, raw, fmt.text) if raw is not None else rel.spans
            connective, connective_raw = _connective(rel, spans, raw)
            group = group_name(
                group_by, sense_level, connective=connective, type_=rel.type, sense=rel.senses[0] if rel.senses else None
            )
            if wanted_groups is not None and group not in wanted_groups:
                corpus.skipped_by_selection += 1
                continue
            counts[(name, doc, group)] += 1
            _emit(corpus, rel, spans, name, doc, group, shown, connective, connective_raw)
    every_doc = group_by == "none" and (wanted_groups is None or ALL in wanted_groups)
    corpus.submissions = submissions({key: shown for key, (_, shown) in read.items()}, counts, every_doc)
    return corpus


def _code_points(rel: Relation, raw: str, text: TextConventions) -> dict[str, list[tuple[int, int]]]:
    """Fragments with offsets counted as ``text`` says, as code points of ``raw``."""
    if text.offsets == "codepoint":
        return rel.spans
    out: dict[str, list[tuple[int, int]]] = {}
    for layer, fragments in rel.spans.items():
        flat = np.asarray([x for pair in fragments for x in pair], dtype=np.int64)
        valid = flat >= 0
        converted = flat.copy()
        converted[valid] = text.to_codepoints(raw, flat[valid])
        out[layer] = [(int(converted[i]), int(converted[i + 1])) for i in range(0, len(flat), 2)]
    return out


def _connective(rel: Relation, spans: dict[str, list[tuple[int, int]]], text: str | None) -> tuple[str, str | None]:
    """A relation's connective as a group name, and the text it came from when invisible characters were dropped.

    The name is the raw text of the connective span (fragments joined by a space),
    else its stored text, else the inserted connective: lower-cased, whitespace runs
    collapsed and trimmed, and :data:`INVISIBLE` characters dropped (a span that
    includes a BOM must not make a group of its own).
    """
    conn = [f for f in spans.get("Conn", []) if f[0] >= 0]
    if conn and text is not None and all(0 <= b <= e <= len(text) for b, e in conn):
        words = " ".join(text[b:e] for b, e in conn)
    elif conn and rel.stored.get("Conn"):
        words = rel.stored["Conn"]
    else:
        words = rel.inserted or ""
    visible = words.translate(INVISIBLE)
    name = " ".join(visible.split()).lower()
    return name or f"({rel.type})", words if visible != words else None


def _emit(
    corpus: Corpus,
    rel: Relation,
    spans: dict[str, list[tuple[int, int]]],
    annotator: str,
    doc: str,
    group: str,
    shown: str,
    connective: str,
    connective_raw: str | None = None,
) -> None:
    attrs = dict(rel.attrs)
    attrs.update(type=rel.type, senses=list(rel.senses), connective=connective)
    if connective_raw is not None:
        attrs["connective_raw"] = connective_raw  # the text the group name was cleaned from
    if rel.inserted:
        attrs["inserted"] = rel.inserted
    for layer in LAYERS:
        fragments = spans.get(layer, [])
        stored = rel.stored.get(layer) if len(fragments) == 1 else None
        for i, (b, e) in enumerate(fragments):
            corpus.spans.append(
                Span(
                    annotator=annotator,
                    doc_id=doc,
                    group=group,
                    record=rel.record,
                    layer=layer,
                    fragment=i,
                    begin=b,
                    end=e,
                    label=rel.senses[0] if rel.senses else None,
                    attrs=attrs,
                    source=shown,
                    line=rel.line,
                    stored_text=stored,
                )
            )
    for layer in ("Arg1", "Arg2"):
        if not spans.get(layer):
            corpus.findings.append(
                finding(
                    "span-missing",
                    f"{rel.type} relation (line {rel.line}) has no {layer} span",
                    f"relation kept without {layer}; complete or remove it in the annotation tool",
                    file=shown,
                    record=rel.record,
                    doc=doc,
                    group=group,
                    annotator=annotator,
                    layer=layer,
                )
            )

