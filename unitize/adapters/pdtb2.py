"""PDTB-2 pipe files: 48 fields per relation (the Penn Discourse Treebank 2.0 release).

Fields (0-based): 0 type, 1 section, 2 file number, 3 Conn/AltLex spans,
5 Conn raw text, 9/10 inserted connectives, 11–14 senses, 19 relation
attribution spans (21 its text), 22 Arg1 spans (24 text), 29 Arg1 attribution
spans (31 text), 32 Arg2 spans (34 text), 39 Arg2 attribution spans (41 text),
42 Sup1 spans (44 text), 45 Sup2 spans (47 text). Span lists are ``b..e;b..e``,
end exclusive; offsets count bytes of the raw WSJ file (Latin-1, beginning
with ``.START``), which are its characters. The stored texts are checked
against the raw slices.
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
from .pdtb3 import decode_lines

FIELDS = 48
#: layer -> (span list field, stored text field)
SPAN_FIELDS = {
    "Conn": (3, 5),
    "Attr": (19, 21),
    "Arg1": (22, 24),
    "Arg1Attr": (29, 31),
    "Arg2": (32, 34),
    "Arg2Attr": (39, 41),
    "Sup1": (42, 44),
    "Sup2": (45, 47),
}
SENSE_FIELDS = (11, 12, 13, 14)
INSERTED, INSERTED2 = 9, 10
SUFFIXES = (".pipe", ".txt")
#: offsets count bytes of the raw WSJ files, Latin-1: characters, line breaks as they are
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(".txt",), encoding="latin-1")


def parse_line(fields: list[str], record: str, line: int, where: dict[str, Any], findings: list) -> Relation:
    """One relation from a line's 48 fields."""
    here = dict(where, record=record, line=line)
    spans = {layer: parse_span_list(fields[i], layer, where=here, findings=findings) for layer, (i, _) in SPAN_FIELDS.items()}
    stored = {layer: fields[t] for layer, (_, t) in SPAN_FIELDS.items() if fields[t].strip()}
    return Relation(
        record=record,
        line=line,
        type=fields[0].strip(),
        spans={k: v for k, v in spans.items() if v},
        senses=[fields[i].strip() for i in SENSE_FIELDS if fields[i].strip()],
        inserted=fields[INSERTED].strip() or None,
        stored=stored,
        attrs={
            "pdtb2": fields,
            "section": fields[1].strip(),
            "file_number": fields[2].strip(),
            **({"inserted2": fields[INSERTED2].strip()} if fields[INSERTED2].strip() else {}),
        },
    )


def parse_file(path: Path, name: str, annotator: str) -> ParsedFile:
    """Read one PDTB-2 pipe file into relations of its document; bad lines become findings."""
    raw, out = read_bytes_for(path, name, annotator)
    if raw is None:
        return out
    doc = doc_id_of(path, SUFFIXES)
    where = dict(file=name, doc=doc, annotator=annotator)
    relations: list[Relation] = []
    for number, line in enumerate(decode_lines(raw, name, annotator, out) or [], start=1):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != FIELDS or not fields[0].strip():
            problem = f"{len(fields)} fields, expected {FIELDS}" if len(fields) != FIELDS else "no relation type in field 0"
            out.findings.append(
                finding(
                    "record-malformed",
                    f"line {number}: {problem}",
                    "line skipped; is this a PDTB-2 pipe file? (PDTB-3 files have 34 fields: format pdtb3)",
                    record=str(number),
                    **where,
                )
            )
            continue
        relations.append(parse_line(fields, str(number), number, where, out.findings))
    out.relations[doc] = relations
    return out


def _files(directory: Path, glob: str) -> Iterable[Path]:
    return (p for p in directory.glob(glob) if p.is_file() and not p.name.startswith("."))


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
    """Read PDTB-2 pipe files (``<doc>.pipe``) and the raw WSJ texts (``<doc>``)."""
    return read_relations(
        format="pdtb2",
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
    suffixes=(".pipe",),
    name="pdtb2",
    description="PDTB-2 pipe files (48 fields) over the raw WSJ texts",
    read=read,
    options=common_options("directory of the raw WSJ files (wsj_SSNN, Latin-1), searched recursively (required)", text=TEXT, glob="**/*.pipe"),
    traits=TRAITS,
)
