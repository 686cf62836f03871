"""One WebAnno TSV 3 file parsed: its header's layers, its sentences rebuilt into the text, its token rows and span cells.

What :mod:`unitize.adapters.webanno_tsv` reads with (see its docstring for the format): offsets stay
UTF-16 code units here; the reader converts them to code points.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..model import Corpus
from ..model.findings import finding
from ._safe import parse_offset
from ._spans import malformed

_FORMAT = re.compile(r"^#FORMAT=WebAnno TSV (3(?:\.\d+)?)\s*$")
_KNOWN_VERSIONS = {"3", "3.1", "3.2", "3.3"}
_DECL = re.compile(r"^#(T_SP|T_CH|T_RL)=(.*)$")
_ROW = re.compile(r"^([0-9]+)-([0-9]+)(?:\.([0-9]+))?$")
_OFFSETS = re.compile(r"^([0-9]+)-([0-9]+)$")
#: the most UTF-16 units a sentence may start after the text before it (the gap is
#: filled with spaces, as INCEpTION does); a larger jump is a damaged offset
MAX_SENTENCE_GAP = 1 << 20
_ITEM_ID = re.compile(r"\[(\d+)(?:_\d+)?\]$")
#: a stacked item of a cell: escaped characters (a backslash and the next one) and any other but ``|``
_ITEM = re.compile(r"(?:\\.|[^\\|])*", re.DOTALL)
_UNESCAPE = re.compile(r"\\(->|[\\\[\]|_;*\t\n])")
#: in ``#Text=`` lines a carriage return is written ``\r`` too (undone in the same pass, so ``\\r`` stays a backslash and an r)
#: the escapes of a ``#Text=`` line, as INCEpTION's reader undoes them (``Escaping.unescapeText``): any other
#: backslash, ``\\_`` or ``\\[`` too, is text
_TEXT_UNESCAPE = re.compile(r"\\([\\tnrfb])")
_TEXT_UNESCAPED = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "f": "\f", "b": "\b"}

def _items(cell: str) -> list[str]:
    """A cell's stacked items: split at each ``|`` that no backslash escapes (``x\\\\|PER`` is ``x\\`` and ``PER``)."""
    if "\\" not in cell:
        return cell.split("|")
    return [m.group() for m in _ITEM.finditer(cell) if m.start() == 0 or cell[m.start() - 1] == "|"]


def _item_id(item: str) -> re.Match[str] | None:
    """The ``[n]`` (or ``[n_m]``) that ends an item and is not itself escaped (an even count of backslashes
    before its ``[``: ``C:\\\\[1]`` is ``C:\\`` with id 1, ``x\\[1]`` a value without one)."""
    found = _ITEM_ID.search(item)
    if found is None:
        return None
    slashes = len(item[: found.start()]) - len(item[: found.start()].rstrip("\\"))
    return found if slashes % 2 == 0 else None


def _unescape(value: str) -> str:
    return _UNESCAPE.sub(lambda m: m.group(1), value)


def _unescape_text(line: str) -> str:
    return _TEXT_UNESCAPE.sub(lambda m: _TEXT_UNESCAPED[m.group(1)], line)


@dataclass
class _Layer:
    name: str
    kind: str
    features: list[str]
    column: int  # index of its first column after the three fixed ones
    label_column: int


@dataclass
class Parsed:
    text: str = ""
    tokens: list[tuple[int, int]] = field(default_factory=list)  # UTF-16
    forms: list[tuple[str, int]] = field(default_factory=list)  # (form, line) of each token
    # (layer, label, begin16, end16, first line, record)
    spans: list[tuple[str, str | None, int, int, int, str]] = field(default_factory=list)


class _Text:
    """The document text as INCEpTION's TSV reader builds it (lengths in UTF-16 units).

    Every ``#Text=`` line is appended with a line break. A sentence starts at its
    first token's offset: on the line break that ended the sentence before it
    (which is then dropped), or after a gap filled with spaces. The last
    sentence keeps its line break, so the text ends with one.
    """

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length16 = 0

    def place(self, lines: list[str], begin16: int) -> str | None:
        """Append a sentence's ``#Text=`` lines at ``begin16``; why they overlap the text before them, or ``None``."""
        problem = None
        gap = begin16 - self.length16
        if gap == -1 and self.pieces and self.pieces[-1].endswith("\n"):
            self.pieces[-1] = self.pieces[-1][:-1]
            self.length16 -= 1
        elif gap < 0:
            problem = f"sentence starts at {begin16}, inside the text before it (ends at {self.length16})"
        else:
            self.pieces.append(" " * gap)
            self.length16 = begin16
        body = "".join(_unescape_text(line) + "\n" for line in lines)
        self.pieces.append(body)
        self.length16 += len(body.encode("utf-16-le")) // 2
        return problem


