"""The canonical model: the only vocabulary shared by adapters, unitizers and writers.

An adapter turns one input format into a :class:`Corpus`; everything downstream
reads only these types (DESIGN.md §2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import RunError
from .traits import FormatTraits


@dataclass(frozen=True, slots=True)
class Document:
    """A source text, decoded exactly as the annotation tool counted it.

    ``text`` is ``None`` when the raw text could not be found or decoded; such a
    document can still be validated, but it has no coding units.
    """

    doc_id: str
    text: str | None
    source: str | None = None
    encoding: str | None = None
    newline: str | None = None
    bom: bool = False
    size: int | None = None
    sha256: str | None = None
    #: the document's own tokens as code-point ``(starts, ends)`` NumPy arrays (``ends``
    #: exclusive), for formats that carry a tokenization (tokenizer ``"given"``)
    tokens: tuple[Any, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Span:
    """One fragment of one annotated element (an argument, a connective, an entity).

    Offsets are code points into ``Document.text``, ``end`` exclusive. An
    adapter that could not read a fragment's offsets sets both to -1 and reports
    the fragment, so it is still counted.
    """

    annotator: str
    doc_id: str
    group: str
    record: str
    layer: str
    fragment: int
    begin: int
    end: int
    label: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    line: int | None = None
    stored_text: str | None = None

    @property
    def valid(self) -> bool:
        return self.begin >= 0 and self.end >= 0


@dataclass(slots=True)
class ItemLabel:
    """One annotator's answer for one item in one group (flat labels, no text offsets).

    ``group`` is the question or scheme level; ``label`` is ``None`` when the
    annotator's record exists but holds no label (an empty cell or a configured
    missing token). An item an annotator never saw has no ``ItemLabel`` at all.
    """

    group: str
    item: str
    annotator: str
    label: str | None
    source: str = ""
    line: int | None = None


class ItemLabels(Protocol):
    """Where a corpus keeps its flat-label records, in reading order: a list, or
    :class:`unitize.model.item_records.ItemRecords` (compact, spilled to disk when large)."""

    def append(self, record: ItemLabel, /) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[ItemLabel]: ...


def _no_labels() -> ItemLabels:
    labels: list[ItemLabel] = []
    return labels


@dataclass(frozen=True, slots=True)
class Submission:
    """One annotator's annotation of one document in one group (a DATT file, a brat .ann).

    ``records`` is the number of annotation records (relations, entities) it
    holds; zero means the annotator looked and marked nothing.
    """

    source: str
    annotator: str
    doc_id: str
    group: str
    records: int


@dataclass(frozen=True, slots=True)
class InputFile:
    """An input file as read, for the manifest."""

    path: str
    role: str
    size: int
    sha256: str


@dataclass(slots=True)
class Finding:
    """One validation finding: a row of ``report.jsonl``.

    ``file`` and ``record`` name what it is about (``record`` is ``None`` for a
    whole file); ``action`` says what unitize did about it.
    """

    code: str
    severity: str
    message: str
    action: str
    file: str | None = None
    record: str | None = None
    doc: str | None = None
    group: str | None = None
    annotator: str | None = None
    layer: str | None = None
    unit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "record": self.record,
            "doc": self.doc,
            "group": self.group,
            "annotator": self.annotator,
            "layer": self.layer,
            "unit": self.unit,
            "message": self.message,
            "action": self.action,
        }


class Absent(AbstractSet[str]):
    """The annotators of ``study`` a document lacks, held as those ``present``: under a per-document
    assignment (crowd data) nearly the whole study is absent from each document, and a set of them
    per document would cost memory in proportion to documents × annotators. Compares equal to the
    frozenset of the same annotators."""

    __slots__ = ("study", "present")

    def __init__(self, study: frozenset[str], present: Iterable[str]):
        self.study = study
        # a few names: a tuple is a third of a frozenset's size (a crowd run holds one per document)
        self.present: tuple[str, ...] = tuple(sorted({a for a in present if a in study}))

    def __contains__(self, annotator: object) -> bool:
        return annotator in self.study and annotator not in self.present

    def __iter__(self) -> Iterator[str]:
        return (a for a in self.study if a not in self.present)

    def __len__(self) -> int:
        return len(self.study) - len(self.present)

    def __hash__(self) -> int:
        return self._hash()

    def __repr__(self) -> str:
        return f"Absent(every one of {len(self.study)} but {sorted(self.present)})"


def not_missing(wanted: frozenset[str], missing: AbstractSet[str]) -> frozenset[str]:
    """The annotators of ``wanted`` not ``missing`` — from an :class:`Absent`'s few present ones, not by going
    through ``wanted`` (under a per-document assignment, the whole study)."""
    return wanted.intersection(missing.present) if isinstance(missing, Absent) else wanted - missing


#: per group, per document of its unit universe: the annotators missing there (a set, or an :class:`Absent`)
Universe = dict[str, Mapping[str, AbstractSet[str]]]


@dataclass(frozen=True)
class SpanStream:
    """A corpus's spans handed over a batch of whole groups (or whole documents) at a time (a streaming reader's, ``read(stream=True)``).

    Each of ``batches`` reads one batch (a picklable callable, so a batch can be read in another
    process): a :class:`Corpus` with the spans, submissions, inputs and findings of its groups, each
    group in one batch only, the batches in ascending group order; their documents are the header
    corpus's. ``annotators`` are every annotator with a file to read (the study's, unless it names
    its own); ``workers`` the processes the reader was asked to use (None: one per core); ``kinds`` the
    (layer, label) pairs of its spans when the reader knows them before the batches are read (for a
    format whose layers are those found), else empty.

    A batch may also hold some documents of a group whose other documents are in the next batch (a
    crowd study, one group of many documents): each batch then holds later documents of that group.

    A stream is read once: :meth:`handed` lets go of each batch (its arrays) as it hands it out.
    """

    annotators: list[str]
    batches: list[Callable[[], Corpus]]
    workers: int | None = None
    kinds: frozenset[tuple[str, str | None]] = frozenset()
    #: holds True once :meth:`handed` has begun handing the batches out
    spent: list[bool] = field(default_factory=list, repr=False, compare=False)

    def handed(self) -> Iterator[Callable[[], Corpus]]:
        """The batches in order, each taken out of :attr:`batches` as it is handed out; a second reading is refused."""
        if self.spent:
            raise RunError("this corpus's spans were read as a stream and are already unitized: read the corpus again "
                           "(read_corpus) to unitize it again")
        self.spent.append(True)
        self.batches.reverse()
        while self.batches:
            yield self.batches.pop()


@dataclass(slots=True)
class Corpus:
    """Everything an adapter read: documents, span records, submissions, findings.

    ``traits`` are its format's (:mod:`unitize.model.traits`), stamped by the adapter's reader.
    """

    format: str
    documents: MutableMapping[str, Document] = field(default_factory=dict)  # a dict, or a TextTable (model.documents)
    spans: list[Span] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    inputs: list[InputFile] = field(default_factory=list)
    skipped_by_selection: int = 0
    items: ItemLabels = field(default_factory=_no_labels)
    #: annotators found in the input but left out by the study's ``annotators`` selection
    not_selected: set[str] = field(default_factory=set)
    #: the input says which annotators were assigned which document (a roster): one absent from a
    #: document was not assigned it (rather than missing its file)
    assigned: bool = False
    #: annotators the input itself says are models (factgenie's LLM-eval campaigns): `unitize init` proposes them as
    #: the study's ``[roles] candidates``
    candidates: set[str] = field(default_factory=set)
    #: what the format's reader declares of it (set by the adapter)
    traits: FormatTraits = field(default_factory=FormatTraits)
    #: a streaming reader's spans, still to read a batch at a time; None: every span is in ``spans``
    stream: SpanStream | None = None

    @property
    def annotators(self) -> list[str]:
        """Every annotator with at least one submission, sorted."""
        return sorted({s.annotator for s in self.submissions})

    @property
    def groups(self) -> list[str]:
        return sorted({s.group for s in self.submissions})
