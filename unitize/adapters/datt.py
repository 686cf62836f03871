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

import hashlib
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from ..model import Corpus, Finding, InputFile, Span, Submission
from ..progress import Progress, Sized, no_progress
from ..findings import finding
from . import Adapter, AdapterError, Option
from ._safe import parse_offset
from .groups import regroup
from .files import index_texts, printable, read_texts, relative

#: default: doc id, annotator, then the connective as everything after the second underscore.
#: Patterns are searched in the file's path relative to the annotations directory.
DEFAULT_PATTERN = r"(?:^|/)(?P<doc>[^_/]+)_(?P<annotator>[^_/]+)_(?P<connective>[^/]+)\.xml$"

#: element name -> canonical layer name (both Supp and Sup spellings occur)
LAYERS = {
    "Conn": "Conn",
    "Mod": "Mod",
    "Arg1": "Arg1",
    "Arg2": "Arg2",
    "Supp1": "Sup1",
    "Sup1": "Sup1",
    "Supp2": "Sup2",
    "Sup2": "Sup2",
    "Shared": "Shared",
    "Supp_Shared": "Sup_Shared",
    "Sup_Shared": "Sup_Shared",
}

#: files in one process below this count; above it, parsing is spread over processes
PARALLEL_THRESHOLD = 4000

# Untrusted input: no entities, no DTD, no network, no huge trees.
_PARSER_OPTIONS = dict(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    dtd_validation=False,
    huge_tree=False,
    remove_comments=True,
    remove_pis=True,
)


@dataclass
class _FileResult:
    spans: list[Span] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    relations: int | None = None
    size: int = 0
    sha256: str = ""


def _parse_offset(el: etree._Element | None) -> int | None:
    if el is None or el.text is None:
        return None
    return parse_offset(el.text)


def _read_file(path: str, name: str, doc: str, annotator: str, group: str) -> _FileResult:
    """Parse one DATT file into span records; never raises on bad content."""
    out = _FileResult()
    where = dict(file=name, doc=doc, group=group, annotator=annotator)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        out.findings.append(
            finding("file-unreadable", f"cannot read the file: {exc.strerror or exc}", "file skipped; check its permissions", **where)
        )
        return out
    out.size = len(raw)
    out.sha256 = hashlib.sha256(raw).hexdigest()
    if not raw.strip():
        out.findings.append(
            finding("file-unreadable", "the file is empty", "file skipped; re-export it from DATT or remove it", **where)
        )
        return out
    try:
        root = etree.fromstring(raw, etree.XMLParser(**_PARSER_OPTIONS))
    except etree.XMLSyntaxError as exc:
        out.findings.append(
            finding(
                "file-unreadable",
                f"malformed XML: {exc.msg} (line {exc.lineno})",
                "file skipped; fix the XML or re-export it from DATT",
                **where,
            )
        )
        return out
    if root.tag != "Document":
        out.findings.append(
            finding(
                "file-unreadable",
                f"root element is <{root.tag}>, expected <Document>",
                "file skipped; is it a DATT annotation file?",
                **where,
            )
        )
        return out

    relations = 0
    for child in root:
        if not isinstance(child.tag, str):
            continue
        if child.tag != "Relation":
            out.findings.append(
                finding(
                    "unknown-element",
                    f"<{child.tag}> under <Document> (line {child.sourceline}) is not a DATT relation",
                    "ignored",
                    **where,
                )
            )
            continue
        relations += 1
        _read_relation(child, str(relations), name, doc, annotator, group, out)
    out.relations = relations
    return out


def _read_relation(
    rel: etree._Element, record: str, name: str, doc: str, annotator: str, group: str, out: _FileResult
) -> None:
    attrs: dict[str, Any] = dict(rel.attrib)
    for element in rel:
        if not isinstance(element.tag, str):
            continue
        layer = LAYERS.get(element.tag)
        if layer is None:
            attrs[f"xml:{element.tag}"] = etree.tostring(element, encoding="unicode", with_tail=False)
            out.findings.append(
                finding(
                    "unknown-element",
                    f"<{element.tag}> in relation {record} (line {element.sourceline}) is not a DATT element",
                    "kept in the relation's attrs",
                    file=name,
                    record=record,
                    doc=doc,
                    group=group,
                    annotator=annotator,
                )
            )
            continue
        for fragment, span in enumerate(element.iterchildren("Span")):
            begin = _parse_offset(span.find("BeginOffset"))
            end = _parse_offset(span.find("EndOffset"))
            text_el = span.find("Text")
            stored = text_el.text if text_el is not None else None
            if begin is None or end is None:
                out.findings.append(
                    finding(
                        "offset-invalid",
                        f"{layer} span {fragment + 1} (line {span.sourceline}) has a missing or non-integer "
                        "BeginOffset/EndOffset",
                        "span left out; give it integer offsets",
                        file=name,
                        record=record,
                        doc=doc,
                        group=group,
                        annotator=annotator,
                        layer=layer,
                    )
                )
                begin = end = -1
            out.spans.append(
                Span(
                    annotator=annotator,
                    doc_id=doc,
                    group=group,
                    record=record,
                    layer=layer,
                    fragment=fragment,
                    begin=begin,
                    end=end,
                    label=attrs.get("sense") or None,
                    attrs=attrs,
                    source=name,
                    line=span.sourceline,
                    stored_text=stored,
                )
            )


def _read_file_star(args: tuple[str, str, str, str, str]) -> _FileResult:
    return _read_file(*args)


