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

from ..model.text import TextConventions
from .discourse import RelationFormat
from .discourse_read import relation_adapter
from .pdtb3 import PipeLines

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


#: a line of exactly 48 fields
LINES = PipeLines(
    "pdtb2",
    FIELDS,
    spans={layer: span for layer, (span, _) in SPAN_FIELDS.items()},
    senses=SENSE_FIELDS,
    inserted=(INSERTED, INSERTED2),
    suffixes=SUFFIXES,
    hint="is this a PDTB-2 pipe file? (PDTB-3 files have 34 fields: format pdtb3)",
    stored={layer: stored for layer, (_, stored) in SPAN_FIELDS.items()},
    attrs={"section": 1, "file_number": 2},
)

#: PDTB-2 in the PDTB family: ``<doc>.pipe`` files over the raw WSJ texts ``<doc>``
PDTB2 = RelationFormat(
    "pdtb2", LINES.parse, TEXT, glob="**/*.pipe", texts="directory of the raw WSJ files (wsj_SSNN, Latin-1), searched recursively (required)"
)
ADAPTER = relation_adapter(PDTB2, "PDTB-2 pipe files (48 fields) over the raw WSJ texts", suffixes=(".pipe",))
