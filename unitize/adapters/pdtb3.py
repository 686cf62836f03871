"""PDTB-3 pipe files: the PDTB annotation tool's 34-field lines (PDTB-3, TED-MDB, Chinese TED, BioDRB).

One file per document and annotator, one relation per line::

    Explicit|208..214|Wr|Comm|Null|Null|||Comparison.Concession.Arg2-as-denier||||||59..206|…|215..336|…

Fields (0-based): 0 type, 1 Conn spans, 6 relation attribution spans, 7 inserted
connective, 8/9/11/12 senses, 10 second inserted connective, 13 Sup1, 14 Arg1,
19 Arg1 attribution, 20 Arg2, 25 Arg2 attribution, 26 Sup2, 31 identifier,
32 provenance. Span lists are ``b..e;b..e``, end exclusive. Lines are split
into at most 34 fields (longer lines keep the rest in field 33); lines of 27
fields (BioDRB) are read with the missing fields empty.

Offsets are what the tool counted: the raw text with ``\\r\\n`` and lone ``\\r``
as one character, a UTF-8 BOM kept as character 0, in UTF-16 code units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Finding
from ..model.findings import finding
from ..model.text import TextConventions
from .discourse import (
    ParsedFile,
    Relation,
    RelationFormat,
    parse_span_list,
    read_bytes_for,
)
from .discourse_read import relation_adapter
from .files import doc_id_of

FIELDS = 34
MIN_FIELDS = 27
#: layer -> field holding its span list
SPAN_FIELDS = {"Conn": 1, "Attr": 6, "Sup1": 13, "Arg1": 14, "Arg1Attr": 19, "Arg2": 20, "Arg2Attr": 25, "Sup2": 26}
SENSE_FIELDS = (8, 9, 11, 12)
INSERTED, INSERTED2 = 7, 10
#: suffixes stripped from file names to give document ids
SUFFIXES = (".txt", ".pipe")
#: the PDTB annotation tool counts UTF-16 code units of the raw text with ``\r\n`` and lone ``\r`` as one
#: character and a UTF-8 BOM as character 0
TEXT = TextConventions(newlines="normalize", bom="keep", offsets="utf16", suffixes=SUFFIXES, encoding="utf-8")


def decode_lines(raw: bytes, name: str, annotator: str, out: ParsedFile) -> list[str] | None:
    """The text of an annotation file as lines (``\\r`` stripped); ``None`` and a finding when undecodable."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
        out.findings.append(
            finding(
                "encoding-fallback",
                "annotation file is not valid UTF-8; decoded as latin-1",
                "read with latin-1; re-save it as UTF-8 if its connectives or senses look wrong",
                file=name,
                annotator=annotator,
            )
        )
    return [line.rstrip("\r") for line in text.split("\n")]


@dataclass(frozen=True)
class PipeLines:
    """A pipe format's lines, declared: one relation a line, ``fields`` fields separated by ``|``.

    ``name`` keys the line's fields in the relation's attrs; ``spans`` maps a layer to the
    field of its span list, ``stored`` to the field of its stored text; ``senses`` are the
    sense fields, ``inserted`` the fields of the inserted connective and of the second
    one; ``attrs`` maps further attributes kept to their fields. ``suffixes`` are dropped
    from a file's name to give its document id; ``hint`` is the advice for a malformed
    line. A line of ``min_fields`` (default: ``fields``) to ``fields`` fields is read (the
    missing ones empty), any other is reported; with ``rest_in_last`` a line is split
    into at most ``fields`` fields (the rest stays in the last).
    """

    name: str
    fields: int
    spans: Mapping[str, int]
    senses: tuple[int, ...]
    inserted: tuple[int, int]
    suffixes: tuple[str, ...]
    hint: str
    stored: Mapping[str, int] = field(default_factory=dict)
    attrs: Mapping[str, int] = field(default_factory=dict)
    min_fields: int | None = None
    rest_in_last: bool = False

    def relation(self, fields: list[str], record: str, line: int, where: dict[str, Any], findings: list[Finding]) -> Relation:
        """The relation of a line's fields; unreadable span lists become findings."""
        fields = fields + [""] * (self.fields - len(fields))
        here = dict(where, record=record, line=line)
        spans = {layer: parse_span_list(fields[i], layer, where=here, findings=findings) for layer, i in self.spans.items()}
        inserted, inserted2 = (fields[i].strip() for i in self.inserted)
        return Relation(
            record=record,
            line=line,
            type=fields[0].strip(),
            spans={k: v for k, v in spans.items() if v},
            senses=[fields[i].strip() for i in self.senses if fields[i].strip()],
            inserted=inserted or None,
            stored={layer: fields[i] for layer, i in self.stored.items() if fields[i].strip()},
            attrs={self.name: fields, **{key: fields[i].strip() for key, i in self.attrs.items()}, **({"inserted2": inserted2} if inserted2 else {})},
        )

    def parse(self, path: Path, name: str, annotator: str) -> ParsedFile:
        """Read one pipe file into relations of its document; bad lines become findings."""
        raw, out = read_bytes_for(path, name, annotator)
        if raw is None:
            return out
        doc = doc_id_of(path, self.suffixes)
        where = {"file": name, "doc": doc, "annotator": annotator}
        relations: list[Relation] = []
        for number, line in enumerate(decode_lines(raw, name, annotator, out) or [], start=1):
            if not line.strip():
                continue
            fields = line.split("|", self.fields - 1) if self.rest_in_last else line.split("|")
            counted = (self.min_fields or self.fields) <= len(fields) <= self.fields
            if not counted or not fields[0].strip():
                problem = f"{len(fields)} fields, expected {self.fields}" if not counted else "no relation type in field 0"
                out.findings.append(
                    finding("record-malformed", f"line {number}: {problem}", f"line skipped; {self.hint}", record=str(number), **where)
                )
                continue
            relations.append(self.relation(fields, str(number), number, where, out.findings))
        out.relations[doc] = relations
        return out


#: the PDTB annotation tool's lines (BioDRB's have 27 fields)
LINES = PipeLines(
    "pdtb3",
    FIELDS,
    spans=SPAN_FIELDS,
    senses=SENSE_FIELDS,
    inserted=(INSERTED, INSERTED2),
    suffixes=SUFFIXES,
    hint="is this a PDTB-3 pipe file? (PDTB-2 files have 48 fields: format pdtb2)",
    min_fields=MIN_FIELDS,
    rest_in_last=True,
)

#: PDTB-3 in the PDTB family: one pipe file per document (any name but ``*.xml``) over raw texts of the same names
PDTB3 = RelationFormat(
    "pdtb3", LINES.parse, TEXT, glob="**/*", texts="directory of the raw texts, same file names as the annotation files (required)", ignore=(".xml",)
)
ADAPTER = relation_adapter(PDTB3, "PDTB-3 pipe files (34 fields; PDTB annotation tool, TED-MDB, Chinese TED, BioDRB)")
