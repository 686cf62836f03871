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
    #: (document code << 32 | annotator code) -> the assignment's index (integers: a crowd roster has millions of rows)
    _assigned: dict[int, int] = field(default_factory=dict)
    #: per assignment, in the order first met: document, annotator and source codes; and its span rows
    _assignments: array = field(default_factory=lambda: array("q"))
    _span_rows: array = field(default_factory=lambda: array("q"))
    _doc_names: list[str] = field(default_factory=list)
    _who_names: list[str] = field(default_factory=list)

    def assign(self, doc: str, who: str, source: str) -> int:
        """Record an assignment (roster row, or first span of a document and annotator) unless it is known; its index."""
        d, a = _code(self._docs, doc, self._doc_names), _code(self._who, who, self._who_names)
        index = self._assigned.get(d << 32 | a)
        if index is None:
            index = self._assigned[d << 32 | a] = len(self._span_rows)
            self._assignments.extend((d, a, _code(self._sources, source)))
            self._span_rows.append(0)
        return index

    def assigned(self, doc: str, who: str) -> bool:
        """Whether the annotator has an assignment for the document."""
        d, a = self._docs.get(doc), self._who.get(who)
        return d is not None and a is not None and (d << 32 | a) in self._assigned

    def owner(self, index: int) -> tuple[str, str]:
        """The (document, annotator) of assignment ``index``."""
        return self._doc_names[self._assignments[3 * index]], self._who_names[self._assignments[3 * index + 1]]

    def add(self, index: int, label: str | None, begin: int, end: int, line: int) -> None:
        """A span row of assignment ``index``; ``begin``, ``end`` -1 when unreadable."""
        self._span_rows[index] += 1
        self._spans.extend((self._assignments[3 * index], self._assignments[3 * index + 1], _code(self._labels, label), begin, end, line))

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
        assigned = np.column_stack([np.frombuffer(self._assignments, dtype=np.int64).reshape(-1, 3),
                                    np.frombuffer(self._span_rows, dtype=np.int64)]) if self._span_rows else np.zeros((0, 4), np.int64)
        self._spans, self._assigned, self._assignments, self._span_rows = array("q"), {}, array("q"), array("q")
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


def _code(codes: dict, name: object, names: list | None = None) -> int:
    """The code of ``name`` in ``codes``, a new one (the next integer; ``name`` appended to ``names``) when it has none."""
    code = codes.get(name)
    if code is None:
        code = codes[name] = len(codes)
        if names is not None:
            names.append(name)
    return code
