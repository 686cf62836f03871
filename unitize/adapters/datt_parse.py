"""DATT / TDB stand-off XML, one file at a time: what the reader's worker processes run.

:func:`read_file` parses one file into plain columns (:class:`FileResult`), which cross a
process boundary cheaply; the parent (:mod:`unitize.adapters.datt`) makes the span records
from them with :meth:`FileResult.spans`.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import Finding, Span
from ..model.findings import finding
from ._safe import parse_offset

if TYPE_CHECKING:
    from lxml import etree  # imported by the functions that parse: the format's declaration (LAYERS) does not need it

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

# Untrusted input: no entities, no DTD, no network, no huge trees.
_PARSER_OPTIONS = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
}
#: one parser per thread, reused for every file (lxml parsers are not thread-safe; making one per file
#: cost a quarter of the parse)
_PARSERS = threading.local()


def _parser() -> etree.XMLParser:
    from lxml import etree

    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = etree.XMLParser(**_PARSER_OPTIONS)
    return parser


@dataclass
class FileResult:
    """What a worker sends back for one file: plain columns, one entry per span, no model objects.

    Pickling a ``Span`` per span (and rebuilding it in the parent) cost the parent as much as
    the workers saved; lists of ints and strings cross the process boundary cheaply, and the
    parent makes the spans in one pass (:meth:`spans`). ``attrs`` has one dict per relation,
    shared by its spans; ``relation`` is the 0-based relation of each span.
    """

    findings: list[Finding] = field(default_factory=list)
    relations: int | None = None
    size: int = 0
    sha256: str = ""
    attrs: list[dict[str, Any]] = field(default_factory=list)
    relation: list[int] = field(default_factory=list)
    layer: list[str] = field(default_factory=list)
    fragment: list[int] = field(default_factory=list)
    begin: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    line: list[int | None] = field(default_factory=list)
    stored: list[str | None] = field(default_factory=list)

    def spans(self, name: str, doc: str, annotator: str, group: str) -> list[Span]:
        """The span records of the columns (relation ``i`` is record ``str(i + 1)``)."""
        records = [str(i + 1) for i in range(len(self.attrs))]
        labels = [a.get("sense") or None for a in self.attrs]
        rel = self.relation
        n = len(rel)
        return list(
            map(
                Span,
                repeat(annotator, n),
                repeat(doc, n),
                repeat(group, n),
                [records[r] for r in rel],
                self.layer,
                self.fragment,
                self.begin,
                self.end,
                [labels[r] for r in rel],
                [self.attrs[r] for r in rel],
                repeat(name, n),
                self.line,
                self.stored,
            )
        )


def _parse_offset(el: etree._Element | None) -> int | None:
    if el is None:
        return None
    text = el.text
    if text is None:
        return None
    if len(text) < 10 and text.isdigit() and text.isascii():  # the usual case, well below MAX_OFFSET
        return int(text)
    return parse_offset(text)


def read_file(path: str, name: str, doc: str, annotator: str, group: str) -> FileResult:
    """Parse one DATT file into span columns; never raises on bad content."""

    out = FileResult()
    where = {"file": name, "doc": doc, "group": group, "annotator": annotator}
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        out.findings.append(
            finding("file-unreadable", f"cannot read the file: {exc.strerror or exc}", "file skipped; check its permissions", **where)
        )
        return out
    out.size = len(raw)
    out.sha256 = hashlib.sha256(raw).hexdigest()
    root = _document(raw, out, where)
    if root is None:
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
        _read_relation(child, relations, name, doc, annotator, group, out)
        relations += 1
    out.relations = relations
    return out


def _document(raw: bytes, out: FileResult, where: dict[str, str]) -> etree._Element | None:
    """The ``<Document>`` root of a file's bytes, or ``None`` (a ``file-unreadable`` finding in ``out``)."""
    from lxml import etree

    if not raw.strip():
        out.findings.append(finding("file-unreadable", "the file is empty", "file skipped; re-export it from DATT or remove it", **where))
        return None
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError as exc:
        out.findings.append(finding("file-unreadable", f"malformed XML: {exc.msg} (line {exc.lineno})",
                                    "file skipped; fix the XML or re-export it from DATT", **where))
        return None
    if root.tag != "Document":
        out.findings.append(finding("file-unreadable", f"root element is <{root.tag}>, expected <Document>",
                                    "file skipped; is it a DATT annotation file?", **where))
        return None
    return root


def _read_relation(
    rel: etree._Element, index: int, name: str, doc: str, annotator: str, group: str, out: FileResult
) -> None:
    """Append the spans of relation ``index`` (record ``index + 1``) to the columns of ``out``."""
    record = str(index + 1)
    attrs: dict[str, Any] = dict(rel.attrib)
    out.attrs.append(attrs)
    for element in rel:
        tag = element.tag
        if not isinstance(tag, str):
            continue
        layer = LAYERS.get(tag)
        if layer is None:
            _unknown(element, tag, record, attrs, out, name, doc, group, annotator)
            continue
        for fragment, span in enumerate(element.iterchildren("Span")):
            begin_el, end_el, text_el = _parts(span)
            begin = _parse_offset(begin_el)
            end = _parse_offset(end_el)
            if begin is None or end is None:
                out.findings.append(finding(
                    "offset-invalid", f"{layer} span {fragment + 1} (line {span.sourceline}) has a missing or non-integer BeginOffset/EndOffset",
                    "span left out; give it integer offsets", file=name, record=record, doc=doc, group=group, annotator=annotator, layer=layer,
                ))
                begin = end = -1
            out.relation.append(index)
            out.layer.append(layer)
            out.fragment.append(fragment)
            out.begin.append(begin)
            out.end.append(end)
            out.line.append(span.sourceline)
            out.stored.append(text_el.text if text_el is not None else None)


def _parts(span: etree._Element) -> tuple[etree._Element | None, etree._Element | None, etree._Element | None]:
    """A ``<Span>``'s first ``BeginOffset``, ``EndOffset`` and ``Text``, as find() would give them, in one pass."""
    begin_el = end_el = text_el = None
    for part in span:
        t = part.tag
        if t == "BeginOffset":
            if begin_el is None:
                begin_el = part
        elif t == "EndOffset":
            if end_el is None:
                end_el = part
        elif t == "Text" and text_el is None:
            text_el = part
    return begin_el, end_el, text_el


def _unknown(element: etree._Element, tag: str, record: str, attrs: dict[str, Any], out: FileResult, name: str, doc: str, group: str,
             annotator: str) -> None:
    """An element a DATT relation does not have: kept as XML in the relation's attrs, and reported."""
    from lxml import etree

    attrs[f"xml:{tag}"] = etree.tostring(element, encoding="unicode", with_tail=False)
    out.findings.append(finding(
        "unknown-element", f"<{tag}> in relation {record} (line {element.sourceline}) is not a DATT element", "kept in the relation's attrs",
        file=name, record=record, doc=doc, group=group, annotator=annotator,
    ))


def read_file_star(args: tuple[str, str, str, str, str]) -> FileResult:
    return read_file(*args)
