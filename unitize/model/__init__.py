"""The canonical model: the only vocabulary shared by adapters, unitizers and writers (DESIGN.md §2).

- :mod:`~unitize.model.corpus` — the records an adapter reads (:class:`Span`, :class:`ItemLabel`,
  :class:`Document`) and the :class:`Corpus` that holds them;
- :mod:`~unitize.model.traits` — what a format implies for unitizing its data (:class:`FormatTraits`);
- :mod:`~unitize.model.text` — raw text decoding and the offset conventions of every tool;
- :mod:`~unitize.model.findings` — the stable codes of the validation report;
- :mod:`~unitize.model.report_rows` — a run's findings as sorted, compressed report lines (:class:`Findings`);
- :mod:`~unitize.model.item_records` — flat-label records held compactly (:class:`ItemRecords`);
- :mod:`~unitize.model.codes` — Arrow string columns as integer codes, and back.
"""

from .corpus import (
    Absent,
    Corpus,
    Document,
    Finding,
    InputFile,
    ItemLabel,
    ItemLabels,
    Span,
    SpanStream,
    Submission,
    Universe,
    not_missing,
)

__all__ = [
    "Absent",
    "Corpus",
    "Document",
    "Finding",
    "InputFile",
    "ItemLabel",
    "ItemLabels",
    "Span",
    "SpanStream",
    "Submission",
    "Universe",
    "not_missing",
]
