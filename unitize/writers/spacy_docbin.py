"""Write a spaCy ``DocBin``: ``annotations/docs.spacy``, one ``Doc`` per document and annotator.

Each ``Doc``'s text is the document's own, every character kept (``doc.text`` equals it); its
``user_data["unitize"]`` names the document and the annotator; the spans of each layer are the span
group ``doc.spans[<layer>]`` (``label_`` the label, empty for none). The tokens are the study
tokenizer's, cut further where a span begins or ends inside one, so every span is a token span.
spaCy spans are contiguous: discontinuous spans are reported, not written; and an empty label
cannot be told from none. More than :data:`SHARD` Docs are written as a folder of DocBin files, each of
:data:`SHARD` (the reader reads the folder).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.spacy_docbin import TEXT, USER_DATA, blank_vocab
from ..model import Corpus, Span
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts, by_submission, word_tokens
from .holds import holdable
from .offsets import TargetText

_WHITESPACE = re.compile(r"\s+")
TRAITS = WriterTraits(discontinuous=False, label=r"(?s).+", text="embedded")


def _words(text: str, cuts: set[int], begins: set[int], ends: set[int]) -> tuple[list[str], list[bool], list[int]]:
    """Words, their trailing-space flags and their start offsets: ``text`` cut at ``cuts`` and where whitespace
    begins or ends; a single space after a word is the word's trailing space unless a span begins on it or
    ends after it."""
    points = set(cuts) | {0, len(text)}
    points |= {i for m in _WHITESPACE.finditer(text) for i in m.span()}  # where whitespace begins or ends
    bounds = sorted(p for p in points if 0 <= p <= len(text))
    words: list[str] = []
    spaces: list[bool] = []
    starts: list[int] = []
    for a, b in zip(bounds, bounds[1:]):
        piece = text[a:b]
        if piece == " " and words and not spaces[-1] and not words[-1].isspace() and a not in begins and b not in ends:
            spaces[-1] = True
            continue
        words.append(piece)
        spaces.append(False)
        starts.append(a)
    return words, spaces, starts


def _doc(view: TargetText, tokens: tuple[np.ndarray, np.ndarray], elements: list[list[Span]], vocab: Any, doc_id: str, annotator: str) -> Any:
    from spacy.tokens import Doc
    from spacy.tokens import Span as SpacySpan

    text = view.text
    pairs = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
    tok = view.convert(np.column_stack(tokens).ravel()).tolist() if len(tokens[0]) else []
    begins, ends = {b for b, _ in pairs}, {e for _, e in pairs}
    words, spaces, starts = _words(text, set(tok) | begins | ends, begins, ends)
    doc = Doc(vocab, words=words, spaces=spaces)
    groups: dict[str, list[Any]] = {}
    for (b, e), frags in zip(pairs, elements):
        # b starts a word (no span-begin is swallowed as a trailing space); the span's last word is the one before
        # the first word starting at or after e (a space after e may be that word's trailing space)
        i, j = bisect.bisect_left(starts, b), bisect.bisect_left(starts, e)
        groups.setdefault(frags[0].layer, []).append(SpacySpan(doc, i, i if b == e else j, label=frags[0].label or ""))
    for layer, spans in groups.items():
        doc.spans[layer] = spans
    doc.user_data[USER_DATA] = {"doc_id": doc_id, "annotator": annotator}
    return doc


#: Docs per DocBin file: a larger corpus is written as a folder of files of this many, so memory holds one file's
SHARD = 10_000


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as a spaCy DocBin (a Doc per document and annotator) and a study.toml: ``annotations/docs.spacy``,
    or ``annotations/docs-00001.spacy``, … of :data:`SHARD` Docs each when there are more."""
    from spacy.tokens import DocBin

    written = Written()
    held = holdable(corpus, TRAITS, "spacy")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    vocab = blank_vocab()
    submissions = [(key, elements) for key, elements in by_submission(corpus, held.spans).items() if texts.get(key[1]) is not None]
    shards = [submissions[k:k + SHARD] for k in range(0, len(submissions), SHARD)] or [[]]
    tokens: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # each document tokenized once, whoever annotated it
    with _encoders_read_once():
        for number, shard in enumerate(shards, 1):
            bin_ = DocBin(store_user_data=True)
            for (annotator, doc_id), elements in shard:
                view = texts.get(doc_id)
                assert view is not None
                if doc_id not in tokens:
                    tokens[doc_id] = word_tokens(corpus.documents[doc_id], source.get("tokenizer"))
                bin_.add(_doc(view, tokens[doc_id], elements, vocab, doc_id, annotator))
                written.spans += len(elements)
                written.relations += len(elements)
            name = "annotations/docs.spacy" if len(shards) == 1 else f"annotations/docs-{number:05d}.spacy"
            target.file(name).write_bytes(bin_.to_bytes())
            target.record(name, len(bin_))
            written.add_file("annotations")
    written.study = {"format": "spacy", "annotations": "annotations/docs.spacy" if len(shards) == 1 else "annotations"}
    return written


@contextmanager
def _encoders_read_once() -> Iterator[None]:
    """srsly (spaCy's serializer) looks its msgpack encoders up among every installed package's entry points each time
    it packs — twice per Doc, 2 ms each (catalogue reads every distribution's metadata); for the write they are
    looked up once (the same encoders: those of the entry points and those registered in code)."""
    import srsly.msgpack as msgpack

    registry = msgpack.msgpack_encoders
    found = registry.get_all()
    registry.get_all = lambda: dict(found)
    try:
        yield
    finally:
        del registry.get_all


TARGET = Target("spacy", "a spaCy DocBin: one Doc per document and annotator, spans in doc.spans[<layer>]", write, TRAITS, reads_as="spacy")
