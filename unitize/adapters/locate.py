"""Quoted text located in a document: exact, then normalized, then fuzzy — every quote with its outcome.

Model outputs rarely carry offsets; they quote the text (``{"text": "Barack Obama", "label": "PER"}``),
often with drift: whitespace runs, typographic quotes or dashes, case, a dropped letter. A
:class:`Locator` holds one document's text and places one annotator's quotes left to right:

1. **exact**: the ``occurrence``-th place (1-based) when given; the place nearest ``hint``
   (a character offset) when given; else the first place not yet used by the same annotator's
   quote of the same text;
2. **normalized**: the same on both texts with whitespace runs collapsed to one space, typographic
   quotes and dashes made ASCII, and case folded (offsets mapped back to the document);
3. **fuzzy**: the best-scoring alignment of the normalized quote in the normalized text
   (rapidfuzz's ``partial_ratio_alignment``), at or above ``threshold`` (0–100), widened to whole
   words where it cuts one (``Washingtn`` is placed on ``Washington``).

A quote found at several places with nothing saying which (no ``occurrence``, no ``hint``, more
places than the annotator's quotes of that text) is **ambiguous**: it is placed by the rule above,
and its outcome says so. A quote found nowhere is **not-found**. :data:`OUTCOMES` are the outcomes.

The cost is linear in the text and the quotes: each distinct quote's places are found once per
document, the next free place is kept (not searched anew), a hint is placed by bisection, a fuzzy
alignment is made once per distinct quote, and a quote longer than :data:`FUZZY_MAX_CHARS` is not
aligned fuzzily at all (it is not-found, and says why).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..errors import UnitizeError

EXACT, NORMALIZED, FUZZY, AMBIGUOUS, NOT_FOUND = "exact", "normalized", "fuzzy", "ambiguous", "not-found"
#: every outcome of a quote, in the order the steps are tried
OUTCOMES = (EXACT, NORMALIZED, FUZZY, AMBIGUOUS, NOT_FOUND)
#: how far the search goes: exact only, exact then normalized, or all three steps
MATCHING = (EXACT, NORMALIZED, FUZZY)

#: the longest quote the fuzzy step aligns (its cost grows faster than the quote's length)
FUZZY_MAX_CHARS = 2000

#: typographic characters written as their ASCII form before comparing
_ASCII = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4`", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    "\u2026": "...",
    "\u00a0": " ",
}


class FuzzyUnavailable(UnitizeError):
    """Fuzzy matching was asked for and rapidfuzz is not installed."""


def normalize(text: str) -> tuple[str, list[int]]:
    """``text`` normalized (whitespace runs one space, typographic quotes and dashes ASCII, case folded)
    and, per normalized character, the offset in ``text`` of the character it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if out and out[-1] == " ":
                continue
            piece = " "
        else:
            piece = _ASCII.get(ch, ch)
            low = piece.lower()
            piece = low if len(low) == len(piece) else piece
        out.extend(piece)
        where.extend([i] * len(piece))
    return "".join(out), where


def _places(text: str, quote: str) -> list[int]:
    """Every start of ``quote`` in ``text`` (overlapping ones too)."""
    out = []
    start = text.find(quote)
    while start >= 0:
        out.append(start)
        start = text.find(quote, start + 1)
    return out


@dataclass(frozen=True)
class Located:
    """Where a quote was placed (``begin``/``end`` code points of the document, end exclusive; -1 when
    not found), how (:data:`OUTCOMES`), the fuzzy score (0–100) and how many places it had."""

    outcome: str
    begin: int = -1
    end: int = -1
    score: float | None = None
    places: int = 0
    #: why a step was not tried (a quote too long to align fuzzily), for the finding
    note: str = ""


