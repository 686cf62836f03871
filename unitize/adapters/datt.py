"""DATT / TDB stand-off XML (the Turkish Discourse Bank's annotation tool).

One XML file per (document, annotator, connective), e.g. ``00003121_deniz_oysa.xml``::

    <Document>
      <Relation type="EXPLICIT" sense="..." note="...">
        <Conn><Span><Text>ve</Text><BeginOffset>260</BeginOffset><EndOffset>262</EndOffset></Span></Conn>
        <Mod/> <Arg1>…</Arg1> <Arg2>…</Arg2> <Supp1/> <Supp2/> <Shared/> <Supp_Shared/>
      </Relation>
    </Document>

Offsets are code points of the raw ``<doc>.txt`` with ``\\r\\n`` counted as two
characters, ``EndOffset`` exclusive. Several ``<Span>`` children make a
discontinuous element. The group (sampling unit) is the connective of the file name.
"""

from __future__ import annotations

import gc
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..model import Corpus, InputFile, SpanStream, Submission
from ..model.findings import finding
from ..model.text import TextConventions
from ..model.traits import FormatTraits
from ..runtime.executors import cores
from ..runtime.progress import Progress, Sized, no_progress
from . import Adapter, AdapterError, Option
from .datt_parse import LAYERS, FileResult, read_file_star
from .files import files_under, index_texts, printable, read_texts, relative
from .groups import regroup

#: default: doc id, annotator, then the connective as everything after the second underscore.
#: Patterns are searched in the file's path relative to the annotations directory.
DEFAULT_PATTERN = r"(?:^|/)(?P<doc>[^_/]+)_(?P<annotator>[^_/]+)_(?P<connective>[^/]+)\.xml$"

#: DATT counts code points of the raw ``<doc>.txt`` with ``\r\n`` as two characters (no BOM has been seen)
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(".txt",), encoding="utf-8")

#: grouped by connective (the file name's) unless a study says otherwise; DATT's element names are aliases of layers
TRAITS = FormatTraits(
    group_by="connective", layers=tuple(sorted(set(LAYERS.values()))), layer_aliases={k: v for k, v in LAYERS.items() if k != v},
    streams=True,
)

#: files in one process below this count; above it, parsing is spread over processes
PARALLEL_THRESHOLD = 4000
#: a streamed read hands over whole connectives, a batch once it holds this many files
BATCH_FILES = 4096


def read(
    *,
    annotations: Path,
    texts: Path | None = None,
    base: Path | None = None,
    encoding: str,
    encoding_fallback: str | None = None,
    filename_pattern: str,
    annotators: list[str] | None = None,
    groups: list[str] | None = None,
    workers: int | None = None,
    group_by: str,
    sense_level: int | None = None,
    progress: Progress | None = None,
    stream: bool = False,
) -> Corpus:
    """Read a directory (searched recursively) of DATT XML files and their raw texts.

    ``annotators`` and ``groups`` (connectives) restrict what is read; files of
    other annotators or connectives are skipped and only counted. Raw texts
    ``<doc>.txt`` are looked up recursively under ``texts`` (default: the
    annotations directory, RAT's "work path" layout). ``group_by`` other than
    ``connective`` regroups the relations by type, sense or into one group.

    ``stream`` (grouped by connective only): the files are listed and the texts read, and the
    corpus's :class:`~unitize.model.SpanStream` parses the files a batch of whole connectives
    (:data:`BATCH_FILES`) at a time, wherever the run reads it; the texts are then those of
    every document with a file.
    """
    annotations = Path(annotations)
    if not annotations.is_dir():
        raise AdapterError(f"annotations directory not found: {annotations}")
    texts = Path(texts) if texts is not None else annotations
    if not texts.is_dir():
        raise AdapterError(f"texts directory not found: {texts}")
    base = Path(base) if base is not None else Path.cwd()
    corpus = Corpus(format="datt")
    selection = _Selection(compile_pattern(filename_pattern or DEFAULT_PATTERN), set(annotators) if annotators else None, set(groups) if groups else None)
    jobs = _jobs(annotations, base, selection, corpus)

    def texts_of(docs: set[str]) -> None:
        read_texts(docs, index_texts(texts, base, corpus, suffixes=TEXT.suffixes), base, corpus, TEXT, encoding=encoding, fallback=encoding_fallback)

    if stream and group_by == "connective" and jobs:
        texts_of({job[2] for job in jobs})
        corpus.stream = SpanStream(sorted({job[3] for job in jobs}), [partial(_read_batch, batch) for batch in _plan(jobs)], workers)
        return corpus
    _parse(corpus, jobs, workers, progress or no_progress)
    regroup(corpus, group_by, sense_level)
    texts_of({s.doc_id for s in corpus.submissions})
    return corpus


