"""Unit matrices: marks per unit, in every mode and layout (DESIGN.md §4, steps 4–5).

:class:`Unitized` is a validated, unitized span corpus: its segments are computed,
its unit matrices are built on demand, one (group, layer) table at a time, so
memory stays bounded by the largest group. ``interval`` marks every unit of a
segment, ``boundary`` its first and last; ``separate`` gives one binary matrix
per layer, ``combined`` the bit mask of the layers, ``labels`` the label of the
covering segment. How the rows are stored is the run's :class:`~unitize.layouts.Layout`'s
business (wide, sparse, long); what they hold is decided here.

A :class:`MatrixSource` is what a run of documents' matrices are built from — only
NumPy arrays and names, what one work partition of the writer needs (it is pickled
to other processes; :meth:`Unitized.part`); a :class:`MatrixBuilder` builds the tables
from one. Pure NumPy and Arrow, no I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..config import Settings
from ..errors import RunError
from ..layouts import WIDE, GroupMarks, Layout
from ..layouts.base import AnnotatorSegments
from ..layouts.frames import NOT_ANNOTATED, Frame, group_frame
from ..model import Corpus, Finding, Universe, not_missing
from ..model.codes import sorted_positions
from ..model.report_rows import Findings
from ..output.parts import PARTITION_UNITS, PartTasks, partitions
from ..output.tables import documents_table, tokens_table, universe_table
from ..runtime.mapped import let_go_all, scratch
from ..schema import FORMAT_VERSION, setting_name
from ..units import relations
from ..units.marks import ByDocument, Marks
from ..units.segments import UnitResult
from ..units.unitizers import Approach, Mode, UnitSpace
from ..validate import Validation

__all__ = ["MatrixBuilder", "MatrixSource", "Unitized"]

#: a setting as the builders take it: (name, schema, unit, approach, mode)
SettingSpec = tuple[str, pa.Schema, str, Approach, Mode]


@dataclass
class MatrixSource:
    """What the unit matrices of some documents are built from: arrays and names only (picklable, small)."""

    groups: list[str]
    layers: list[str]
    layer_order: list[str]  # combined mode: bit i of a mask is layer_order[i]
    annotators: list[str]
    labels: list[str]  # labels mode: bit i of a label code is labels[i]
    layout: Layout
    spaces: dict[str, UnitSpace]
    marks: dict[str, Marks]
    #: per group, per document of its unit universe: the annotators missing there
    universe: Universe
    #: per group, the annotators expected there
    expected: dict[str, list[str]]
    #: per group, per document: indices of the annotators with a submission
    present: dict[str, dict[str, list[int]]]

    def tables_of(self, specs: Sequence[SettingSpec]) -> Iterator[tuple[str, pa.Table]]:
        """(setting name, table) of every setting in ``specs`` (see :meth:`MatrixBuilder.tables_of`)."""
        return MatrixBuilder(self).tables_of(specs)


class MatrixBuilder:
    """Builds unit-matrix tables from a :class:`MatrixSource`: per group, its marks as the layout writes them."""

    def __init__(self, source: MatrixSource):
        self.source = source

    def documents_in(self, group: str) -> list[str]:
        """Documents of a group's unit universe, sorted."""
        return sorted(self.source.universe.get(group, {}))

    def tables_of(self, specs: Sequence[SettingSpec]) -> Iterator[tuple[str, pa.Table]]:
        """(setting name, table) of every setting in ``specs``: per unit type and group, the group's frame
        is built once and serves every approach and mode of that unit; per setting, tables in sorted order."""
        src = self.source
        for unit in dict.fromkeys(s[2] for s in specs):
            for group in src.groups:
                g = self.group_marks(unit, group)
                if g is None:
                    continue
                for name, schema, u, approach, mode in specs:
                    if u == unit:
                        for table in src.layout.unit_tables(g, schema, approach, mode, src.layers):
                            yield name, table
                            del table  # not held while the next is made

    def group_tables(self, schema: pa.Schema, unit: str, approach: Approach, mode: Mode, group: str, layers: list[str]) -> Iterator[pa.Table]:
        """One group's tables of one setting (none when the group has no documents)."""
        g = self.group_marks(unit, group)
        if g is not None:
            yield from self.source.layout.unit_tables(g, schema, approach, mode, layers)

    def group_marks(self, unit: str, group: str) -> GroupMarks | None:
        """A group's marks in one unit space, as its layout writes them; None when the group has no documents."""
        src = self.source
        docs = self.documents_in(group)
        if not docs:
            return None
        space = src.spaces[unit]
        frame = group_frame(space, docs, columns=src.layout.dense_frame)
        return GroupMarks(
            group=group, space=space, frame=frame, annotators=src.annotators, labels=src.labels, layer_order=src.layer_order,
            segments=lambda layer, labelled: self._segments(unit, group, layer, frame, labelled),
            missing=lambda: self._missing(group, frame.docs), present=src.present.get(group, {}),
        )

    def _segments(self, unit: str, group: str, layer: str, frame: Frame, labelled: bool) -> AnnotatorSegments:
        """Per annotator, the ``(r0, r1, label)`` frame rows (inclusive) of a (group, layer)'s merged segments."""
        src = self.source
        marks, space = src.marks[unit], src.spaces[unit]
        if labelled and not marks.labelled:
            raise RunError("this run made no labels matrices: its settings have no labels mode and its corpus was read as "
                           "a stream; add \"labels\" to [unitize] modes (or read the corpus whole) for them")
        keys = marks.keys
        scale = keys.labels if labelled else 1
        key, u0, u1 = (marks.label_key, marks.label_u0, marks.label_u1) if labelled else (marks.key, marks.u0, marks.u1)
        group_index, layer_index = src.groups.index(group), src.layers.index(layer)
        out = []
        for ai in range(len(src.annotators)):
            first = keys.block(group_index, layer_index, ai)
            lo, hi = np.searchsorted(key, [first * scale, (first + keys.docs) * scale])
            k = key[lo:hi]
            doc = (k // scale) % keys.docs
            pos = frame.position[doc]
            keep = pos >= 0
            offset = frame.row_base[pos[keep]] - space.base[doc[keep]]
            out.append((u0[lo:hi][keep] + offset, u1[lo:hi][keep] + offset, (k % scale)[keep]))
        return out

    def _missing(self, group: str, docs: list[str]) -> dict[str, np.ndarray]:
        """Per annotator: a mask over ``docs`` where the annotator is missing (null)."""
        expected = set(self.source.expected.get(group, []))
        missing_by_doc = self.source.universe.get(group, {})
        missing = [missing_by_doc[d] for d in docs]  # each looked up once (a crowd group's is made when asked for)
        return {
            a: np.ones(len(docs), dtype=bool) if a not in expected else np.array([a in m for m in missing], dtype=bool)
            for a in self.source.annotators
        }


@dataclass
class Unitized:
    """A validated, unitized span corpus: segments now, unit matrices on demand."""

    settings: Settings
    corpus: Corpus
    validation: Validation
    groups: list[str]
    layers: list[str]
    annotators: list[str]
    spaces: dict[str, UnitSpace]
    results: dict[str, UnitResult]
    #: the report's rows, sorted and packed (:mod:`unitize.model.report_rows`)
    findings: Findings
    accounting: dict[str, Any]
    #: how the matrices are stored (storage only: every layout holds the same values)
    layout: Layout = WIDE
    #: labels mode: every label, sorted (bit i of a label code = labels[i])
    labels: list[str] = field(default_factory=list)

    def source(self) -> MatrixSource:
        """The matrices' source of every document."""
        return self.part(0, len(self.doc_ids()), whole=True)

    def documents_in(self, group: str) -> list[str]:
        """Documents of a group's unit universe, sorted."""
        return sorted(self.universe.get(group, {}))

    @property
    def universe(self) -> Universe:
        return self.validation.universe

    @property
    def expected(self) -> dict[str, list[str]]:
        return self.validation.annotators

    @property
    def layer_order(self) -> list[str]:
        return list(self.settings.layers)

    @property
    def errors(self) -> list[Finding]:
        return self.findings.errors()

    def summary(self) -> dict[str, Any]:
        """Counts a person (or a script) wants after a run."""
        universe = self.validation.universe
        return {
            "documents": len(self.corpus.documents),
            "groups": len(self.groups),
            "groups_with_documents": sum(1 for g in self.groups if universe.get(g)),
            "annotators": self.annotators,
            "layers": list(self.settings.layers),
            "document_group_pairs": sum(len(v) for v in universe.values()),
            "findings": self.findings.by_severity(),
            "findings_by_code": self.findings.by_code(),
            "segments": {u: r.segments.num_rows for u, r in self.results.items()},
        }

    # -- public matrix access --

    def settings_specs(self) -> list[SettingSpec]:
        """Every setting of the run: (name, schema, unit, approach, mode), in the run's order."""
        return [
            (setting_name(u, a, m), self.matrix_schema(u, a, m), u, a, m)
            for (u, a) in self.settings.pairs
            for m in self.settings.modes
        ]

    def datasets(self) -> list[tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]]:
        """The ``units/`` datasets of the run: (setting name, schema, its tables), one per setting."""
        return [(name, schema, partial(self.matrices, u, a, m)) for name, schema, u, a, m in self.settings_specs()]

    def setting_rows(self, unit: str, mode: Mode) -> int:
        """Rows of a setting's dense matrix: every unit of every group's documents, per layer (one layer combined)."""
        space = self.spaces[unit]
        per_doc = np.append(space.n_units, 0)  # a document without a text: no unit
        units = sum(int(per_doc[sorted_positions(space.doc_ids, self.universe.get(g, {}))].sum()) for g in self.groups)
        return units * (1 if mode == "combined" else len(self.layers))

    # -- what the writer takes (unitize.output.RunResult) --

    def dense_rows(self, written: dict[str, int]) -> dict[str, int]:
        """Per setting, the rows of its dense matrix (whatever the layout wrote)."""
        return {name: self.setting_rows(u, m) for name, _, u, _, m in self.settings_specs()}

    def part_tasks(self, staging: Path) -> PartTasks[SettingSpec]:
        """One task per work partition: runs of documents of about ``[output] partition_units`` characters,
        each task made when it is taken (:class:`~unitize.output.parts.PartTasks`), from its documents alone."""
        chars = next(iter(self.spaces.values())).doc_chars().tolist()  # the documents' lengths, as the spaces hold them
        runs = partitions(chars, self.settings.partition_units or PARTITION_UNITS)
        labelled = "labels" in self.settings.modes
        # the marks in document order, in a mapped scratch file: each partition reads its own stretch of pages
        cut = _Cut({u: r.marks.by_document(labelled, _scratch) for u, r in self.results.items()},
                   {g: sorted(docs) for g, docs in self.universe.items()})
        return PartTasks(str(staging), self.settings_specs(), [partial(self.part, d0, d1, cut=cut) for d0, d1 in runs])

    def side_tables(self) -> Iterator[tuple[str, pa.Table | pa.RecordBatchReader, Callable[[], None] | None]]:
        """The segments of every unit type (with discourse data's relation counts: :mod:`unitize.units.relations`),
        the documents, the unit universe and the tokens. A streamed run's segments lie in mapped files: the pages
        of each row group written are let go (at 2 M crowd texts, writing them peaked 480 MiB higher when they were held to the end of the file);
        so are those read of the texts and the tokens' extents (:mod:`unitize.runtime.mapped`)."""
        for unit, res in self.results.items():
            segments = res.segments
            if res.relations is not None:
                segments = segments.replace_schema_metadata({**(segments.schema.metadata or {}), relations.KEY: relations.to_metadata(res.relations)})
            yield f"segments/{unit}.parquet", segments, res.let_go
            del segments
            res.let_go()
        yield "documents.parquet", documents_table(self.corpus, self.spaces.get("word"), self.settings.tokenizer), let_go_all
        yield "universe.parquet", universe_table(self.groups, self.annotators, self.universe, self.expected), None
        if "word" in self.spaces:
            yield "tokens.parquet", tokens_table(self.spaces["word"]), let_go_all

    def nothing_kept(self) -> str | None:
        """What was read, when no record reached the matrices (the run then writes nothing); else None."""
        if any(u["in_segments"] for u in self.accounting["by_unit"].values()):
            return None
        records = self.accounting["records"]
        return (f"no span record entered the segments ({records['read']:,} read, "
                f"{records['in_selected_layers']:,} in the layers {', '.join(self.settings.layers)})")

    def matrix_schema(self, unit: str, approach: Approach, mode: Mode) -> pa.Schema:
        """The Arrow schema (with the ``unitize`` metadata) of one setting's unit matrices."""
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "annotators": self.annotators,
            "unit": unit,
            "approach": approach,
            "mode": mode,
            "value": {"combined": "bitmask", "labels": "label"}.get(mode, "binary"),
            "layout": self.layout.name,
            "tokenizer": self.settings.tokenizer if unit == "word" else None,
            "settings": self.settings.resolved(with_output=False),
            **self.layout.metadata(["+".join(self.settings.layers)] if mode == "combined" else list(self.layers)),
        }
        if mode == "combined":
            meta["layer_bits"] = {layer: 1 << i for i, layer in enumerate(self.settings.layers)}
        if mode == "labels":
            meta["not_annotated"] = NOT_ANNOTATED
            meta["labels"] = self.labels
        return self.layout.units_schema(self.annotators, meta)

    def matrices(self, unit: str, approach: Approach, mode: Mode = "separate") -> Iterator[pa.Table]:
        """Unit matrices, one table per (group, layer) — or per group in combined mode — in sorted order."""
        schema = self.matrix_schema(unit, approach, mode)
        builder = MatrixBuilder(self.source())
        for group in self.groups:
            yield from builder.group_tables(schema, unit, approach, mode, group, self.layers)

    def matrix(self, group: str, layer: str, unit: str = "char", approach: Approach = "interval") -> pa.Table:
        """One (group, layer) unit matrix as a table; empty when the group has no documents."""
        if unit not in self.results:
            raise RunError(f"unit {unit!r} was not computed; settings have units {', '.join(self.results)}")
        if layer not in self.layers:
            raise RunError(f"layer {layer!r} was not unitized; layers are {', '.join(self.layers)}")
        schema = self.matrix_schema(unit, approach, "separate")
        if group not in self.groups or not self.validation.universe.get(group):
            return schema.empty_table()
        # a layout may write a group in batches of documents
        return pa.concat_tables(list(MatrixBuilder(self.source()).group_tables(schema, unit, approach, "separate", group, [layer])))

    # -- work partitions --

    def doc_ids(self) -> list[str]:
        """The documents with a text, in the order of the unit spaces (sorted)."""
        return next(iter(self.spaces.values())).doc_ids

    def part(self, d0: int, d1: int, whole: bool = False, cut: _Cut | None = None) -> MatrixSource:
        """The matrices' source for documents ``d0 … d1-1`` of :meth:`doc_ids`: arrays and names only
        (``whole``: every document, the arrays as they are; ``cut``: the run's marks and universe sorted by
        document, made once for all its parts)."""
        if whole:
            return MatrixSource(self.groups, self.layers, self.layer_order, self.annotators, self.labels, self.layout,
                                self.spaces, {u: r.marks for u, r in self.results.items()}, self.universe, self.expected,
                                self._present(self.universe))
        ids = self.doc_ids()[d0:d1]
        labelled = "labels" in self.settings.modes
        sorted_docs = cut.sorted_docs if cut is not None else {g: sorted(docs) for g, docs in self.universe.items()}
        universe: Universe = {g: _within(self.universe[g], docs, ids) for g, docs in sorted_docs.items()}
        source = MatrixSource(
            groups=self.groups,
            layers=self.layers,
            layer_order=self.layer_order,
            annotators=self.annotators,
            labels=self.labels,
            layout=self.layout,
            spaces={u: s.part(d0, d1) for u, s in self.spaces.items()},
            marks={u: r.marks.part(self.spaces[u], d0, d1, labelled, cut.marks[u] if cut is not None else None)
                   for u, r in self.results.items()},
            universe=universe,
            expected=self.expected,
            present=self._present(universe),
        )
        # the pages of the run's mapped marks and token extents this part read (copied): over the parts, they are all
        let_go_all()
        return source

    def _present(self, universe: Universe) -> dict[str, dict[str, list[int]]]:
        """Per group and document of ``universe``: the indices of the annotators with a submission (the long layout's
        rows), those of the group's expected annotators not missing there."""
        index = {a: i for i, a in enumerate(self.annotators)}
        present = {}
        for group, docs in universe.items():
            wanted = frozenset(self.expected.get(group, ()))
            present[group] = {d: sorted(index[a] for a in not_missing(wanted, missing)) for d, missing in docs.items()}
        return present


def _scratch(shapes: list[tuple[tuple[int, ...], Any]]) -> tuple[list[np.ndarray], Callable[[], None]]:
    """Arrays in a mapped scratch file (:func:`~unitize.runtime.mapped.scratch`), the pages a block of copying touched
    let go after it (of these and of the marks it read)."""
    return scratch(shapes)[0], let_go_all


@dataclass(frozen=True)
class _Cut:
    """A run's marks (per unit type, :meth:`~unitize.units.marks.Marks.by_document`) and each group's
    documents, sorted: a work partition finds its documents' share of both by bisection."""

    marks: dict[str, tuple[ByDocument, ByDocument]]
    sorted_docs: dict[str, list[str]]


def _within(docs: Mapping[str, AbstractSet[str]], sorted_docs: list[str], ids: list[str]) -> dict[str, AbstractSet[str]]:
    """The entries of a group's universe ``docs`` (its keys ``sorted_docs``) for the documents ``ids`` (sorted)."""
    if not ids:
        return {}
    keep = set(ids)
    run = sorted_docs[bisect_left(sorted_docs, ids[0]):bisect_right(sorted_docs, ids[-1])]
    return {d: docs[d] for d in run if d in keep}