@dataclass
class Locator:
    """One document's text, and the places one annotator's quotes have taken (see the module docstring)."""

    text: str
    matching: str = FUZZY
    threshold: float = 90.0
    _norm: tuple[str, list[int]] | None = field(default=None, repr=False)
    _used: dict[tuple[str, str], set[int]] = field(default_factory=dict, repr=False)
    _quoted: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _places: dict[tuple[str, str], list[int]] = field(default_factory=dict, repr=False)
    _free: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _fuzzy_found: dict[str, Located] = field(default_factory=dict, repr=False)

    def expect(self, quotes: Iterable[str]) -> None:
        """The annotator's quotes of this document, before locating them: how often each text is quoted
        (a text quoted as often as it occurs is not ambiguous)."""
        self._used.clear()
        self._quoted.clear()
        self._free.clear()
        for q in quotes:
            self._quoted[(EXACT, q)] = self._quoted.get((EXACT, q), 0) + 1
            n = self.normalized_quote(q)
            self._quoted[(NORMALIZED, n)] = self._quoted.get((NORMALIZED, n), 0) + 1

    def normalized_quote(self, quote: str) -> str:
        return normalize(quote)[0].strip()

    def locate(self, quote: str, occurrence: int | None = None, hint: int | None = None) -> Located:
        """Place one quote (see the module docstring)."""
        if not quote.strip():
            return Located(NOT_FOUND)
        found = self._choose(EXACT, quote, self._found(EXACT, quote), len(quote), occurrence, hint, int)
        if found is not None or self.matching == EXACT:
            return found or Located(NOT_FOUND)
        norm, where = self.normalized()
        q = self.normalized_quote(quote)
        if not q:
            return Located(NOT_FOUND)
        found = self._choose(NORMALIZED, q, self._found(NORMALIZED, q), len(q), occurrence, hint, where.__getitem__)
        if found is not None or self.matching == NORMALIZED:
            return found or Located(NOT_FOUND)
        if len(q) > FUZZY_MAX_CHARS:
            return Located(NOT_FOUND, note=f"not aligned fuzzily: longer than {FUZZY_MAX_CHARS:,} characters")
        if q not in self._fuzzy_found:
            self._fuzzy_found[q] = self._fuzzy(q, norm, where)
        return self._fuzzy_found[q]

    def _found(self, step: str, quote: str) -> list[int]:
        """Every place of ``quote`` in the text searched by ``step``, found once per document."""
        key = (step, quote)
        if key not in self._places:
            self._places[key] = _places(self.text if step == EXACT else self.normalized()[0], quote)
        return self._places[key]

    def normalized(self) -> tuple[str, list[int]]:
        if self._norm is None:
            self._norm = normalize(self.text)
        return self._norm

    def _choose(self, step: str, quote: str, places: list[int], size: int, occurrence: int | None, hint: int | None,
                to_doc: Callable[[int], int]) -> Located | None:
        """The place of a quote among ``places`` (offsets in the searched text; ``back`` maps one to the document)."""
        if not places:
            return None
        used = self._used.setdefault((step, quote), set())
        ambiguous = False
        if occurrence is not None:
            if not 1 <= occurrence <= len(places):  # found, but not that often: no other step second-guesses it
                return Located(NOT_FOUND, places=len(places))
            start = places[occurrence - 1]
        elif hint is not None:
            i = bisect.bisect_left(places, hint, key=to_doc)  # places in document order: the nearest are around i
            near = sorted((abs(to_doc(places[j]) - hint), places[j]) for j in range(i - 2, i + 2) if 0 <= j < len(places))
            start = near[0][1]
            ambiguous = len(near) > 1 and near[1][0] == near[0][0]
        else:
            k = self._free.get((step, quote), 0)
            while k < len(places) and places[k] in used:
                k += 1
            self._free[(step, quote)] = k
            start = places[k] if k < len(places) else places[0]
            ambiguous = k == len(places) or len(places) > self._quoted.get((step if step == EXACT else NORMALIZED, quote), 1)
        used.add(start)
        begin = to_doc(start)
        end = to_doc(start + size - 1) + 1
        return Located(AMBIGUOUS if ambiguous else step, begin, end, None, len(places))

    def _fuzzy(self, quote: str, norm: str, where: list[int]) -> Located:
        try:
            from rapidfuzz import fuzz
        except ImportError:  # pragma: no cover - rapidfuzz is a dependency; a broken install says so
            raise FuzzyUnavailable("fuzzy quote matching needs rapidfuzz: pip install rapidfuzz "
                                   "(or set [input] matching = \"normalized\")") from None
        hit = fuzz.partial_ratio_alignment(quote, norm, score_cutoff=self.threshold)
        if hit is None or hit.dest_end <= hit.dest_start:
            return Located(NOT_FOUND)
        begin, end = hit.dest_start, hit.dest_end
        while begin < end and norm[begin] == " ":
            begin += 1
        while end > begin and norm[end - 1] == " ":
            end -= 1
        while 0 < begin < end and norm[begin - 1].isalnum() and norm[begin].isalnum():  # whole words: a cut one completed
            begin -= 1
        while begin < end < len(norm) and norm[end].isalnum() and norm[end - 1].isalnum():
            end += 1
        if end <= begin:
            return Located(NOT_FOUND)
        return Located(FUZZY, where[begin], where[end - 1] + 1, round(float(hit.score), 2), 1)