Job = tuple[str, str, str, str, str]  # path, name as shown, document, annotator, connective


@dataclass(frozen=True)
class _Selection:
    """Which files are read: the file-name pattern, and the annotators and connectives asked for."""

    pattern: re.Pattern[str]
    annotators: set[str] | None
    groups: set[str] | None


def _jobs(annotations: Path, base: Path, selection: _Selection, corpus: Corpus) -> list[Job]:
    """The DATT files to parse, one per (document, annotator, connective); every other file is a finding or counted."""
    jobs: list[Job] = []
    seen: dict[tuple[str, str, str], str] = {}
    folder = relative(annotations, base)
    # sorted as Paths sort (by their parts), without a Python comparison per pair
    for path in sorted(files_under(annotations, base, corpus, lambda n: n.endswith(".xml")), key=_parts):
        if not path.is_file():
            continue
        subject = path.relative_to(annotations).as_posix()
        name = posixpath.normpath(posixpath.join(folder, subject))  # = relative(path, base), without a relpath per file
        named = _named(subject, name, selection.pattern, corpus)
        if named is None:
            continue
        doc, annotator, group = named
        if (selection.annotators is not None and annotator not in selection.annotators) or (selection.groups is not None and group not in selection.groups):
            corpus.skipped_by_selection += 1
            if selection.annotators is not None and annotator not in selection.annotators:
                corpus.not_selected.add(annotator)
            continue
        key = (doc, annotator, group)
        if key in seen:
            corpus.findings.append(finding(
                "duplicate-file", f"a second file for document {doc}, annotator {annotator}, connective {group} (the first is {seen[key]})",
                f"file skipped, {seen[key]} used; remove one of them", file=name, doc=doc, group=group, annotator=annotator,
            ))
            continue
        seen[key] = name
        jobs.append((str(path), name, doc, annotator, group))
    return jobs


def _named(subject: str, name: str, pattern: re.Pattern[str], corpus: Corpus) -> tuple[str, str, str] | None:
    """(document, annotator, connective) a file's name gives, or ``None`` (a ``filename-pattern`` finding says why)."""
    shown = printable(name)
    if shown is not None:
        corpus.findings.append(finding("filename-pattern", "file name is not valid UTF-8", "file skipped; rename it", file=shown))
        return None
    match = pattern.search(subject)
    if match is None:
        corpus.findings.append(finding(
            "filename-pattern", f"file name {subject!r} does not match the pattern {pattern.pattern!r}",
            "file skipped; rename it or set [input] filename_pattern", file=name,
        ))
        return None
    if not all(match.group(g) for g in ("doc", "annotator", "connective")):
        corpus.findings.append(finding(
            "filename-pattern", f"file name {subject!r} leaves doc, annotator or connective empty under the pattern {pattern.pattern!r}",
            "file skipped; rename it or fix [input] filename_pattern", file=name,
        ))
        return None
    return match["doc"], match["annotator"], match["connective"]


def _parse(corpus: Corpus, jobs: list[Job], workers: int | None, progress: Progress) -> None:
    """Parse every file into the corpus: in worker processes past :data:`PARALLEL_THRESHOLD` files (or ``workers``)."""
    n_workers = min(workers, cores()) if workers is not None else (min(cores(), 8) if len(jobs) >= PARALLEL_THRESHOLD else 1)
    with _no_cyclic_gc():
        if n_workers > 1 and len(jobs) > 1:
            with ProcessPoolExecutor(max_workers=n_workers) as pool:
                results: Iterable[FileResult] = progress(Sized(pool.map(read_file_star, jobs, chunksize=256), len(jobs)), "reading annotations")
                _collect(corpus, jobs, results)
        else:
            _collect(corpus, jobs, map(read_file_star, progress(jobs, "reading annotations")))


