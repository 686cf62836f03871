"""Tokenizers: a document's text -> the character extents of its word units.

A tokenizer returns two int64 arrays ``(starts, ends)``, sorted, with no
whitespace tokens, ``ends`` exclusive. Specs:

- ``spacy:<lang>``: the tokenizer of ``spacy.blank(lang)`` (rule-based, no model
  download), whitespace tokens dropped; token extent ``idx … idx + len(text)``.
- ``regex``: runs of word characters, and every other non-space character alone.
- ``whitespace``: maximal runs of non-whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

import numpy as np

from ..errors import UnitizeError

TokenExtents = tuple[np.ndarray, np.ndarray]
Tokenizer = Callable[[str], TokenExtents]

_PATTERNS = {
    "regex": re.compile(r"\w+|[^\w\s]"),
    "whitespace": re.compile(r"\S+"),
}


class TokenizerError(UnitizeError):
    """An unknown or unusable tokenizer spec."""


def _regex_tokenizer(pattern: re.Pattern[str]) -> Tokenizer:
    def tokenize(text: str) -> TokenExtents:
        spans = [m.span() for m in pattern.finditer(text)]
        if not spans:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy()
        arr = np.asarray(spans, dtype=np.int64)
        return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])

    return tokenize


def _spacy_tokenizer(lang: str) -> Tokenizer:
    try:
        import spacy
        from spacy.attrs import IDX, IS_SPACE, LENGTH
    except ImportError as exc:  # pragma: no cover - spacy is a dependency
        raise TokenizerError("the spacy tokenizer needs the 'spacy' package") from exc
    try:
        nlp = spacy.blank(lang)
    except Exception as exc:
        raise TokenizerError(f"spaCy has no language {lang!r} (tokenizer 'spacy:{lang}'): {exc}") from exc
    nlp.max_length = 2**31 - 1

    def tokenize(text: str) -> TokenExtents:
        doc = nlp.make_doc(text)
        if len(doc) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy()
        arr = doc.to_array([IDX, LENGTH, IS_SPACE]).astype(np.int64)
        keep = arr[:, 2] == 0
        starts = arr[keep, 0]
        # LENGTH counts characters of the token text (trailing whitespace excluded)
        return np.ascontiguousarray(starts), np.ascontiguousarray(starts + arr[keep, 1])

    return tokenize


@cache
def get_tokenizer(spec: str) -> Tokenizer:
    """Return the tokenizer named by ``spec`` (see module docstring)."""
    if spec in _PATTERNS:
        return _regex_tokenizer(_PATTERNS[spec])
    if spec.startswith("spacy:"):
        lang = spec.split(":", 1)[1]
        if not lang:
            raise TokenizerError("tokenizer 'spacy:' needs a language code, e.g. 'spacy:tr'")
        return _spacy_tokenizer(lang)
    raise TokenizerError(f"unknown tokenizer {spec!r}; use 'spacy:<lang>', 'regex' or 'whitespace'")


#: the commonest short words of languages spaCy has blank pipelines for (lowercase), to tell a study's language
FUNCTION_WORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "it", "was", "for", "with", "on", "as", "are", "this", "be", "at", "by", "not", "you"},
    "de": {"der", "die", "und", "das", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "sich", "auf", "für", "von", "dem", "des", "im", "auch", "es"},
    "fr": {"le", "la", "les", "et", "des", "est", "une", "un", "du", "que", "pas", "pour", "dans", "qui", "sur", "au", "avec", "ce", "il", "elle"},
    "es": {"el", "la", "los", "las", "y", "que", "es", "en", "un", "una", "por", "con", "para", "del", "se", "no", "lo", "al", "como", "su"},
    "it": {"il", "la", "che", "di", "e", "è", "un", "una", "per", "non", "del", "della", "con", "sono", "gli", "le", "si", "al", "nel", "lo"},
    "nl": {"de", "het", "een", "en", "van", "is", "dat", "niet", "op", "te", "met", "voor", "zijn", "die", "er", "ook", "aan", "als", "maar", "bij"},
    "pt": {"o", "a", "os", "as", "e", "que", "de", "do", "da", "não", "um", "uma", "para", "com", "em", "no", "na", "se", "por", "é"},
    "tr": {"ve", "bir", "bu", "da", "de", "için", "ile", "çok", "ama", "gibi", "daha", "ne", "o", "var", "olarak", "kadar", "en", "mi", "değil", "sonra"},
}
_WORD = re.compile(r"[^\W\d_]+")


def guess_language(texts: list[str], *, sample_words: int = 20_000, share: float = 0.05) -> str | None:
    """The language of ``texts`` among :data:`FUNCTION_WORDS`' when its function words make at least ``share``
    of the first ``sample_words`` words and twice as many as any other's; else ``None`` (unknown: keep ``xx``)."""
    words: list[str] = []
    for text in texts:
        words += (w.lower() for w in _WORD.findall(text))
        if len(words) >= sample_words:
            break
    if len(words) < 20:
        return None
    words = words[:sample_words]
    hits = sorted(((sum(w in vocabulary for w in words), lang) for lang, vocabulary in FUNCTION_WORDS.items()), reverse=True)
    (best, lang), (second, _) = hits[0], hits[1]
    return lang if best >= share * len(words) and best >= 2 * second else None

