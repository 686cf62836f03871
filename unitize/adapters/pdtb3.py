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

from pathlib import Path
from typing import Any, Iterable

from ..model import Corpus
from ..progress import Progress
from ..findings import finding
from ..text import TextConventions
from . import Adapter
from .discourse import (
    TRAITS,
    ParsedFile,
    Relation,
    common_options,
    parse_span_list,
    read_bytes_for,
    read_relations,
)
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


def parse_line(fields: list[str], record: str, line: int, where: dict[str, Any], findings: list) -> Relation:
    """One relation from a line's fields (at least :data:`MIN_FIELDS`)."""
    fields = fields + [""] * (FIELDS - len(fields))
    here = dict(where, record=record, line=line)
    spans = {layer: parse_span_list(fields[i], layer, where=here, findings=findings) for layer, i in SPAN_FIELDS.items()}
    return Relation(
        record=record,
        line=line,
        type=fields[0].strip(),
        spans={k: v for k, v in spans.items() if v},
        senses=[fields[i].strip() for i in SENSE_FIELDS if fields[i].strip()],
        inserted=fields[INSERTED].strip() or None,
        attrs={"pdtb3": fields, **({"inserted2": fields[INSERTED2].strip()} if fields[INSERTED2].strip() else {})},
    )


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


def parse_file(path: Path, name: str, annotator: str) -> ParsedFile:
    """Read one pipe file into relations of its document; bad lines become findings."""
    raw, out = read_bytes_for(path, name, annotator)
    if raw is None:
        return out
    doc = doc_id_of(path, SUFFIXES)
    where = dict(file=name, doc=doc, annotator=annotator)
    relations: list[Relation] = []
    for number, line in enumerate(decode_lines(raw, name, annotator, out) or [], start=1):
        if not line.strip():
            continue
        fields = line.split("|", FIELDS - 1)
        if len(fields) < MIN_FIELDS or not fields[0].strip():
            problem = f"{len(fields)} fields, expected {FIELDS}" if len(fields) < MIN_FIELDS else "no relation type in field 0"
            out.findings.append(
                finding(
                    "record-malformed",
                    f"line {number}: {problem}",
                    "line skipped; is this a PDTB-3 pipe file? (PDTB-2 files have 48 fields: format pdtb2)",
                    record=str(number),
                    **where,
                )
            )
            continue
        relations.append(parse_line(fields, str(number), number, where, out.findings))
    out.relations[doc] = relations
    return out


def _files(directory: Path, glob: str) -> Iterable[Path]:
    for path in directory.glob(glob):
        if path.is_file() and not path.name.startswith(".") and path.suffix.lower() != ".xml":
            yield path


def read(
    *,
    annotations: Path | None = None,
    annotators: dict[str, Path] | list[str] | None = None,
    annotator: str,
    texts: Path | None = None,
    base: Path | None = None,
    encoding: str,
    encoding_fallback: str | None = None,
    group_by: str,
    sense_level: int | None = None,
    types: list[str] | None = None,
    groups: list[str] | None = None,
    glob: str,
    progress: Progress | None = None,
) -> Corpus:
    """Read PDTB-3 pipe files (one directory per annotator, or one annotator) and their raw texts."""
    return read_relations(
        format="pdtb3",
        parse=parse_file,
        files=lambda d: _files(d, glob),
        annotations=annotations,
        annotators=annotators,
        annotator=annotator,
        texts=texts,
        base=base,
        encoding=encoding,
        encoding_fallback=encoding_fallback,
        text=TEXT,
        group_by=group_by,
        sense_level=sense_level,
        types=types,
        groups=groups,
        progress=progress,
    )


ADAPTER = Adapter(
    text=TEXT,
    name="pdtb3",
    description="PDTB-3 pipe files (34 fields; PDTB annotation tool, TED-MDB, Chinese TED, BioDRB)",
    read=read,
    options=common_options("directory of the raw texts, same file names as the annotation files (required)", text=TEXT),
    traits=TRAITS,
)