def _plan(jobs: list[tuple[str, str, str, str, str]]) -> list[list[tuple[str, str, str, str, str]]]:
    """The files of ``jobs`` in batches of whole connectives (ascending), closed once they hold
    :data:`BATCH_FILES` files; each connective's files in the order of ``jobs``."""
    by_group: dict[str, list[tuple[str, str, str, str, str]]] = defaultdict(list)
    for job in jobs:
        by_group[job[4]].append(job)
    plan: list[list[tuple[str, str, str, str, str]]] = [[]]
    for group in sorted(by_group):
        if len(plan[-1]) >= BATCH_FILES:
            plan.append([])
        plan[-1].extend(by_group[group])
    return plan


def _read_batch(jobs: list[tuple[str, str, str, str, str]]) -> Corpus:
    """The spans, submissions, inputs and findings of the files of ``jobs`` (a batch of :func:`_plan`)."""
    corpus = Corpus(format="datt")
    with _no_cyclic_gc():
        _collect(corpus, jobs, map(read_file_star, jobs))
    return corpus


def _parts(path: Path) -> tuple[str, ...]:
    return path.parts


def _collect(corpus: Corpus, jobs: list[tuple[str, str, str, str, str]], results: Iterable[FileResult]) -> None:
    """Add the files' spans, submissions, inputs and findings to the corpus, in the order of ``jobs``."""
    for (_path, name, doc, annotator, group), result in zip(jobs, results):
        corpus.findings.extend(result.findings)
        if result.size or result.sha256:
            corpus.inputs.append(InputFile(path=name, role="annotations", size=result.size, sha256=result.sha256))
        if result.relations is None:
            continue
        corpus.spans.extend(result.spans(name, doc, annotator, group))
        corpus.submissions.append(Submission(name, annotator, doc, group, result.relations))


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while the spans are made.

    Hundreds of thousands of new span objects (acyclic) set off full collections that
    walk every object alive; they cost the parent more time than making the spans.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a file-name pattern; it must have the named groups doc, annotator, connective."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise AdapterError(f"filename_pattern {pattern!r} is not a valid regular expression: {exc}") from exc
    missing = {"doc", "annotator", "connective"} - set(compiled.groupindex)
    if missing:
        raise AdapterError(
            f"filename_pattern {pattern!r} lacks the named group(s) {', '.join(sorted(missing))}; "
            "write them as (?P<doc>...), (?P<annotator>...), (?P<connective>...)"
        )
    return compiled


ADAPTER = Adapter(
    suffixes=(".xml",),
    text=TEXT,
    name="datt",
    description="DATT / TDB stand-off XML, one file per (document, annotator, connective)",
    read=read,
    options={
        "annotations": Option("path", None, "directory of DATT XML files (searched recursively)", example="annotations", required=True),
        "texts": Option("path", None, "directory of <doc>.txt raw texts (default: the annotations directory)", example="texts"),
        "encoding": Option("str", TEXT.encoding, "encoding of the raw texts"),
        "encoding_fallback": Option("str", None, "encoding tried when a raw text is not valid in `encoding`", example="windows-1254"),
        "filename_pattern": Option(
            "str",
            DEFAULT_PATTERN,
            "regex with named groups doc, annotator, connective, searched in the path relative to `annotations` "
            "(anchor a file name with (?:^|/))",
        ),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "groups": Option("list", None, "only these connectives", example=["ama", "ve"]),
        "workers": Option(
            "int", None, "processes used to parse files (convert: to read and resolve batches of connectives; default: automatic; never more than the cores)",
            example=4, minimum=1,
        ),
        "group_by": Option(
            "str", TRAITS.group_by, "the sampling unit: connective (the file name's), type, sense or none", choices=("connective", "type", "sense", "none")
        ),
        "sense_level": Option("int", None, "with group_by = sense: how many levels of the sense hierarchy (default: all)", example=1, minimum=1),
    },
    traits=TRAITS,
)
