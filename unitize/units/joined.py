"""A run's batches' results joined into one run's (:func:`joined`): the marks renumbered into the run's groups and
labels, the segments tables one after the other, in the order of one pass over the whole corpus."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..model.codes import positions
from ..runtime.mapped import Pages, scratch
from .marks import Marks
from .relations import Counts
from .segments import UnitResult, narrowed_type


def joined(unit: str, results: list[UnitResult], groups_of: list[list[str]], groups: list[str], layers: list[str],
           labels_of: list[list[str]], labels: list[str]) -> UnitResult:
    """The results of a run's batches as one run's: their marks renumbered into the run's groups and labels
    (``groups_of``, ``labels_of``: each batch's own; ``groups``, ``labels`` the run's) and their segments tables
    one after the other. Batches come in ascending group order; one group may go on over several batches,
    each holding later documents than the one before (a crowd study is one group, read a batch of documents
    at a time): its segments are then put back in (group, layer, document) order, its marks in key order."""
    if len(results) == 1:
        return results[0]
    keys = replace(results[0].marks.keys, labels=max(len(labels), 1))
    rank = {g: i for i, g in enumerate(groups)}
    labelled = all(r.marks.labelled for r in results)
    merged, pages = _room([r.marks for r in results])
    at = dict.fromkeys(merged, 0)
    for res, own_groups, own in zip(results, groups_of, labels_of):
        marks = res.marks
        to_run = np.array([rank[g] for g in own_groups], dtype=np.int64)
        group, layer, annotator, doc = marks.keys.split(marks.key)
        parts = {"key": keys.encode(to_run[group], layer, annotator, doc)}
        scale = marks.keys.labels
        group, layer, annotator, doc = marks.keys.split(marks.label_key // scale)
        label = np.searchsorted(labels, own)[marks.label_key % scale] if own else marks.label_key
        parts["label_key"] = keys.labelled(keys.encode(to_run[group], layer, annotator, doc), label)
        del group, layer, annotator, doc, label
        for name in merged:
            part = parts.pop(name) if name in parts else getattr(marks, name)
            merged[name][at[name]:at[name] + part.size] = part
            at[name] += part.size
        # the batch's marks let go once copied: the run's are held once, not once per batch beside them
        none = np.zeros(0, np.int64)
        res.marks = Marks(marks.keys, none, none, none, none, none, none, labelled=marks.labelled)
        del marks, part  # a forked batch's marks lie in a mapping of their own: unmapped with them
    shared = sum(len(g) for g in groups_of) > len(groups)  # a group over several batches
    if shared:
        for prefix in ("", "label_"):
            order = np.lexsort((merged[prefix + "u0"], merged[prefix + "key"]))
            for name in ("key", "u0", "u1"):
                merged[prefix + name][:] = merged[prefix + name][order]  # in place: the arrays may lie in a mapped file
            del order
    pages.let_go()
    segments = [r.segments for r in results]
    tables = _unified(_in_run_order(segments, rank, layers) if shared else pa.concat_tables(segments))  # chunks as they are (maybe mapped files)
    return UnitResult(
        unit=unit,
        marks=Marks(keys, **merged, labelled=labelled),
        segments=tables,
        findings=[f for r in results for f in r.findings],
        in_segments=sum(r.in_segments for r in results),
        excluded=sum((r.excluded for r in results), Counter()),
        mapped=[m for r in results for m in r.mapped] + ([pages.mapping] if pages.mapping is not None else []),
        relations=None if any(r.relations is None for r in results) else _added(r.relations or {} for r in results),
    )


def _room(marks: list[Marks]) -> tuple[dict[str, np.ndarray], Pages]:
    """Arrays for the batches' marks one after the other, each of the type concatenating them gives: keys of 64
    bits, unit positions of 32 where every batch's fit (:func:`~unitize.units.segments.narrowed`) — in a mapped
    scratch file once large (the writer reads them a work partition at a time), and that mapping."""
    names = ("key", "u0", "u1", "label_key", "label_u0", "label_u1")
    shapes = []
    for name in names:
        arrays = [getattr(m, name) for m in marks]
        types = [np.int64] if name.endswith("key") else [narrowed_type(a) for a in arrays]
        shapes.append(((sum(a.size for a in arrays),), np.result_type(*types)))
    room, pages = scratch(shapes)
    return dict(zip(names, room)), pages


def _unified(table: pa.Table) -> pa.Table:
    """``table`` with one dictionary per dictionary column: a column whose chunks share one dictionary (the documents'
    ids, which every batch takes from the run) is left as it is — unifying copies the dictionary and reads every chunk's
    (2 M documents in 252 batch tables: 3.6 GB) —, the others unified."""
    for i, column in enumerate(table.columns):
        if not pa.types.is_dictionary(column.type) or column.num_chunks < 2:
            continue
        first = column.chunk(0).dictionary
        if all(_same(c.dictionary, first) for c in column.chunks[1:]):
            continue
        table = table.set_column(i, table.field(i), pa.table({"c": column}).unify_dictionaries().column(0))
    return table


def _same(a: pa.Array, b: pa.Array) -> bool:
    """Whether two arrays are one (the same buffers), without comparing their values."""
    return a is b or (len(a) == len(b) and a.offset == b.offset
                      and [x.address if x is not None else None for x in a.buffers()] == [x.address if x is not None else None for x in b.buffers()])


def _in_run_order(tables: list[pa.Table], rank: dict[str, int], layers: list[str]) -> pa.Table:
    """Segments tables of batches (each sorted by group, layer, document, …; a group's later documents in a later
    batch) as one table in that order: each batch's runs of one (group, layer), put in (group, layer, batch) order."""
    layer_rank = {name: i for i, name in enumerate(layers)}
    runs: list[tuple[int, int, int, int]] = []
    for k, table in enumerate(tables):
        if not table.num_rows:
            continue
        run_key = positions(table.column("group"), rank)[0] * len(layers) + positions(table.column("layer"), layer_rank)[0]
        change = np.flatnonzero(run_key[1:] != run_key[:-1]) + 1
        starts, stops = [0, *change.tolist()], [*change.tolist(), run_key.size]
        runs += [(int(run_key[a]), k, a, b) for a, b in zip(starts, stops)]
    runs.sort()
    return pa.concat_tables([tables[k].slice(a, b - a) for _, k, a, b in runs]) if runs else pa.concat_tables(tables)


def _added(parts: Iterable[dict[str, Counts]]) -> dict[str, Counts]:
    """Relation counts per group, added up over batches (a group over several batches counts in each)."""
    out: dict[str, Counts] = {}
    for part in parts:
        for group, counts in part.items():
            into = out.setdefault(group, {})
            for layers, n in counts.items():
                into[layers] = into.get(layers, 0) + n
    return out
