"""Write a spaCy ``DocBin``: ``annotations/docs.spacy``, one ``Doc`` per document and annotator.

Each ``Doc``'s text is the document's own, every character kept (``doc.text`` equals it); its
``user_data["unitize"]`` names the document and the annotator; the spans of each layer are the span
group ``doc.spans[<layer>]`` (``label_`` the label, empty for none). The tokens are the study
tokenizer's, cut further where a span begins or ends inside one, so every span is a token span.
spaCy spans are contiguous: discontinuous spans are reported, not written; and an empty label
cannot be told from none.
"""

from __future__ import annotations

import bisect
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

TRAITS = WriterTraits(discontinuous=False, label=r"(?s).+", text="embedded")


def _words(text: str, cuts: set[int], begins: set[int], ends: set[int]) -> tuple[list[str], list[bool], list[int]]:
    """Words, their trailing-space flags and their start offsets: ``text`` cut at ``cuts`` and where whitespace
    begins or ends; a single space after a word is the word's trailing space unless a span begins on it or
    ends after it."""
    points = set(cuts) | {0, len(text)}
    points |= {i for i in range(1, len(text)) if text[i].isspace() != text[i - 1].isspace()}
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


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as one spaCy DocBin (a Doc per document and annotator) and a study.toml."""
    from spacy.tokens import DocBin

    written = Written()
    held = holdable(corpus, TRAITS, "spacy")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    vocab = blank_vocab()
    bin_ = DocBin(store_user_data=True)
    for (annotator, doc_id), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc_id)
        if view is None:
            continue
        bin_.add(_doc(view, word_tokens(corpus.documents[doc_id], source.get("tokenizer")), elements, vocab, doc_id, annotator))
        written.spans += len(elements)
        written.relations += len(elements)
    name = "annotations/docs.spacy"
    target.file(name).write_bytes(bin_.to_bytes())
    target.record(name, len(bin_))
    written.add_file("annotations")
    written.study = {"format": "spacy", "annotations": name}
    return written


TARGET = Target("spacy", "a spaCy DocBin: one Doc per document and annotator, spans in doc.spans[<layer>]", write, TRAITS, reads_as="spacy")
