"""Unit spaces: the coding units of every document, laid end to end (DESIGN.md §4, step 2).

``char`` units are the characters of a document, every one counted; ``word`` units
are the tokens of the configured tokenizer (each document is tokenized once per
run, whatever the number of annotators and groups). Pure NumPy over the texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .errors import RunError
from .model import Corpus
from .progress import Progress, no_progress
from .tokenize import get_tokenizer


@dataclass(frozen=True)
class UnitSpace:
    """The coding units of every document with a text, laid end to end.

    Document ``d`` has ``n_units[d]`` units at global positions
    ``base[d] …``; its characters start at global position ``char_base[d]``.
    For word units ``starts``/``ends`` are the global character extents of
    every token.
    """

    unit: str
    doc_ids: list[str]
    n_units: np.ndarray
    base: np.ndarray
    char_base: np.ndarray
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None

    def local_extent(self, doc: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Document-local character ``[begin, end)`` of global units ``u`` of documents ``doc``."""
        if self.unit == "char":
            begin = u - self.char_base[doc]
            return begin, begin + 1
        return self.starts[u] - self.char_base[doc], self.ends[u] - self.char_base[doc]


def cumulative(n: np.ndarray) -> np.ndarray:
    """Start positions of consecutive blocks of sizes ``n`` (an exclusive prefix sum)."""
    base = np.zeros(n.size, dtype=np.int64)
    if n.size:
        np.cumsum(n[:-1], out=base[1:])
    return base


def build_spaces(
    corpus: Corpus, units: Iterable[str], tokenizer: str, progress: Progress = no_progress
) -> dict[str, UnitSpace]:
    """Character and/or word unit spaces; each document is tokenized once."""
    doc_ids = sorted(d for d, doc in corpus.documents.items() if doc.text is not None)
    lengths = np.array([len(corpus.documents[d].text) for d in doc_ids], dtype=np.int64)
    char_base = cumulative(lengths)
    spaces: dict[str, UnitSpace] = {}
    units = set(units)
    if "char" in units:
        spaces["char"] = UnitSpace("char", doc_ids, lengths, char_base, char_base)
    if "word" in units:
        tokenize = None if tokenizer == "given" else get_tokenizer(tokenizer)
        starts, ends, counts = [], [], []
        for d, cb in zip(progress(doc_ids, "tokenizing"), char_base):
            if tokenize is None:
                s, e = _given_tokens(corpus, d)
            else:
                s, e = tokenize(corpus.documents[d].text)
            starts.append(s + cb)
            ends.append(e + cb)
            counts.append(s.size)
        n_tok = np.array(counts, dtype=np.int64)
        spaces["word"] = UnitSpace(
            "word",
            doc_ids,
            n_tok,
            cumulative(n_tok),
            char_base,
            np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64),
            np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64),
        )
    return spaces


def _given_tokens(corpus: Corpus, doc_id: str) -> tuple[np.ndarray, np.ndarray]:
    tokens = corpus.documents[doc_id].tokens
    if tokens is None:
        raise RunError(
            f"tokenizer 'given': format {corpus.format!r} gives no tokens for document {doc_id}; "
            "choose a tokenizer (spacy:<lang>, regex or whitespace)"
        )
    return np.asarray(tokens[0], dtype=np.int64), np.asarray(tokens[1], dtype=np.int64)