def _header(
    numbered: Iterator[tuple[int, str]], name: str, corpus: Corpus, feature: str | None, where: dict
) -> tuple[list[_Layer], list[tuple[int, str]]] | None:
    """The layers a file declares, and the (number, line) after the declarations (none at the end), read from ``numbered``."""
    first = next(((n, line) for n, line in numbered if line.strip()), None)
    m = _FORMAT.match(first[1]) if first is not None else None
    if first is None or m is None or m.group(1) not in _KNOWN_VERSIONS:
        versioned = m or (first is not None and first[1].startswith("#FORMAT="))
        what = "an unknown version: " + first[1].strip()[:40] if versioned and first is not None else "no #FORMAT=WebAnno TSV 3.x header"
        corpus.findings.append(
            finding("file-unreadable", f"not a WebAnno TSV 3 file ({what})", "file left out; export it as WebAnno TSV 3.x", file=name,
                    record=f"line {first[0] if first is not None else 1}", **where)
        )
        return None
    layers: list[_Layer] = []
    declarations: list[str] = []
    column = 0
    rest: list[tuple[int, str]] = []
    for number, line in numbered:
        declaration = _DECL.match(line)
        if declaration is None:
            rest = [(number, line)]
            break
        declarations.append(line)
        kind, decl = declaration.groups()
        parts = decl.split("|")
        features = parts[1:]
        width = max(len(features), 1)
        label_at = features.index(feature) if feature is not None and feature in features else features.index("value") if "value" in features else 0
        short = parts[0].rsplit(".", 1)[-1]
        layers.append(_Layer(short, kind, features, column, column + label_at))
        column += width
    names = [layer.name for layer in layers]
    for layer, decl_line in zip(layers, declarations):
        if names.count(layer.name) > 1:
            layer.name = decl_line.split("=", 1)[1].split("|", 1)[0]
    return layers, rest


def parse_file(lines: Iterable[str], name: str, corpus: Corpus, feature: str | None, where: dict) -> Parsed | None:
    """A TSV file read line by line (``lines``: its text split at line feeds, as a stream decodes it)."""
    numbered = enumerate(lines, 1)
    head = _header(numbered, name, corpus, feature, where)
    if head is None:
        return None
    layers, rest = head
    skipped = [layer.name for layer in layers if layer.kind != "T_SP"]
    if skipped:
        corpus.findings.append(
            finding("unknown-element", f"chain/relation layer(s) {', '.join(skipped)} are not spans", "not read", file=name, **where)
        )
    out = Parsed()
    text = _Text()
    sentence: list[str] = []
    open_ids: dict[tuple[int, str], list] = {}  # (layer index, id) -> [label, b, e, line]
    record_of: dict[tuple[int, str], str] = {}
    for number, line in itertools.chain(rest, numbered):
        line = line.rstrip("\r")
        if line.startswith("#Text="):
            sentence.append(line[len("#Text=") :])
            continue
        if not line.strip() or line.startswith("#"):
            continue
        token = _token_row(line, number, name, corpus, where, text, sentence)
        if token is None:
            continue
        cells, b16, e16, whole = token
        if whole:
            out.tokens.append((b16, e16))
            out.forms.append((_unescape(cells[2]) if len(cells) > 2 else "", number))
        for li, layer in enumerate(layers):
            if layer.kind == "T_SP":
                _span_cell(cells, li, layer, b16, e16, number, out, open_ids, record_of)
    for key, (label, b16, e16, number) in open_ids.items():
        out.spans.append((layers[key[0]].name, label, b16, e16, number, record_of[key]))
    out.text = "".join(text.pieces)
    return out


def _token_row(line: str, number: int, name: str, corpus: Corpus, where: dict, text: _Text,
               sentence: list[str]) -> tuple[list[str], int, int, bool] | None:
    """A token row's cells, UTF-16 offsets and whether it is a whole token (not a sub-token), the sentence before
    it placed in ``text``; ``None`` (a finding says why) for a row that is left out."""
    cells = line.split("\t")
    if cells and cells[-1] == "":
        cells = cells[:-1]  # INCEpTION ends rows with a TAB
    row = _ROW.match(cells[0]) if cells else None
    offsets = _OFFSETS.match(cells[1]) if len(cells) > 1 else None
    if row is None or offsets is None:
        malformed(corpus, name, number, f"not a token row: {line[:60]!r}", **where)
        return None
    b16, e16 = parse_offset(offsets.group(1)), parse_offset(offsets.group(2))
    if b16 is None or e16 is None:
        malformed(corpus, name, number, f"token offsets {cells[1][:60]!r} are too large to be offsets", "row left out", **where)
        return None
    if sentence:
        if b16 - text.length16 > MAX_SENTENCE_GAP:
            malformed(
                corpus, name, number,
                f"sentence starts at {b16}, {b16 - text.length16:,} UTF-16 units after the text before it (at most {MAX_SENTENCE_GAP:,} are filled)",
                "row left out; the sentence is placed at its next row", **where,
            )
            return None
        overlap = text.place(sentence, b16)
        if overlap:
            malformed(corpus, name, number, overlap, "offsets kept; the text may be misaligned", **where)
        sentence.clear()
    if e16 > text.length16:
        malformed(corpus, name, number, f"token offsets {b16}-{e16} run past the text of the sentences before them "
                  f"({text.length16} UTF-16 units)", "row left out", **where)
        return None
    return cells, b16, e16, row.group(3) is None


def _span_cell(cells: list[str], li: int, layer: _Layer, b16: int, e16: int, number: int, out: Parsed,
               open_ids: dict[tuple[int, str], list], record_of: dict[tuple[int, str], str]) -> None:
    """The span layer ``li``'s cell of a token row: a record per item without an id, an open span extended per id."""
    at = 3 + layer.label_column
    cell = cells[at] if at < len(cells) else "_"
    if cell == "_" or cell == "":
        return
    items = _items(cell)
    for k, item in enumerate(items):
        ident = _item_id(item)
        value = item[: ident.start()] if ident else item
        label = None if value == "*" else _unescape(value)
        if ident is None:
            # stacked items without an id are separate annotations: separate records
            record = f"line {number}" if len(items) == 1 else f"line {number}/{k + 1}"
            out.spans.append((layer.name, label, b16, e16, number, record))
            continue
        key = (li, ident.group(1))
        if key in open_ids:
            entry = open_ids[key]
            entry[1], entry[2] = min(entry[1], b16), max(entry[2], e16)
        else:
            open_ids[key] = [label, b16, e16, number]
            record_of[key] = f"{layer.name}[{ident.group(1)}]"
