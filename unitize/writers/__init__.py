"""Writers of annotation formats: the model written back out, for conversion between formats.

A writer takes a corpus (as an adapter read it) and writes annotation files,
copies of the raw texts, and a ``study.toml`` that reads the result back, into
an output directory. Offsets are converted from the model's text to the
convention of the target tool (see :mod:`unitize.writers.offsets`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Corpus, Finding
from ..output import OutputDir


@dataclass
class Written:
    """What a writer wrote: files per role, records and spans written, findings about what it could not."""

    files: dict[str, int] = field(default_factory=dict)
    relations: int = 0
    spans: int = 0
    findings: list[Finding] = field(default_factory=list)
    study: dict[str, Any] = field(default_factory=dict)


#: write(corpus, target, base, source_settings) -> Written
Writer = Callable[[Corpus, OutputDir, Path, dict[str, Any]], Written]


def writers() -> dict[str, Writer]:
    """Target format name -> writer."""
    from .datt import write as write_datt
    from .pdtb3 import write as write_pdtb3

    return {"datt": write_datt, "pdtb3": write_pdtb3}
