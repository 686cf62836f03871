"""Unit spaces: the coding units of every document, laid end to end (DESIGN.md §4, step 2).

``char`` units are the characters of a document, every one counted; ``word`` units
are the tokens of the configured tokenizer (each document is tokenized once per
run, whatever the number of annotators and groups). Pure NumPy over the texts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import overload

import numpy as np

from ..errors import RunError
from ..model import Corpus, Document
from ..model.documents import lengths as text_lengths
from ..model.documents import texts, with_text
from ..runtime.executors import Executor, forked_pool
from ..runtime.mapped import Appended
from ..runtime.progress import Progress, Sized, no_progress
from .tokenize import get_tokenizer
from .unitizers import UnitSpace, cumulative

#: a spaCy tokenizer runs in a forked process of its own once the texts hold this many characters, so that
#: a long run's own process (and the processes it forks later) never hold spaCy (about 60 MiB)
OWN_PROCESS_CHARS = 1_000_000
#: tokenization is cut into chunks of consecutive documents (sorted ids) of at least this many characters:
#: the tasks of ``--executor`` (decided from the texts alone, so every executor tokenizes the same chunks)
TOKENIZE_CHUNK_CHARS = 250_000


def tokenize_chunk(task: tuple[str, list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokenize a chunk of texts (a task of an executor: runs in a worker, returns column arrays).

    ``task`` is ``(tokenizer spec, texts)``; the result is the token starts and ends, each text's
    own offsets, concatenated (int64), and the number of tokens of each text.
    """
    spec, texts = task
    tokenize = get_tokenizer(spec)
    starts, ends, counts = [], [], np.zeros(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        s, e = tokenize(text)
        starts.append(s)
        ends.append(e)
        counts[i] = s.size
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(starts) if starts else empty, np.concatenate(ends) if ends else empty, counts)


def chunks(lengths: np.ndarray, at_least: int | None = None) -> list[slice]:
    """Consecutive runs of documents, each closed once it holds ``at_least`` (default
    :data:`TOKENIZE_CHUNK_CHARS`) characters; the last may hold fewer."""
    at_least = at_least or TOKENIZE_CHUNK_CHARS
    out, start, held = [], 0, 0
    for i, n in enumerate(lengths.tolist()):
        held += n
        if held >= at_least:
            out.append(slice(start, i + 1))
            start, held = i + 1, 0
    if start < lengths.size:
        out.append(slice(start, lengths.size))
    return out


def build_spaces(
    corpus: Corpus, units: Iterable[str], tokenizer: str, progress: Progress = no_progress, executor: Executor | None = None
) -> dict[str, UnitSpace]:
    """Character and/or word unit spaces; each document is tokenized once.

    Tokenization runs per chunk of documents (:func:`chunks`) through ``executor`` (default: here,
    in order); the chunks and so the unit spaces are the same for every executor.
    """
    doc_ids = with_text(corpus.documents)
    lengths = text_lengths(corpus.documents, doc_ids)
    char_base = cumulative(lengths)
    spaces: dict[str, UnitSpace] = {}
    units = set(units)
    if "char" in units:
        spaces["char"] = UnitSpace("char", doc_ids, lengths, char_base, char_base, int(lengths.sum()))
    if "word" in units:
        small = np.int32 if int(lengths.sum()) < (1 << 31) - 2 else np.int64
        if tokenizer == "given":
            cut = [slice(i, i + 1) for i in range(len(doc_ids))]
            tokens = ((s, e, np.array([s.size], np.int64)) for s, e in (_given_tokens(corpus, d) for d in doc_ids))
            n_tok, starts, ends = _laid(tokens, cut, char_base, small)
        else:
            cut = chunks(lengths)
            tasks = _Tasks(tokenizer, corpus.documents, doc_ids, cut)  # each chunk's texts made when it is taken
            long_spacy = tokenizer.startswith("spacy:") and int(lengths.sum()) >= OWN_PROCESS_CHARS
            if executor is not None and executor.parallel:
                get_tokenizer(tokenizer)  # a bad spec fails here, before any worker starts
                n_tok, starts, ends = _laid(executor.map(tokenize_chunk, tasks), cut, char_base, small)
            elif long_spacy and (own := forked_pool(1)) is not None:
                with own:  # a bad spec fails in the first chunk, raised here
                    n_tok, starts, ends = _laid((own.submit(tokenize_chunk, t).result() for t in progress(Sized(tasks, len(tasks)), "tokenizing")),
                                                cut, char_base, small)
            else:
                n_tok, starts, ends = _laid((tokenize_chunk(t) for t in progress(Sized(tasks, len(tasks)), "tokenizing")), cut, char_base, small)
        spaces["word"] = UnitSpace("word", doc_ids, n_tok, cumulative(n_tok), char_base, int(lengths.sum()), starts, ends)
    return spaces


class _Tasks(Sequence[tuple[str, list[str]]]):
    """The tokenization tasks, ``(tokenizer spec, texts)`` a chunk each, each made when it is taken: the texts of a
    crowd corpus (a table's, held as one array) are not all made Python strings at once."""

    def __init__(self, spec: str, documents: Mapping[str, Document], doc_ids: list[str], cut: list[slice]):
        self._spec, self._documents, self._doc_ids, self._cut = spec, documents, doc_ids, cut

    def __len__(self) -> int:
        return len(self._cut)

    @overload
    def __getitem__(self, index: int) -> tuple[str, list[str]]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, list[str]]]: ...

    def __getitem__(self, index: int | slice) -> tuple[str, list[str]] | list[tuple[str, list[str]]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._spec, texts(self._documents, self._doc_ids[self._cut[index]])


def _laid(results: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], cut: list[slice], char_base: np.ndarray,
          small: type[np.integer]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens per document, and every token's global character extent (``small``: 32 bits where they fit, a crowd corpus
    has millions), from each chunk's (document-local starts, ends, tokens per document) as it comes: a chunk is let go
    once it is laid, and the extents, read by each work partition and written once, go to a mapped scratch file as they
    come once they are large (:class:`~unitize.runtime.mapped.Appended`): the whole is never on the heap."""
    counts, starts, ends = [], Appended(small), Appended(small)
    for c, (s, e, n) in zip(cut, results, strict=True):
        shift = np.repeat(char_base[c].astype(small), n)
        starts.add(s.astype(small) + shift)
        ends.add(e.astype(small) + shift)
        counts.append(n)
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(counts), starts.array()[0], ends.array()[0]


def _given_tokens(corpus: Corpus, doc_id: str) -> tuple[np.ndarray, np.ndarray]:
    tokens = corpus.documents[doc_id].tokens
    if tokens is None:
        raise RunError(
            f"tokenizer 'given': format {corpus.format!r} gives no tokens for document {doc_id}; "
            "choose a tokenizer (spacy:<lang>, regex or whitespace)"
        )
    return np.asarray(tokens[0], dtype=np.int64), np.asarray(tokens[1], dtype=np.int64)
