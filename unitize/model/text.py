"""Raw text decoding and offset conventions (DESIGN.md §3).

Annotation tools count offsets against the text *as they read it*: some keep
``\\r\\n`` as two characters, some turn it into one; some keep a UTF-8 BOM as
character 0. Raw files are therefore read as bytes and decoded here, with the
policy of the tool that made the annotations. Each format declares that policy once,
as :class:`TextConventions` (a row of DESIGN.md §3's table) next to its adapter.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeGuard, get_args

import numpy as np

NewlinePolicy = Literal["keep", "normalize"]
BomPolicy = Literal["keep", "strip"]
OffsetUnit = Literal["codepoint", "utf16"]
#: what a format's offsets may count
OFFSET_UNITS: tuple[str, ...] = get_args(OffsetUnit)


def is_offset_unit(value: object) -> TypeGuard[OffsetUnit]:
    """Whether ``value`` (an option as given) names an offset unit of :data:`OFFSET_UNITS`."""
    return value in OFFSET_UNITS


class DecodeError(ValueError):
    """A raw text that none of the allowed encodings can decode."""


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    encoding: str
    newline: str
    bom: bool
    fallback_used: bool


def newline_style(text: str) -> str:
    """Name the line-break convention of ``text``: crlf, lf, cr, mixed or none."""
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    kinds = [name for name, n in (("crlf", crlf), ("lf", lf), ("cr", cr)) if n]
    if not kinds:
        return "none"
    return kinds[0] if len(kinds) == 1 else "mixed"


def decode_raw(
    raw: bytes | bytearray,
    *,
    encoding: str = "utf-8",
    fallback: str | None = None,
    newlines: NewlinePolicy = "keep",
    bom: BomPolicy = "keep",
) -> DecodedText:
    """Decode raw bytes the way an annotation tool read them.

    ``encoding`` is tried first (strictly), then ``fallback``. ``newlines="normalize"``
    turns ``\\r\\n`` and lone ``\\r`` into ``\\n`` (tools that count a line break as
    one character); ``"keep"`` leaves them (DATT counts ``\\r\\n`` as two).
    ``bom="keep"`` leaves a UTF-8 BOM in the text as U+FEFF (Java tools do).
    """
    has_bom = raw.startswith(codecs.BOM_UTF8)
    tried = [encoding] + ([fallback] if fallback and fallback.lower() != encoding.lower() else [])
    for i, enc in enumerate(tried):
        try:
            text = raw.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
        style = newline_style(text)
        if bom == "strip" and text.startswith("\ufeff"):
            text = text[1:]
        if newlines == "normalize" and "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return DecodedText(text, enc, style, has_bom, fallback_used=i > 0)
    raise DecodeError(f"not decodable as {' or '.join(tried)}")


@dataclass(frozen=True, slots=True)
class TextConventions:
    """How a format's tool counted the offsets into its texts: one row of DESIGN.md §3's table.

    - ``newlines``: ``keep`` (``\\r\\n`` counts as two characters) or ``normalize``
      (``\\r\\n`` and a lone ``\\r`` count as one);
    - ``bom``: ``keep`` (a UTF-8 BOM is character 0) or ``strip``;
    - ``offsets``: ``codepoint`` or ``utf16`` (UTF-16 code units, converted to code points);
    - ``suffixes``: the endings of the raw text files, dropped to give document ids
      (``()``: the text is inside the annotation file);
    - ``encoding``: the encoding of the texts unless a study names another (the
      default of the format's ``encoding`` option).
    """

    newlines: NewlinePolicy = "keep"
    bom: BomPolicy = "keep"
    offsets: OffsetUnit = "codepoint"
    suffixes: tuple[str, ...] = (".txt",)
    encoding: str = "utf-8"

    def decode(self, raw: bytes | bytearray, *, encoding: str | None = None, fallback: str | None = None) -> DecodedText:
        """``raw`` decoded as the tool read it, in ``encoding`` (default: the convention's), then ``fallback``."""
        return decode_raw(raw, encoding=encoding or self.encoding, fallback=fallback, newlines=self.newlines, bom=self.bom)

    def to_codepoints(self, text: str, offsets: np.ndarray) -> np.ndarray:
        """Offsets counted as this convention counts them, as code points of the decoded ``text``."""
        return utf16_to_codepoints(text, offsets) if self.offsets == "utf16" else np.asarray(offsets, dtype=np.int64)


def read_bytes(path: Path) -> tuple[bytes, str]:
    """Read a file's bytes and their sha256."""
    raw = path.read_bytes()
    return raw, hashlib.sha256(raw).hexdigest()


def collapse_whitespace(text: str) -> str:
    """Collapse every whitespace run to one space and trim; for comparing stored copies."""
    return " ".join(text.split())


def utf16_to_codepoints(text: str, offsets: np.ndarray) -> np.ndarray:
    """Convert UTF-16 code-unit offsets into ``text`` to code-point offsets.

    Identical when ``text`` has no character outside the Basic Multilingual Plane.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    astral = np.flatnonzero(code_points > 0xFFFF)
    if astral.size == 0:
        return offsets
    # code-unit position at which each astral character starts
    starts = astral + np.arange(astral.size, dtype=np.int64)
    return offsets - np.searchsorted(starts, offsets, side="left")


def codepoints_to_utf16(text: str, offsets: np.ndarray) -> np.ndarray:
    """Convert code-point offsets into ``text`` to UTF-16 code-unit offsets (Java tools count these)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    astral = np.flatnonzero(code_points > 0xFFFF)
    if astral.size == 0:
        return offsets
    return offsets + np.searchsorted(astral, offsets, side="left")


def _crlf_starts(kept: str) -> np.ndarray:
    """Positions in ``kept`` of every ``\\r`` that begins a ``\\r\\n``."""
    found: list[int] = []
    at = kept.find("\r\n")
    while at != -1:
        found.append(at)
        at = kept.find("\r\n", at + 2)
    return np.asarray(found, dtype=np.int64)


def kept_to_normalized(kept: str, offsets: np.ndarray) -> np.ndarray:
    """Offsets into ``kept`` (``\\r\\n`` = 2 characters) -> offsets into its newline-normalized form."""
    offsets = np.asarray(offsets, dtype=np.int64)
    starts = _crlf_starts(kept)
    return offsets - np.searchsorted(starts, offsets, side="left") if starts.size else offsets


def normalized_to_kept(kept: str, offsets: np.ndarray) -> np.ndarray:
    """Offsets into the newline-normalized form of ``kept`` -> offsets into ``kept`` (``\\r\\n`` = 2)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    starts = _crlf_starts(kept)
    if not starts.size:
        return offsets
    normalized_starts = starts - np.arange(starts.size, dtype=np.int64)
    return offsets + np.searchsorted(normalized_starts, offsets, side="left")


def natural_key(ident: str) -> tuple[int, int, str]:
    """Natural order of ids: ASCII numbers by value (then as written), then any other id as text.

    The digit string is compared by its length first, so an id of thousands of
    digits sorts correctly without ``int()`` (which refuses past 4,300 digits).
    """
    if ident.isascii() and ident.isdigit():
        digits = ident.lstrip("0")
        return (0, len(digits), digits + "\x00" + ident)
    return (1, 0, ident)
