"""The unit universe of an output directory: each group's documents and each document's units.

What a layout with implicit rows (:mod:`unitize.layouts.sparse`) needs to read a group back:
``universe.parquet``'s documents per group, ``documents.parquet``'s ``chars`` / ``tokens`` per
document, ``tokens.parquet``'s token extents.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import DataError
from ..model.codes import sorted_codes
from ..units.unitizers import cumulative
from .parts import THREADS


class Universe:
    """The unit universe of an output directory: each group's documents and each document's units."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._groups: dict[str, list[str]] | None = None
        self._units: dict[str, dict[str, int]] = {}
        self._tokens: tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray] | None = None

    def _read(self, name: str, columns: list[str]) -> pa.Table:
        file = self.path / name
        if not file.is_file():
            raise DataError(f"{self.path}: the sparse layout needs {name}, which is missing")
        try:
            return pq.ParquetFile(file).read(columns=columns, use_threads=THREADS)  # not read_table: its dataset layer imports pandas
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{file} cannot be read: {exc}") from None

    def groups(self) -> dict[str, list[str]]:
        """Per group (sorted) its documents (sorted)."""
        if self._groups is None:
            t = self._read("universe.parquet", ["group", "doc_id"])
            out: dict[str, list[str]] = {}
            for g, d in zip(t.column("group").to_pylist(), t.column("doc_id").to_pylist()):
                out.setdefault(g, []).append(d)
            self._groups = {g: sorted(ds) for g, ds in sorted(out.items())}
        return self._groups

    def annotators(self) -> dict[tuple[str, str], list[str]]:
        """Per (group, doc_id) the annotators with a submission there, in the study's order."""
        t = self._read("universe.parquet", ["group", "doc_id", "annotators"])
        return {(g, d): list(a or []) for g, d, a in zip(*(t.column(c).to_pylist() for c in ("group", "doc_id", "annotators")))}

    @property
    def exists(self) -> bool:
        """Whether the output has ``universe.parquet`` (span outputs of format 2 and later)."""
        return (self.path / "universe.parquet").is_file()

    def long_sizes(self, unit: str, selected: Sequence[str] | None = None) -> dict[str, tuple[int, int]]:
        """Per group (sorted): (units, annotators) of each of its matrices in the long layout, which has rows for the
        annotators with a submission only — the units of its documents some annotator has, and those annotators
        (of ``selected`` alone, when given)."""
        units = self.units(unit)
        keep = set(selected) if selected is not None else None
        n: dict[str, int] = {}
        who: dict[str, set[str]] = {}
        for (group, doc), names in sorted(self.annotators().items()):
            have = [a for a in names if keep is None or a in keep]
            n.setdefault(group, 0)
            who.setdefault(group, set())
            if have and units.get(doc, 0):
                n[group] += units[doc]
                who[group].update(have)
        return {group: (n[group], len(who[group])) for group in n}

    def units(self, unit: str) -> dict[str, int]:
        """Units per document: ``chars`` for character units, ``tokens`` for words."""
        if unit not in self._units:
            column = {"char": "chars", "word": "tokens"}.get(unit)
            if column is None:
                raise DataError(f"{self.path}: unknown unit {unit!r} in a sparse table")
            t = self._read("documents.parquet", ["doc_id", column])
            self._units[unit] = {d: n for d, n in zip(t.column("doc_id").to_pylist(), t.column(column).to_pylist()) if n is not None}
        return self._units[unit]

    def extents(self, docs: list[str], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Local character ``begin``/``end`` of every token of ``docs`` (in order; ``n`` tokens each)."""
        if self._tokens is None:
            t = self._read("tokens.parquet", ["doc_id", "token", "begin", "end"])
            names, codes = sorted_codes(t.column("doc_id"))
            order = np.lexsort((t.column("token").to_numpy(), codes))
            codes = codes[order]
            counts = np.bincount(codes, minlength=len(names))
            self._tokens = ({d: i for i, d in enumerate(names)}, cumulative(counts),
                            t.column("begin").to_numpy()[order], t.column("end").to_numpy()[order])
        index, base, begin, end = self._tokens
        starts = np.array([base[index[d]] if d in index else 0 for d in docs], dtype=np.int64)
        rows = np.repeat(starts - cumulative(n), n) + np.arange(int(n.sum()), dtype=np.int64)
        return begin[rows], end[rows]


