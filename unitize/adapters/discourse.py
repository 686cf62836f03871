"""What the PDTB-family readers share: relations, annotators, groups, span records.

A format module (``pdtb3``, ``pdtb2``, ``conll16``) declares itself once as a
:class:`RelationFormat` — the parser of its files (into :class:`Relation` objects per
document, offsets as the file gives them), its texts' conventions, which files are
annotation files, where the raw texts are by default — and
:func:`~unitize.adapters.discourse_read.relation_adapter` makes its adapter, whose reading
:mod:`~unitize.adapters.discourse_read` does the same way for every format.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Finding
from ..model.findings import finding
from ..model.text import TextConventions
from ..model.traits import FormatTraits
from . import Option
from ._safe import parse_offset
from .groups import GROUP_BY

#: relation layers every PDTB-family reader can give: arguments, connective,
#: supplements, and the attribution spans of the relation and of each argument
LAYERS = ("Arg1", "Arg2", "Conn", "Sup1", "Sup2", "Attr", "Arg1Attr", "Arg2Attr")
#: the traits of every PDTB-family format: one group unless asked, every layer, spans checked against word boundaries
TRAITS = FormatTraits(group_by="none", layers=LAYERS, check_boundaries=True)

_SPAN = re.compile(r"^\s*([0-9]+)\s*\.\.\s*([0-9]+)\s*$")


@dataclass
class Relation:
    """One discourse relation as a file gives it.

    ``spans`` maps a layer to its fragments, offsets in the file's own units;
    a fragment that could not be parsed is ``(-1, -1)`` (already reported).
    ``stored`` maps a layer to the text the file stores for it, if any.
    """

    record: str
    line: int | None
    type: str
    spans: dict[str, list[tuple[int, int]]]
    senses: list[str] = field(default_factory=list)
    inserted: str | None = None
    stored: dict[str, str] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedFile:
    """One annotation file: relations per document, and what could not be read."""

    relations: dict[str, list[Relation]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    size: int = 0
    sha256: str = ""
    readable: bool = True


#: parse(path, name, annotator) -> ParsedFile; ``name`` is the path shown in reports
Parser = Callable[[Path, str, str], ParsedFile]


@dataclass(frozen=True)
class RelationFormat:
    """One PDTB-family format, declared once.

    ``parse`` reads one annotation file; ``text`` are the conventions of its raw texts;
    ``glob`` is the default of the ``glob`` option (which files under an annotator's
    directory are annotation files), of which files ending in one of ``ignore`` are
    not, nor hidden files unless ``hidden``; ``texts`` is the help of the ``texts``
    option, and ``texts_beside`` the folder beside the annotations that holds the raw
    texts when the option is not given (``None``: it must be given).
    """

    name: str
    parse: Parser
    text: TextConventions
    glob: str
    texts: str
    ignore: tuple[str, ...] = ()
    hidden: bool = False
    texts_beside: str | None = None

    def files(self, directory: Path, glob: str) -> Iterator[Path]:
        """The annotation files under ``directory`` that ``glob`` names."""
        for path in directory.glob(glob):
            if path.is_file() and (self.hidden or not path.name.startswith(".")) and path.suffix.lower() not in self.ignore:
                yield path

    def options(self) -> dict[str, Option]:
        """The [input] keys every PDTB-family reader accepts, with this format's defaults and help."""
        return {
            "annotations": Option("path", None, "one annotator's annotations (a file or a directory); see also annotators", example="ann"),
            "annotators": Option(
                "toml",
                None,
                "table of annotator name -> directory (or file), each with the same relative file names",
                example={"ayse": "ann/ayse", "burak": "ann/burak"},
            ),
            "annotator": Option("str", "gold", "name of the single annotator of `annotations`"),
            "texts": Option("path", None, self.texts, example="raw"),
            "encoding": Option("str", self.text.encoding, "encoding of the raw texts"),
            "encoding_fallback": Option("str", None, "encoding tried when a raw text is not valid in `encoding`", example="latin-1"),
            "group_by": Option(
                "str", TRAITS.group_by, "the sampling unit agreement is measured over: none (one group), connective, type or sense", choices=GROUP_BY
            ),
            "sense_level": Option("int", None, "with group_by = sense: how many levels of the sense hierarchy (default: all)", example=1, minimum=1),
            "types": Option("list", None, "only these relation types (default all)", example=["Explicit", "Implicit"]),
            "groups": Option("list", None, "only these groups", example=["but", "because"]),
            "glob": Option("str", self.glob, "which files under an annotator's directory are annotation files"),
        }


def home(source: Path) -> Path:
    """The folder of an annotator's annotations (a directory, or a file's folder)."""
    return source if source.is_dir() else source.parent


def parse_span_list(
    value: str, layer: str, *, where: dict[str, Any], findings: list[Finding]
) -> list[tuple[int, int]]:
    """``b..e;b..e`` -> fragments; a malformed part becomes ``(-1, -1)`` and a finding."""
    value = value.strip()
    if not value:
        return []
    out: list[tuple[int, int]] = []
    for i, part in enumerate(value.split(";")):
        m = _SPAN.match(part)
        begin, end = (parse_offset(m.group(1)), parse_offset(m.group(2))) if m else (None, None)
        if begin is None or end is None:
            findings.append(
                finding(
                    "offset-invalid",
                    f"{layer} span {i + 1} (line {where.get('line')}): {part[:60]!r} is not of the form begin..end "
                    "(two integers, no longer than any offset can be)",
                    "span left out; write it as two integers joined by '..'",
                    **{k: v for k, v in where.items() if k != "line"},
                    layer=layer,
                )
            )
            out.append((-1, -1))
        else:
            out.append((begin, end))
    return out


def read_bytes_for(path: Path, name: str, annotator: str) -> tuple[bytes | None, ParsedFile]:
    """A file's bytes, with its size and sha256 filled in; ``None`` (and a finding) when unreadable or empty."""
    out = ParsedFile()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.readable = False
        out.findings.append(
            finding("file-unreadable", f"cannot read the file: {exc.strerror or exc}", "file skipped; check its permissions", file=name, annotator=annotator)
        )
        return None, out
    out.size = len(raw)
    out.sha256 = hashlib.sha256(raw).hexdigest()
    return raw, out
