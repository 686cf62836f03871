"""Everything the page shows, gathered in one pass over an output directory.

The overview (study, exclusions, findings, agreement, rankings, matrices) is one
JSON-able dict; every document's view (its text, segments and regions per
setting) is a payload of its own, loaded by the page on demand; so are the item
groups' lists of items with disagreement.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..dataset.adjudication import read_adjudication
from ..dataset.directory import OutputData, Setting
from ..dataset.parts import release
from ..dataset.pieces import layer_pieces
from ..dataset.regions import Cells, Region, regions
from ..dataset.texts import Texts
from ..model.codes import places
from ..runtime.progress import Progress, no_progress
from . import study as _study
from .jsontext import Raw, in_slices, plain
from .pages import DocPages
from .where import Confusion, Distribution, DocStats, Pairs, doc_stats, per_group, rank_docs, rank_groups, share

#: the review queue rows the report shows (all of them are in OUT/adjudication/review.csv)
REVIEW_ROWS = 2000


@dataclass
class Names:
    """Small lookup tables the payloads index into (groups, layers, annotators, labels)."""

    groups: list[str] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    _at: dict[str, dict[str, int]] = field(default_factory=dict)

    def idx(self, kind: str, name: str) -> int:
        if kind not in self._at:
            self._at[kind] = {n: i for i, n in enumerate(getattr(self, kind))}
        table = self._at[kind]
        if name not in table:
            table[name] = len(table)
            getattr(self, kind).append(name)
        return table[name]


@dataclass
class Report:
    overview: dict[str, Any]
    docs: DocPages  # one payload per document, in overview["docs"]["ids"] order (its text, its segments and regions as Raw JSON)
    items: list[dict[str, Any]]  # one payload per item group, in overview["items"] order


def _segments(data: OutputData, unit: str, names: Names, ids: pa.Array, pages: DocPages) -> None:
    """Each document's segments of one unit type into its page: [group, layer, annotator, label, begin, end] as
    indices into ``names`` and characters, in the file's order. Only those columns are read, a slice of
    :data:`SEGMENT_ROWS` rows at a time, from a block of :data:`LOOKUP_ROWS` rows read at a time
    (:meth:`OutputData.segment_slices`) whose documents are found among the sorted ``ids`` at once."""
    columns = ("group", "layer", "annotator", "label", "begin", "end")
    for block in data.segment_slices(unit, ("doc_id", *columns), LOOKUP_ROWS):
        doc_of = places(ids, block.column("doc_id"), names_sorted=True)
        for at in range(0, block.num_rows, SEGMENT_ROWS):
            cols = [block.column(c).slice(at, SEGMENT_ROWS).to_pylist() for c in columns]
            found: dict[int, list[list[int]]] = {}
            for di, g, layer, a, label, b, e in zip(doc_of[at:at + SEGMENT_ROWS].tolist(), *cols):
                if di >= 0:
                    found.setdefault(di, []).append(
                        [names.idx("groups", g), names.idx("layers", layer), names.idx("annotators", a),
                         names.idx("labels", label) if label is not None else -1, b, e])
            for di, rows in found.items():
                pages.segments(di, unit, plain(rows)[1:-1])


#: segment rows made Python lists at once
SEGMENT_ROWS = 1 << 16

#: segment rows read, and their documents looked up (a pass over every document id), at once
LOOKUP_ROWS = 1 << 20


def _present(c: Cells) -> list[tuple[int, int]]:
    """(document index in c.docs, annotator index in c.annotators) pairs with data."""
    if not c.cell_row.size and (c.implicit is None or not c.implicit.any()):
        return []
    k = max(len(c.annotators), 1)
    pairs = np.unique(c.row_doc[c.cell_row] * k + c.cell_annotator)
    if c.implicit is not None:  # every annotator coded a document's units not among the rows
        every = np.flatnonzero(c.implicit)
        pairs = np.union1d(pairs, (every[:, None] * k + np.arange(len(c.annotators))).ravel())
    return list(zip((pairs // k).tolist(), (pairs % k).tolist()))


def _group_rows(setting: Setting, totals: dict[str, np.ndarray], worst: dict[str, int], values: _study.SummaryValues,
                layers: dict[str, list[str]]) -> list[dict[str, Any]]:
    rows = []
    for group, tot in totals.items():
        mine = {lay: v for (s, g, lay), v in values.items() if s == setting.name and g == group}
        every = "+".join(layers.get(group, []))
        layer = every if every in mine else (next(iter(mine)) if len(mine) == 1 else None)
        rows.append({"group": group, "layer": layer, "value": mine.get(layer) if layer else None,
                     "share": share(int(tot[0]), int(tot[1])), "comparable": int(tot[0]), "disagreeing": int(tot[1]),
                     "regions": int(tot[2]), "worst_doc": worst.get(group)})
    return rank_groups(rows)


def build(data: OutputData, progress: Progress = no_progress) -> Report:
    texts = Texts(data)  # held as Arrow (mapped once large); each document's text is read as its page is written
    order: np.ndarray | None = None
    if len(texts):
        order = texts.sorted_rows()
        ids, chars = texts.id_array.take(pa.array(order)), texts.length_array()[order]
        texts.let_go()
    else:
        ids = pa.array(sorted({d for s in data.settings if s.kind == "units" for d in _docs_of(data, s)}), pa.string())
        chars = np.full(len(ids), -1, np.int64)
    names = Names(layers=list(data.layers), annotators=list(data.manifest.get("summary", {}).get("annotators") or []))
    docs = DocPages(ids, texts, order)  # each document's page kept in a scratch file until written
    res = _study.results(data)
    values = _study.summary_values(res)
    overview: dict[str, Any] = {
        "study": _study.study(data), "exclusions": _study.exclusions(data), "findings": _study.findings(data.path),
        "quotes": _study.quotes(data), "agreement": res, "alt_test": _study.alt_test(data), "bands": _study.bands(), "settings": [],
        "items": [], "adjudication": _relative(read_adjudication(data.path, limit=REVIEW_ROWS), data.path), "roles": _study.roles(data),
        "estimate": _study.estimate(data),
    }
    doc_groups: list[tuple[np.ndarray, np.ndarray]] = []  # per unit setting: its (group, document) pairs' indices
    items: list[dict[str, Any]] = []
    item_setting = next((s for s in data.settings if s.kind == "items" and s.layout.columnar), None) or next(
        (s for s in data.settings if s.kind == "items"), None)
    for unit in sorted({s.unit for s in data.settings if s.kind == "units" and s.unit}):
        _segments(data, unit, names, ids, docs)
    for si, setting in enumerate(progress(data.settings, "report: settings")):
        if setting.kind == "items":
            overview["settings"].append({"name": setting.name, "kind": "items"})
            if setting is item_setting:
                for group, _, pieces in layer_pieces(data, setting):  # a long table's group: whole items a piece
                    summary, rows = _item_group(setting, group, pieces, len(items))
                    overview["items"].append(summary)
                    items.append({"rows": rows})
            continue
        entry = _units_setting(data, setting, si, names, docs, ids, doc_groups, values)
        overview["settings"].append(entry)
    overview["names"] = {"groups": names.groups, "layers": names.layers, "annotators": names.annotators, "labels": names.labels}
    overview["docs"] = {"ids": in_slices(lambda a, b: ids.slice(a, b - a).to_pylist(), len(ids)),
                        "chars": in_slices(lambda a, b: [None if n < 0 else n for n in chars[a:b].tolist()], len(ids)),
                        "groups": _groups_per_doc(doc_groups, len(ids))}
    overview["plots"] = [p.name for p in _study.plots(data)]
    return Report(overview, docs, items)


def _groups_per_doc(pairs: list[tuple[np.ndarray, np.ndarray]], n: int) -> Raw:
    """Per document the indices of the groups it has data in (sorted), from every setting's (group, document) pairs:
    a list per document, as JSON text."""
    groups = np.concatenate([g for g, _ in pairs]) if pairs else np.zeros(0, np.int64)
    docs = np.concatenate([d for _, d in pairs]) if pairs else np.zeros(0, np.int64)
    stride = int(groups.max()) + 1 if groups.size else 1
    keys = np.unique(docs * stride + groups)
    bounds = np.searchsorted(keys // stride, np.arange(n + 1))
    group = keys % stride

    def lists(a: int, b: int) -> list[list[int]]:
        found, base = group[bounds[a]:bounds[b]].tolist(), bounds[a]
        return [found[bounds[i] - base:bounds[i + 1] - base] for i in range(a, b)]

    return in_slices(lists, n)


def _relative(adjudication: dict[str, Any] | None, out: Path) -> dict[str, Any] | None:
    """The adjudication with the gold's folder relative to OUT (the report travels with it, not with this machine's paths)."""
    if adjudication is None or not adjudication["summary"].get("dest"):
        return adjudication
    dest = Path(adjudication["summary"]["dest"])
    shown = os.path.relpath(dest, out) if dest.is_absolute() else str(dest)
    return {**adjudication, "summary": {**adjudication["summary"], "dest": shown}}


def _docs_of(data: OutputData, setting: Setting) -> list[str]:
    return [d for _, table in data.stored_tables(setting) for d in pc.unique(table.column("doc_id")).to_pylist()]


def _units_setting(data: OutputData, setting: Setting, si: int, names: Names, docs: DocPages, ids: pa.Array,
                   doc_groups: list[tuple[np.ndarray, np.ndarray]], values: _study.SummaryValues) -> dict[str, Any]:
    """One unit setting: regions into the document payloads; per-document stats, rankings and matrices. A crowd
    group is read a piece of whole documents at a time (:func:`~unitize.dataset.pieces.layer_pieces`), so memory
    holds one piece's cells, not the group's; its matrices are added up over the pieces."""
    found = DocStats()
    group_layers: dict[str, list[str]] = {}
    pairs, confusions = [], []
    for group, layer, pieces in layer_pieces(data, setting, implicit=True):
        gi, li = names.idx("groups", group), names.idx("layers", layer)
        group_layers.setdefault(group, []).append(layer)
        pair_counts, label_counts = Pairs(setting), Confusion(setting)
        for c in pieces:
            local = places(ids, pa.array(c.docs, pa.string()), names_sorted=True)
            index = dict(zip(c.docs, local.tolist()))
            for r in regions(c):
                runs = [[names.idx("annotators", a), v, b, e, int(empty)] for a, rs in r.runs.items() for v, b, e, empty in rs]
                if index[r.doc] >= 0:
                    docs.region(index[r.doc], str(si), plain([gi, li, r.begin, r.end, runs]))
            found.add(gi, local, doc_stats(c))
            for k, a in _present(c):
                if (di := int(local[k])) >= 0:
                    docs.present(di, setting.unit or "", str(gi), names.idx("annotators", c.annotators[a]))
            pair_counts.add(c)
            if setting.value == "label":
                label_counts.add(c)
            del c
            release()
        matrix = pair_counts.matrix()
        if matrix is not None:
            pairs.append({"group": gi, "layer": li, **matrix})
        if setting.value == "label":
            confusions.append({"group": gi, "layer": li, **label_counts.matrix()})
    group_of, doc_of, sums, first_found = found.table()
    del found  # its pieces' arrays: the table is all that is needed of them
    doc_groups.append((group_of.astype(np.int32), doc_of.astype(np.int32)))
    groups = per_group(group_of, doc_of, sums, first_found)
    del first_found
    totals = {names.groups[gi]: total for gi, total, _ in groups}
    worst = {names.groups[gi]: di for gi, _, di in groups}
    by_doc = np.zeros((len(docs), 3), np.int64)
    np.add.at(by_doc, doc_of, sums)
    ranked = rank_docs(by_doc, docs.ids, names_sorted=True)
    del by_doc
    present = np.zeros(len(docs), bool)
    present[doc_of] = True
    order = ranked[present[ranked]]
    del ranked, present
    stats = in_slices(lambda a, b: np.column_stack([group_of[a:b], doc_of[a:b], sums[a:b]]).tolist(), len(group_of))
    return {
        "name": setting.name, "kind": "units", "unit": setting.unit, "approach": setting.approach, "mode": setting.mode,
        "value": setting.value, "doc_stats": stats, "doc_order": in_slices(lambda a, b: order[a:b].tolist(), len(order)),
        "groups": _group_rows(setting, totals, worst, values, group_layers),
        "pairs": pairs, "confusion": confusions,
    }


def _item_group(setting: Setting, group: str, pieces: Iterable[Cells], index: int) -> tuple[dict[str, Any], list[Raw]]:
    """An item group's figures and its rows (the items whose labels differ, as JSON text), added up over its pieces."""
    counts, confusions, pairs = Distribution(setting), Confusion(setting), Pairs(setting)
    items = comparable = disagreeing = 0
    rows: list[Raw] = []
    for c in pieces:
        stats = doc_stats(c)
        items, comparable, disagreeing = items + len(c.docs), comparable + int(stats[:, 0].sum()), disagreeing + int(stats[:, 1].sum())
        for found in (counts, confusions, pairs):
            found.add(c)
        rows += [Raw(plain(_item_row(r))) for r in regions(c)]
    return {"group": group, "index": index, "items": items, "comparable": comparable, "disagreeing": disagreeing,
            "share": share(comparable, disagreeing), "distribution": counts.counts(), "confusion": confusions.matrix(),
            "pairs": pairs.matrix()}, rows


def _item_row(r: Region) -> list[Any]:
    return [r.doc, [[a, v] for a, rs in r.runs.items() for v, *_ in rs]]
