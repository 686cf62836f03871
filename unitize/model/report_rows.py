"""Findings held compactly, as the report's rows: sorted, encoded and compressed, with what a run shows of them.

A crowd span run makes a finding for every merged or snapped segment (hundreds of thousands of info rows).
As :class:`~unitize.model.corpus.Finding` objects they cost about 400 bytes each and are pickled back from
every batch; as a :class:`Packed` run they are the lines of ``report.jsonl`` (the bytes the report holds),
compressed in blocks, with their sort keys. :class:`Findings` joins the runs of a whole study: its
:meth:`~Findings.lines` merge them in the report's order (:func:`~unitize.model.findings.sort_key`) one
block per run at a time, and its counts, errors and first finding of each code need no decoding.
"""

from __future__ import annotations

import heapq
import itertools
import json
import pickle
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..runtime.mapped import Appended, mapped
from .corpus import Finding
from .findings import ERROR, INFO, WARNING, ranked_codes, sort_key

#: findings per compressed block of a run: what a merge holds of each run at a time
BLOCK = 1024


def report_line(f: Finding) -> str:
    """A finding as its ``report.jsonl`` line (without the line break)."""
    return json.dumps(f.as_dict(), ensure_ascii=False, sort_keys=False)


@dataclass
class Packed:
    """One sorted run of findings: blocks of (sort keys, report lines), pickled and compressed, and their
    counts by (code, severity), the error findings and the first finding of each code (in the run's order)."""

    blocks: list[bytes | memoryview] = field(default_factory=list)  # views: of a mapped file (Findings.mapped)
    count: int = 0
    by_code: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: list[Finding] = field(default_factory=list)
    first: dict[str, Finding] = field(default_factory=dict)

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> Packed:
        """Sort ``findings`` in the report's order and pack them."""
        keyed = sorted(((sort_key(f), f) for f in findings), key=lambda pair: pair[0])
        run = cls(count=len(keyed))
        for start in range(0, len(keyed), BLOCK):
            block = keyed[start:start + BLOCK]
            run.blocks.append(zlib.compress(pickle.dumps(([k for k, _ in block], [report_line(f) for _, f in block]),
                                                         protocol=pickle.HIGHEST_PROTOCOL), 1))
        for _, f in keyed:
            run.by_code[(f.code, f.severity)] += 1
            run.first.setdefault(f.code, f)
            if f.severity == ERROR:
                run.errors.append(f)
        return run

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its blocks as bytes (a view of a mapped file is not sent)."""
        return {**self.__dict__, "blocks": [bytes(b) for b in self.blocks]}

    def keyed(self) -> Iterator[tuple[tuple[Any, ...], str]]:
        """(sort key, report line) of every finding, in order, a block at a time."""
        for blob in self.blocks:
            keys, lines = pickle.loads(zlib.decompress(blob))
            yield from zip(keys, lines)


class RunSpool:
    """Packed runs' blocks gathered as the runs come (a crowd run's batches', one at a time), written to a scratch file
    once they are large (:class:`~unitize.runtime.mapped.Appended`) and each run's blocks made views of its mapping
    by :meth:`done`: they are never all on the heap between the batches and the report."""

    def __init__(self) -> None:
        self._spool = Appended(np.uint8)
        self._runs: list[tuple[Packed, list[int]]] = []

    def add(self, run: Packed) -> None:
        """A run's blocks, taken (the run holds none until :meth:`done`)."""
        sizes = []
        for block in run.blocks:
            self._spool.add(np.frombuffer(block, dtype=np.uint8))
            sizes.append(len(block))
        run.blocks = []
        self._runs.append((run, sizes))

    def done(self) -> None:
        """Every run added given its blocks back, as views of where they lie."""
        whole, _ = self._spool.array()  # the views keep its mapping
        at = 0
        for run, sizes in self._runs:
            blocks: list[bytes | memoryview] = []
            for n in sizes:
                blocks.append(whole[at:at + n].data)
                at += n
            run.blocks = blocks
        self._runs = []


class Findings:
    """The findings of a run, as packed runs: iterated and written in the report's order, counted without decoding.

    Iterating gives :class:`Finding` objects (decoded from the lines); :meth:`lines` gives the report's lines."""

    def __init__(self, runs: Iterable[Packed] = ()):
        self.runs = [r for r in runs if r.count]  # findings of equal keys: in the order of the runs

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> Findings:
        return cls([Packed.of(findings)])

    def mapped(self) -> Findings:
        """These findings, their compressed blocks moved to a mapped scratch file once they are large: a crowd run
        holds them from its batches to its report (:mod:`unitize.runtime.mapped`)."""
        runs = [r for r in self.runs if any(isinstance(b, bytes) for b in r.blocks)]  # a spooled run's lie in a file
        blocks = [np.frombuffer(b, dtype=np.uint8) for r in runs for b in r.blocks]
        held, pages = mapped(blocks)  # each block where it lies in the file (not one copy of them all first)
        if pages.mapping is None:
            return self
        views = iter(held)
        for r in runs:
            r.blocks = [view.data for view in itertools.islice(views, len(r.blocks))]
        return self

    def lines(self) -> Iterator[str]:
        """Every finding's ``report.jsonl`` line, in the report's order."""
        for _, line in heapq.merge(*(r.keyed() for r in self.runs), key=lambda pair: pair[0]):
            yield line

    def __iter__(self) -> Iterator[Finding]:
        for line in self.lines():
            yield Finding(**json.loads(line))

    def __len__(self) -> int:
        return sum(r.count for r in self.runs)

    def __bool__(self) -> bool:
        return bool(self.runs)

    def __getitem__(self, index: int) -> Finding:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Findings):
            return list(self.lines()) == list(other.lines())
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def by_code(self) -> dict[str, int]:
        """How many findings of each code, by code."""
        counts: Counter[str] = Counter()
        for r in self.runs:
            for (code, _), n in r.by_code.items():
                counts[code] += n
        return dict(sorted(counts.items()))

    def by_severity(self) -> dict[str, int]:
        counts = {ERROR: 0, WARNING: 0, INFO: 0}
        for r in self.runs:
            for (_, severity), n in r.by_code.items():
                counts[severity] += n
        return counts

    def errors(self) -> list[Finding]:
        """The error findings, in the report's order."""
        return sorted((f for r in self.runs for f in r.errors), key=sort_key)

    def first(self) -> dict[str, Finding]:
        """The first finding of each code, in the report's order."""
        firsts: dict[str, Finding] = {}
        for f in sorted((f for r in self.runs for f in r.first.values()), key=sort_key):
            firsts.setdefault(f.code, f)
        return firsts

    def top_codes(self, limit: int = 5) -> list[str]:
        """The most frequent codes, each with its count and first message (:func:`~unitize.model.findings.top_codes`)."""
        first = self.first()
        counts = self.by_code()
        return ranked_codes({code: counts[code] for code in first}, first, limit)
