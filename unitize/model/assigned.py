"""A group's unit universe under a per-document assignment, held as columns (:class:`Assigned`).

A crowd span study is one group of every text, and under a per-document assignment each text's entry in the unit
universe is an :class:`~unitize.model.corpus.Absent` (the study but the few annotators present): a dict entry, the
object and a tuple of names, some 150 bytes a text (29 MiB at 200,000 texts). Here a text costs 28 bytes: the
documents sorted, and the annotators present at each as codes into the study's sorted names. It is the mapping of
document to missing annotators the dict was, an ``Absent`` made when one is asked for; :func:`assigned` makes one
of a group's entries when they are all ``Absent`` of one study, and leaves any other group a dict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet

import numpy as np

from .codes import position
from .corpus import Absent


class Assigned(Mapping[str, AbstractSet[str]]):
    """Per document of a group's unit universe, the annotators of ``study`` missing there, as those ``present``
    (``docs`` sorted and distinct, ``present[i]`` the names present at ``docs[i]``)."""

    def __init__(self, study: frozenset[str], docs: list[str], present: list[tuple[str, ...]]):
        if any(a >= b for a, b in zip(docs, docs[1:])):
            raise ValueError("an Assigned universe's documents are sorted and distinct")
        self._docs = docs
        self._study = study
        self._names = sorted(study)
        code = {a: i for i, a in enumerate(self._names)}
        self._offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(p) for p in present), dtype=np.int64, count=len(docs)), out=self._offsets[1:])
        small = np.int16 if len(self._names) < 1 << 15 else np.int32
        self._codes = np.fromiter((code[a] for p in present for a in p), dtype=small, count=int(self._offsets[-1]))

    @classmethod
    def _of(cls, study: frozenset[str], docs: list[str], offsets: np.ndarray, codes: np.ndarray) -> Assigned:
        """An universe of its columns as they are (``docs`` sorted and distinct)."""
        made = cls.__new__(cls)
        made._docs, made._study, made._names, made._offsets, made._codes = docs, study, sorted(study), offsets, codes
        return made

    def with_ids(self, stored: Callable[[str], str]) -> Assigned:
        """The same universe, each document named by the id object ``stored`` gives (equal to it)."""
        return Assigned._of(self._study, [stored(d) for d in self._docs], self._offsets, self._codes)

    def _row(self, doc: object) -> int | None:
        return position(self._docs, doc)

    def __getitem__(self, doc: str) -> Absent:
        i = self._row(doc)
        if i is None:
            raise KeyError(doc)
        names = self._names
        return Absent(self._study, [names[c] for c in self._codes[self._offsets[i]:self._offsets[i + 1]].tolist()])

    def __contains__(self, doc: object) -> bool:
        return self._row(doc) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __repr__(self) -> str:
        return f"Assigned({len(self._docs)} documents of a study of {len(self._study)} annotators)"


def assigned(entries: Iterable[tuple[str, AbstractSet[str]]]) -> Mapping[str, AbstractSet[str]]:
    """A group's unit universe from its (document, missing annotators) entries: an :class:`Assigned` when every entry
    is an :class:`Absent` of one study and no document comes twice, else the dict of the entries (a later entry of a
    document replacing an earlier one)."""
    docs: list[str] = []
    present: list[tuple[str, ...]] = []
    study: frozenset[str] | None = None
    same: dict[int, frozenset[str]] = {}  # study objects found equal to ``study`` (each batch unpickled its own), by id
    rest: dict[str, AbstractSet[str]] | None = None
    for doc, missing in entries:
        if rest is None and isinstance(missing, Absent):
            if study is None:
                study = missing.study
            if id(missing.study) in same or missing.study is study or missing.study == study:
                same.setdefault(id(missing.study), missing.study)
                docs.append(doc)
                present.append(missing.present)
                continue
        if rest is None:  # not all of one study's Absent: a dict of what came before, and the rest
            rest = _as_dict(study, docs, present)
        rest[doc] = missing
    if rest is not None:
        return rest
    if study is None:
        return {}
    order = sorted(range(len(docs)), key=docs.__getitem__)
    in_order = [docs[i] for i in order]
    if any(a == b for a, b in zip(in_order, in_order[1:])):
        return _as_dict(study, docs, present)
    return Assigned(study, in_order, [present[i] for i in order])


def _as_dict(study: frozenset[str] | None, docs: list[str], present: list[tuple[str, ...]]) -> dict[str, AbstractSet[str]]:
    """The entries so far, in their order, as a dict."""
    return {d: Absent(study, p) for d, p in zip(docs, present)} if study is not None else {}


#: one batch's piece of a group's unit universe: its :func:`assigned` mapping, or its entries (document, missing)
Piece = Mapping[str, AbstractSet[str]] | list[tuple[str, AbstractSet[str]]]


def joined_universe(pieces: list[Piece]) -> Mapping[str, AbstractSet[str]]:
    """A group's unit universe from its batches' pieces, in batch order (each document's id as the piece names it: a
    run settles them to its own strings first, :meth:`Assigned.with_ids`). The pieces' columns one after the other
    when each is an :class:`Assigned` of one study and each holds later documents than the one before (a crowd study
    read a batch of documents at a time: no entry made per text); else :func:`assigned` of their entries in order."""
    columns = [p for p in pieces if len(p)]
    if columns and all(isinstance(p, Assigned) for p in columns):
        parts: list[Assigned] = [p for p in columns if isinstance(p, Assigned)]
        study = parts[0]._study
        if all(p._study == study for p in parts) and all(a._docs[-1] < b._docs[0] for a, b in zip(parts, parts[1:])):
            docs = [d for p in parts for d in p._docs]
            starts = np.cumsum([0] + [int(p._offsets[-1]) for p in parts])
            offsets = np.concatenate([[0]] + [p._offsets[1:] + start for p, start in zip(parts, starts.tolist())]).astype(np.int64)
            return Assigned._of(study, docs, offsets, np.concatenate([p._codes for p in parts]))
    return assigned(entry for p in pieces for entry in (p if isinstance(p, list) else p.items()))