def read(
    *,
    annotations: Path,
    texts: Path | None = None,
    base: Path | None = None,
    encoding: str = "utf-8",
    encoding_fallback: str | None = None,
    filename_pattern: str | None = None,
    annotators: list[str] | None = None,
    groups: list[str] | None = None,
    workers: int | None = None,
    group_by: str = "connective",
    sense_level: int | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read a directory (searched recursively) of DATT XML files and their raw texts.

    ``annotators`` and ``groups`` (connectives) restrict what is read; files of
    other annotators or connectives are skipped and only counted. Raw texts
    ``<doc>.txt`` are looked up recursively under ``texts`` (default: the
    annotations directory, RAT's "work path" layout). ``group_by`` other than
    ``connective`` regroups the relations by type, sense or into one group.
    """
    annotations = Path(annotations)
    if not annotations.is_dir():
        raise AdapterError(f"annotations directory not found: {annotations}")
    texts = Path(texts) if texts is not None else annotations
    if not texts.is_dir():
        raise AdapterError(f"texts directory not found: {texts}")
    base = Path(base) if base is not None else Path.cwd()
    pattern = compile_pattern(filename_pattern or DEFAULT_PATTERN)
    wanted_annotators = set(annotators) if annotators else None
    wanted_groups = set(groups) if groups else None
    progress = progress or no_progress

    corpus = Corpus(format="datt")
    jobs: list[tuple[str, str, str, str, str]] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in sorted(annotations.rglob("*.xml")):
        if not path.is_file():
            continue
        name = relative(path, base)
        shown = printable(name)
        if shown is not None:
            corpus.findings.append(
                finding("filename-pattern", "file name is not valid UTF-8", "file skipped; rename it", file=shown)
            )
            continue
        subject = path.relative_to(annotations).as_posix()
        match = pattern.search(subject)
        if match is None:
            corpus.findings.append(
                finding(
                    "filename-pattern",
                    f"file name {subject!r} does not match the pattern {pattern.pattern!r}",
                    "file skipped; rename it or set [input] filename_pattern",
                    file=name,
                )
            )
            continue
        if not all(match.group(g) for g in ("doc", "annotator", "connective")):
            corpus.findings.append(
                finding(
                    "filename-pattern",
                    f"file name {subject!r} leaves doc, annotator or connective empty under the pattern {pattern.pattern!r}",
                    "file skipped; rename it or fix [input] filename_pattern",
                    file=name,
                )
            )
            continue
        doc, annotator, group = match["doc"], match["annotator"], match["connective"]
        if (wanted_annotators is not None and annotator not in wanted_annotators) or (
            wanted_groups is not None and group not in wanted_groups
        ):
            corpus.skipped_by_selection += 1
            if wanted_annotators is not None and annotator not in wanted_annotators:
                corpus.not_selected.add(annotator)
            continue
        key = (doc, annotator, group)
        if key in seen:
            corpus.findings.append(
                finding(
                    "duplicate-file",
                    f"a second file for document {doc}, annotator {annotator}, connective {group} "
                    f"(the first is {seen[key]})",
                    f"file skipped, {seen[key]} used; remove one of them",
                    file=name,
                    doc=doc,
                    group=group,
                    annotator=annotator,
                )
            )
            continue
        seen[key] = name
        jobs.append((str(path), name, doc, annotator, group))

    n_workers = workers if workers is not None else (min(os.cpu_count() or 1, 8) if len(jobs) >= PARALLEL_THRESHOLD else 1)
    if n_workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=n_workers) as pool:
            results = list(progress(Sized(pool.map(_read_file_star, jobs, chunksize=256), len(jobs)), "reading annotations"))
    else:
        results = [_read_file_star(job) for job in progress(jobs, "reading annotations")]

    for (path, name, doc, annotator, group), result in zip(jobs, results):
        corpus.findings.extend(result.findings)
        if result.size or result.sha256:
            corpus.inputs.append(InputFile(path=name, role="annotations", size=result.size, sha256=result.sha256))
        if result.relations is None:
            continue
        corpus.spans.extend(result.spans)
        corpus.submissions.append(Submission(name, annotator, doc, group, result.relations))

    regroup(corpus, group_by, sense_level)
    docs = {s.doc_id for s in corpus.submissions}
    read_texts(docs, index_texts(texts, base, corpus), base, encoding, encoding_fallback, corpus, newlines="keep")
    return corpus


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
    name="datt",
    description="DATT / TDB stand-off XML, one file per (document, annotator, connective)",
    read=read,
    options={
        "annotations": Option("path", None, "directory of DATT XML files (searched recursively)", example="annotations"),
        "texts": Option("path", None, "directory of <doc>.txt raw texts (default: the annotations directory)", example="texts"),
        "encoding": Option("str", "utf-8", "encoding of the raw texts"),
        "encoding_fallback": Option("str", None, "encoding tried when a raw text is not valid in `encoding`", example="windows-1254"),
        "filename_pattern": Option(
            "str",
            DEFAULT_PATTERN,
            "regex with named groups doc, annotator, connective, searched in the path relative to `annotations` "
            "(anchor a file name with (?:^|/))",
        ),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "groups": Option("list", None, "only these connectives", example=["ama", "ve"]),
        "workers": Option("int", None, "processes used to parse files (default: automatic)", example=4),
        "group_by": Option(
            "str", "connective", "the sampling unit: connective (the file name's), type, sense or none", choices=("connective", "type", "sense", "none")
        ),
        "sense_level": Option("int", None, "with group_by = sense: how many levels of the sense hierarchy (default: all)", example=1),
    },
    defaults={
        "group_by": "connective",
        "layers": sorted(set(LAYERS.values())),
        "layer_aliases": {k: v for k, v in LAYERS.items() if k != v},
    },
)
