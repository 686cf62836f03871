"""The reading every PDTB-family format shares: annotators, files, raw texts, relations → span records.

:func:`relation_adapter` makes a format's adapter from its :class:`~unitize.adapters.discourse.RelationFormat`;
its reader, :func:`read_relations`, runs the same steps for every format: the annotators (one
directory each, or a single input), their files, each parsed by the format, the raw texts,
offsets converted to code points, relation types selected, relations grouped (connective, type,
sense, none), span records emitted, and the per-(document, group) submissions that RAT's
missing-annotator and count rules work on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..model import Corpus, InputFile, Span
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from .discourse import LAYERS, TRAITS, Relation, RelationFormat, home
from .files import files_under, index_texts, printable, read_texts, relative
from .groups import ALL, INVISIBLE, check_grouping, group_name, submissions


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
    texts = _texts_folder(fmt, texts, sources)
    corpus = Corpus(format=fmt.name)
    read = _parse(fmt, _files(fmt, sources, glob, base, corpus), corpus, progress or no_progress)
    read_texts({doc for _, doc in read}, index_texts(texts, base, corpus, suffixes=fmt.text.suffixes, any_name=True),
               base, corpus, fmt.text, encoding=encoding, fallback=encoding_fallback)
    grouping = _Grouping(group_by, sense_level, {t.lower() for t in types} if types else None, set(groups) if groups else None)
    counts = _records(fmt, read, corpus, grouping)
    every_doc = group_by == "none" and (grouping.groups is None or ALL in grouping.groups)
    corpus.submissions = submissions({key: shown for key, (_, shown) in read.items()}, counts, every_doc)
    return corpus


def _texts_folder(fmt: RelationFormat, texts: Path | None, sources: dict[str, Path]) -> Path:
    """The folder of the raw texts: ``texts``, else the format's default beside the annotations."""
    if texts is None:
        if fmt.texts_beside is None:
            raise AdapterError("set [input] texts: the directory of the raw texts")
        texts = home(next(iter(sources.values()))) / fmt.texts_beside
    texts = Path(texts)
    if not texts.is_dir():
        raise AdapterError(f"texts directory not found: {texts}")
    return texts


def _files(fmt: RelationFormat, sources: dict[str, Path], glob: str, base: Path, corpus: Corpus) -> list[tuple[str, Path, str]]:
    """(annotator, path, name as shown) of every annotation file; a name that is not UTF-8 is a finding."""
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
    return jobs


Parsed = dict[tuple[str, str], tuple[list[Relation], str]]  # (annotator, doc) -> (relations, file)


def _parse(fmt: RelationFormat, jobs: list[tuple[str, Path, str]], corpus: Corpus, progress: Progress) -> Parsed:
    """Every file parsed: the relations of each (annotator, document), the first file's when two have it."""
    read: Parsed = {}
    for name, path, shown in progress(jobs, "reading annotations"):
        parsed = fmt.parse(path, shown, name)
        corpus.findings.extend(parsed.findings)
        if parsed.size or parsed.sha256:
            corpus.inputs.append(InputFile(path=shown, role="annotations", size=parsed.size, sha256=parsed.sha256))
        for doc, relations in parsed.relations.items():
            key = (name, doc)
            if key in read:
                corpus.findings.append(finding(
                    "duplicate-file", f"a second file with document {doc} for annotator {name} (the first is {read[key][1]})",
                    f"its relations for {doc} are skipped, {read[key][1]} used; remove one of them", file=shown, doc=doc, annotator=name,
                ))
                continue
            read[key] = (relations, shown)
    return read


@dataclass(frozen=True)
class _Grouping:
    """How relations are grouped, and which are read: ``types`` (lower case) and ``groups`` (``None``: all)."""

    group_by: str
    sense_level: int | None
    types: set[str] | None
    groups: set[str] | None


def _records(fmt: RelationFormat, read: Parsed, corpus: Corpus, grouping: _Grouping) -> Counter[tuple[str, str, str]]:
    """The span records of every selected relation, offsets as code points; relations per (annotator, doc, group)."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for (name, doc), (relations, shown) in sorted(read.items()):
        raw = corpus.documents[doc].text
        for rel in relations:
            if grouping.types is not None and rel.type.lower() not in grouping.types:
                corpus.skipped_by_selection += 1
                continue
            spans = _code_points(rel, raw, fmt.text) if raw is not None else rel.spans
            connective, connective_raw = _connective(rel, spans, raw)
            group = group_name(grouping.group_by, grouping.sense_level, connective=connective, type_=rel.type,
                               sense=rel.senses[0] if rel.senses else None)
            if grouping.groups is not None and group not in grouping.groups:
                corpus.skipped_by_selection += 1
                continue
            counts[(name, doc, group)] += 1
            _emit(corpus, rel, spans, name, doc, group, shown, connective, connective_raw)
    return counts


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

