"""A span table's spans and assignments held as arrays, made into a corpus a batch of documents at a time.

A crowd study (ToxicSpans: 16,100 texts, 3,579 workers) is one group of many documents; a
:class:`~unitize.model.Span` per row costs some 300 bytes, the arrays here 32. :class:`SpanRows`
collects the rows a reader kept (in file order) and the (document, annotator) assignments;
:meth:`SpanRows.batches` cuts the documents, in sorted order, into batches of about
:data:`BATCH_SPANS` spans, each a :class:`RowBatch` that makes its documents' spans and
submissions, in the order a whole read gives them. The batches are what a
:class:`~unitize.model.SpanStream` hands over; a corpus read whole is the one batch of every
document.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from ..model import Corpus, Span, Submission

#: a streamed span table hands over whole documents, a batch once it holds this many spans
BATCH_SPANS = 1 << 16


@dataclass
class RowBatch:
    """The spans and assignments of some documents, as arrays of codes into its own name lists (picklable)."""

    group: str
    layer: str
    source: str
    docs: list[str]
    annotators: list[str]
    labels: list[str | None]
    sources: list[str]
    #: per span, in file order: document, annotator and label codes, begin, end (-1: unreadable), line
    spans: np.ndarray
    #: per assignment, in the order first met: document, annotator, source codes and its span rows
    assignments: np.ndarray

    def corpus(self, format_name: str) -> Corpus:
        """The batch's spans (an unreadable one with offsets -1, as the reader reported it) and submissions."""
        docs, who, labels, group, layer, source = self.docs, self.annotators, self.labels, self.group, self.layer, self.source
        return Corpus(
            format=format_name,
            spans=[Span(who[a], docs[d], group, f"line {line}", layer, 0, begin, end, labels[lab], {}, source, line)
                   for d, a, lab, begin, end, line in self.spans.tolist()],
            submissions=[Submission(self.sources[s], who[a], docs[d], group, n) for d, a, s, n in self.assignments.tolist()],
        )


@dataclass
class SpanRows:
    """The rows of a span table a reader kept, and who was assigned (or annotated) which document."""

    group: str
    layer: str
    source: str = ""
    _docs: dict[str, int] = field(default_factory=dict)
    _who: dict[str, int] = field(default_factory=dict)
    _labels: dict[str | None, int] = field(default_factory=dict)
    _sources: dict[str, int] = field(default_factory=dict)
    _spans: array = field(default_factory=lambda: array("q"))
    #: (document code, annotator code) -> [source code, span rows], in the order first met
    _assigned: dict[tuple[int, int], list[int]] = field(default_factory=dict)

    def assign(self, doc: str, who: str, source: str) -> None:
        """Record an assignment (roster row, or first span of a document and annotator) unless it is known."""
        key = (_code(self._docs, doc), _code(self._who, who))
        if key not in self._assigned:
            self._assigned[key] = [_code(self._sources, source), 0]

    def assigned(self, doc: str, who: str) -> bool:
        """Whether the annotator has an assignment for the document."""
        return (self._docs.get(doc, -1), self._who.get(who, -1)) in self._assigned

    def add(self, doc: str, who: str, label: str | None, begin: int, end: int, line: int) -> None:
        """A span row of an assigned (document, annotator); ``begin``, ``end`` -1 when unreadable."""
        d, a = self._docs[doc], self._who[who]
        self._assigned[(d, a)][1] += 1
        self._spans.extend((d, a, _code(self._labels, label), begin, end, line))

    @property
    def annotators(self) -> list[str]:
        """Every annotator with an assignment, sorted."""
        return sorted(self._who)

    @property
    def labels(self) -> list[str | None]:
        """Every label of a span row (None: unlabelled), in the order first met."""
        return list(self._labels)

    @property
    def documents(self) -> list[str]:
        """Every document with an assignment, in the order first met."""
        return list(self._docs)

    def batches(self, size: int | None = None) -> list[RowBatch]:
        """The rows as batches of whole documents in sorted order, each closed once it holds ``size`` spans
        (default :data:`BATCH_SPANS`; 0: one batch of every document). The rows are let go."""
        size = BATCH_SPANS if size is None else size
        spans = np.frombuffer(self._spans, dtype=np.int64).reshape(-1, 6).copy() if self._spans else np.zeros((0, 6), np.int64)
        assigned = np.array([(d, a, s, n) for (d, a), (s, n) in self._assigned.items()], dtype=np.int64).reshape(-1, 4)
        self._spans, self._assigned = array("q"), {}
        names = list(self._docs)
        order = sorted(range(len(names)), key=names.__getitem__)
        per_doc = np.bincount(spans[:, 0], minlength=len(names))[order] if names else np.zeros(0, np.int64)
        batch_of = np.zeros(len(names), dtype=np.int64)
        batch_of[order] = _cuts(per_doc, size)
        n_batches = int(batch_of.max()) + 1 if names else 0
        out = []
        for b in range(n_batches):
            rows, subs = spans[batch_of[spans[:, 0]] == b], assigned[batch_of[assigned[:, 0]] == b]
            used = np.flatnonzero(batch_of == b)  # the batch's documents, re-coded over themselves
            local = np.full(len(names), -1, dtype=np.int64)
            local[used] = np.arange(used.size)
            rows[:, 0], subs[:, 0] = local[rows[:, 0]], local[subs[:, 0]]
            out.append(RowBatch(self.group, self.layer, self.source, [names[i] for i in used], list(self._who), list(self._labels),
                                list(self._sources), rows, subs))
        return out


def _cuts(per_doc: np.ndarray, size: int) -> np.ndarray:
    """Per document (in order), its batch: a batch closes once it holds ``size`` spans (0: never)."""
    if not size:
        return np.zeros(per_doc.size, dtype=np.int64)
    held = np.cumsum(per_doc)
    batch = np.zeros(per_doc.size, dtype=np.int64)
    start, b = 0, 0
    while start < per_doc.size:
        base = held[start - 1] if start else 0
        stop = int(np.searchsorted(held, base + size, side="left")) + 1  # the document that reaches size closes it
        batch[start:stop] = b
        start, b = stop, b + 1
    return batch


def _code(codes: dict, name: object) -> int:
    code = codes.get(name)
    if code is None:
        code = codes[name] = len(codes)
    return code
