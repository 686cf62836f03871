"""Write PDTB-3 pipe files: the PDTB annotation tool's 34 fields, ``annotations/<annotator>/<doc>.txt``
(see :mod:`unitize.writers.pipe`); offsets in the tool's convention: line breaks count one, a BOM is
character 0, UTF-16 code units."""

from __future__ import annotations

from ..adapters.pdtb3 import LINES, TEXT
from .pipe import PipeFormat, pipe_target

#: the identifier field the tool computes: the first connective span, or the start of Arg2
IDENTIFIER = 31
FORMAT = PipeFormat(LINES, TEXT, IDENTIFIER, ".txt")
TRAITS = FORMAT.traits
TARGET = pipe_target(FORMAT, "PDTB-3 pipe files (34 fields), one per annotator and document, with the raw texts")
