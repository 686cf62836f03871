"""Write PDTB-2 pipe files: 48 fields, ``annotations/<annotator>/<doc>.pipe`` (see :mod:`unitize.writers.pipe`);
offsets count characters of the raw texts as they are (bytes of the Latin-1 WSJ files), the raw-text
fields hold the slices."""

from __future__ import annotations

from ..adapters.pdtb2 import LINES, TEXT
from .pipe import PipeFormat, pipe_target

FORMAT = PipeFormat(LINES, TEXT, None, ".pipe")
TRAITS = FORMAT.traits
TARGET = pipe_target(FORMAT, "PDTB-2 pipe files (48 fields), one per annotator and document, with the raw texts")
