"""Offsets from the model's text to the convention of a target tool.

The model's text is the raw file decoded the way the *source* tool counted
(``\\r\\n`` as one or two characters, BOM kept or not). A target tool counts
its own way; both views come from the same raw bytes, so offsets map exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import Document
from ..model.text import (
    DecodeError,
    TextConventions,
    codepoints_to_utf16,
    decode_raw,
    kept_to_normalized,
    normalized_to_kept,
)


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class TargetText:
    """A document's raw bytes and its text as the target tool counts it."""

    raw: bytes
    kept: str  # decoded, line breaks and BOM as in the file
    text: str  # as the target counts: ``kept`` or its newline-normalized form
    conventions: TextConventions  # the target's (its newlines and offset unit count here)
    _to_kept: str  # "same", "normalized", "bom", "bom-normalized"

    def convert(self, offsets: np.ndarray) -> np.ndarray:
        """Model offsets (code points of the model's text) -> target offsets."""
        off = np.asarray(offsets, dtype=np.int64)
        if self._to_kept.startswith("bom"):
            off = off + 1
        if self._to_kept.endswith("normalized"):
            off = normalized_to_kept(self.kept, off)
        if self.conventions.newlines == "normalize":
            off = kept_to_normalized(self.kept, off)
        return codepoints_to_utf16(self.text, off) if self.conventions.offsets == "utf16" else off


def embedded_text(doc: Document, conventions: TextConventions) -> TargetText | str:
    """The view of a document whose text is the model's own (it came inside an annotation file or table, or a
    program made it): its bytes are the text's UTF-8, every character as it is."""
    if doc.text is None:
        return "its text was not read"
    try:
        raw = doc.text.encode("utf-8")
    except UnicodeEncodeError:
        return "its text holds a lone surrogate, which no UTF-8 file can hold"
    text = doc.text if conventions.newlines == "keep" else _normalize(doc.text)
    return TargetText(raw, doc.text, text, conventions, "same")


def target_text(doc: Document, base: Path, conventions: TextConventions, *, raw_file: bool | None = True) -> TargetText | str:
    """The view of ``doc`` by the target's ``conventions``, or why there is none (no raw text, or it changed since
    it was read).

    ``raw_file``: the document's ``source`` is its raw text file (True), an annotation file or table holding
    the text (False: the text itself is the view, :func:`embedded_text`), or unknown (None: the raw file when
    it still decodes to the text, else the text).
    """
    if raw_file is False or (raw_file is None and doc.source is None):
        return embedded_text(doc, conventions)
    if doc.text is None or doc.source is None:
        return "its raw text was not read"
    found = _raw_view(doc, base, conventions)
    return embedded_text(doc, conventions) if raw_file is None and isinstance(found, str) else found


def _raw_view(doc: Document, base: Path, conventions: TextConventions) -> TargetText | str:
    """The view from the document's raw file, which must decode to its text."""
    assert doc.text is not None and doc.source is not None
    try:
        raw = (base / doc.source).read_bytes()
        kept = decode_raw(raw, encoding=doc.encoding or "utf-8", newlines="keep", bom="keep").text
    except (OSError, DecodeError) as exc:
        return f"its raw text {doc.source} cannot be read again ({exc})"
    unbommed = kept[1:] if kept.startswith("\ufeff") else None
    candidates = [("same", kept), ("normalized", _normalize(kept))]
    if unbommed is not None:
        candidates += [("bom", unbommed), ("bom-normalized", _normalize(unbommed))]
    for how, view in candidates:
        if view == doc.text:
            text = kept if conventions.newlines == "keep" else _normalize(kept)
            return TargetText(raw, kept, text, conventions, how)
    return f"its raw text {doc.source} changed since it was read"
