"""Segment resolution: each annotator's fragments become disjoint segments in unit space.

DESIGN.md §4, steps 1–3, for every (group, document, layer, annotator) at once:
fragments are joined into segments (``discontinuous``), segments are turned into
unit ranges (characters, or words with snapping), segments that cover no unit are
reported and left out, and an annotator's intersecting segments within one layer
are merged. The result is the ``segments/<unit>.parquet`` table and the sorted
arrays the matrix builders mark from. Pure NumPy and Arrow, no I/O.
"""

from __future__ import annotations

import mmap
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model import Corpus, Finding, Span
from ..model.findings import span_finding
from ..schema import segments_schema
from .marks import Marks
from .relations import Counts
from .unitizers import Merged, SegmentKey, Segments, UnitSpace, char_units, merge_overlaps, word_units


class FragmentNames(TypedDict):
    """The names the indices of the live fragments refer to (each list's position is the index)."""

    groups: list[str]
    layers: list[str]
    annotators: list[str]
    labels: list[str]


@dataclass
class UnitResult:
    """Resolved segments of one unit type: the segments table, their marks, findings and accounting.

    ``mapped``: the memory maps of files the segments table lies in (a streamed run's), whose pages
    :meth:`let_go` hands back to the system once the table is written (a later read maps them again).
    ``relations``: discourse data's relations per group (:func:`unitize.units.relations.relation_counts` of the
    segments), counted where the segments are made; None when not counted.
    """

    unit: str
    marks: Marks
    segments: pa.Table
    findings: list[Finding]
    in_segments: int
    excluded: Counter
    mapped: list[mmap.mmap] = field(default_factory=list)
    relations: dict[str, Counts] | None = None

    def let_go(self) -> None:
        """Drop the resident pages of the files the segments table is mapped from (none when in memory)."""
        for m in self.mapped:
            m.madvise(mmap.MADV_DONTNEED)



def _first_of_pairs(owner: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Positions of the first occurrence of each (owner, value) pair, in position order.

    ``owner`` is sorted, so the pairs come out grouped by owner, each owner's values in the
    order they first occur.
    """
    if not owner.size:
        return np.zeros(0, dtype=np.int64)
    pair = owner * (int(value.max()) + 1) + value
    _, first = np.unique(pair, return_index=True)
    return np.sort(first)


def _list_column(owner: np.ndarray, values: pa.Array, m: int, *, null_when_empty: bool = False) -> pa.ListArray:
    """A list per owner ``0 … m-1`` holding ``values`` (grouped by the sorted ``owner``)."""
    counts = np.bincount(owner, minlength=m)
    offsets = np.zeros(m + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    mask = pa.array(counts == 0) if null_when_empty else None
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)


def _records(spans: list[Span], owner: np.ndarray, element: np.ndarray, span: np.ndarray, m: int) -> tuple[pa.ListArray, Callable[[int], list[str]]]:
    """Per merged segment, its records ``source#record`` in the order of their first fragment.

    ``owner``, ``element`` and ``span`` are the live fragments sorted by merged segment, then
    fragment. Returns the list column and a function giving a segment's record ids (for findings).
    """
    pos = _first_of_pairs(owner, element)  # one per element (its layer is the segment's)
    rep = span[pos].tolist()
    sources = pa.array([spans[i].source for i in rep], pa.string())
    record_ids = [spans[i].record for i in rep]
    keys = pc.binary_join_element_wise(sources, pa.array(record_ids, pa.string()), "#")
    # two elements may still print alike (a '#' inside a source or record): one entry then, as before
    codes = keys.dictionary_encode().indices.to_numpy(zero_copy_only=False).astype(np.int64)
    keep = _first_of_pairs(owner[pos], codes)
    column = _list_column(owner[pos][keep], keys.take(pa.array(keep)), m)
    bounds = column.offsets.to_numpy()

    def record_names(s: int) -> list[str]:
        # the record id after the key's last '#', as the key was split before
        return [record_ids[j].rsplit("#", 1)[-1] for j in keep[bounds[s] : bounds[s + 1]].tolist()]

    return column, record_names


def _labels(owner: np.ndarray, label: np.ndarray, labelled: np.ndarray, label_names: list[str], m: int) -> pa.Array:
    """Per merged segment, its fragments' labels sorted and joined with '+'; null when none has a label."""
    owner, label = owner[labelled], label[labelled]
    pos = _first_of_pairs(owner, label)
    by_owner = np.lexsort((label[pos], owner[pos]))  # label indices follow the sorted names
    pos = pos[by_owner]
    values = pa.array(label_names, pa.string()).take(pa.array(label[pos]))
    return pc.binary_join(_list_column(owner[pos], values, m, null_when_empty=True), "+")


def resolve_segments(
    unit: str,
    space: UnitSpace,
    corpus: Corpus,
    frag: dict[str, np.ndarray],
    segs: Segments,
    names: FragmentNames,
    docs: pa.Array | None = None,
    labelled: bool = True,
) -> UnitResult:
    """Fragments → segments → units → merged disjoint segments, for one unit type.

    ``frag`` holds the live fragments as parallel arrays (span index, label, group,
    layer, annotator and document indices, element, begin, end); ``segs`` is their
    :func:`~unitize.units.unitizers.fragments_to_segments`; ``names`` the group, layer,
    annotator and label names the indices refer to; ``docs`` the space's document ids as the ``doc_id`` column's
    dictionary (a run of many batches makes it once; default: made here); ``labelled``: the marks of the labels
    matrices too (a run with a ``labels`` mode). Findings: ``empty-segment``, ``word-snapped``, ``segments-merged``.
    """
    spans = corpus.spans
    rep = frag["span"][segs.first_fragment]  # a representative span per segment
    doc = frag["doc"][segs.first_fragment]
    if unit == "char":
        u0, u1, empty = char_units(segs.begin, segs.end, space.char_base[doc])
        snapped = np.zeros(u0.size, dtype=bool)
    else:
        starts, ends = space.extents()
        u0, u1, empty, snapped = word_units(segs.begin, segs.end, space.char_base[doc], starts, ends)
    findings = _unit_findings(unit, space, spans, segs, rep, doc, u0, u1, empty, snapped)
    frags_per_segment = np.bincount(segs.fragment_segment[segs.fragment_segment >= 0], minlength=segs.begin.size)
    excluded: Counter = Counter({"empty-segment": int(frags_per_segment[empty].sum())} if empty.any() else {})

    live = np.flatnonzero(~empty)
    first = segs.first_fragment
    keys = SegmentKey(len(names["layers"]), len(names["annotators"]), len(space.doc_ids), max(len(names["labels"]), 1))
    key = keys.encode(frag["group"][first], frag["layer"][first], frag["annotator"][first], doc)
    merged = merge_overlaps(key[live], u0[live], u1[live])
    label_key, label_u0, label_u1 = _labelled_marks(keys, merged, frag["label"][first][live], labelled)
    frag_merged = _members(segs.fragment_segment, segs.begin.size, live, merged.cluster)

    # records and labels per merged segment, in fragment order
    m = merged.key.size
    order = np.lexsort((np.arange(frag_merged.size), frag_merged))
    order = order[frag_merged[order] >= 0]
    owner = frag_merged[order]
    records, record_names = _records(spans, owner, frag["element"][order], frag["span"][order], m)
    label_col = _labels(owner, frag["label"][order], frag["labelled"][order], names["labels"], m)
    findings += _merge_findings(unit, spans, merged.size, frag["span"], order, owner, record_names)

    extended, snapped_m = _any_of(merged.cluster, segs.extended[live], m), _any_of(merged.cluster, snapped[live], m)
    table = _segments_table(unit, docs, space, names, keys, merged, label_col, records, extended, snapped_m)
    return UnitResult(
        unit=unit,
        marks=Marks(keys, merged.key, narrowed(merged.u0), narrowed(merged.u1), label_key, narrowed(label_u0), narrowed(label_u1),
                    labelled),
        segments=table,
        findings=findings,
        in_segments=int((frag_merged >= 0).sum()),
        excluded=excluded,
    )


def narrowed(positions: np.ndarray) -> np.ndarray:
    """Unit positions as int32 when they fit (a run holds every segment's: millions of them), else as they are."""
    return positions.astype(narrowed_type(positions), copy=False)


def narrowed_type(positions: np.ndarray) -> np.dtype:
    """The type :func:`narrowed` gives ``positions``."""
    if positions.size and int(positions.min()) >= 0 and int(positions.max()) < 1 << 31:
        return np.dtype(np.int32)
    return positions.dtype


def _any_of(cluster: np.ndarray, flags: np.ndarray, m: int) -> np.ndarray:
    """Per merged segment (``m`` of them): whether any of its segments (``cluster``: each one's merged segment) is flagged."""
    out = np.zeros(m, dtype=bool)
    np.logical_or.at(out, cluster, flags)
    return out


def _unit_findings(unit: str, space: UnitSpace, spans: list[Span], segs: Segments, rep: np.ndarray, doc: np.ndarray,
                   u0: np.ndarray, u1: np.ndarray, empty: np.ndarray, snapped: np.ndarray) -> list[Finding]:
    """``empty-segment`` for each segment that covers no unit, ``word-snapped`` for each that cuts a word."""
    findings = []
    for s in np.flatnonzero(empty):
        span = spans[rep[s]]
        what = "no character" if unit == "char" else "no word (zero length or whitespace only)"
        findings.append(span_finding("empty-segment", span, f"{span.layer} at {segs.begin[s]}..{segs.end[s]} covers {what}",
                                     f"left out of the {unit} units", unit=unit))
    for s in np.flatnonzero(snapped & ~empty):
        span = spans[rep[s]]
        findings.append(
            span_finding(
                "word-snapped",
                span,
                f"{span.layer} at {segs.begin[s]}..{segs.end[s]} cuts a word; "
                f"snapped to {space.local_extent(doc[s], u0[s])[0]}..{space.local_extent(doc[s], u1[s])[1]}",
                "whole words used",
                unit=unit,
            )
        )
    return findings


def _members(fragment_segment: np.ndarray, n_segments: int, live: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Per fragment, the merged segment it went into (-1: its segment was dropped or left out)."""
    seg_to_live = np.full(n_segments, -1, dtype=np.int64)
    seg_to_live[live] = np.arange(live.size)
    out = np.full(fragment_segment.size, -1, dtype=np.int64)
    kept = fragment_segment >= 0
    live_of_frag = np.full(fragment_segment.size, -1, dtype=np.int64)
    live_of_frag[kept] = seg_to_live[fragment_segment[kept]]
    has = live_of_frag >= 0
    out[has] = cluster[live_of_frag[has]]
    return out


def _merge_findings(unit: str, spans: list[Span], size: np.ndarray, span_of: np.ndarray, order: np.ndarray, owner: np.ndarray,
                    record_names: Callable[[int], list[str]]) -> list[Finding]:
    """``segments-merged`` for each merged segment made of several, named by its first fragment's span."""
    first_member = np.full(size.size, -1, dtype=np.int64)
    if owner.size:
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        first_member[owner[starts]] = order[starts]
    findings = []
    for s in np.flatnonzero(size > 1):
        first = spans[span_of[first_member[s]]]
        recs = record_names(int(s))
        findings.append(
            span_finding(
                "segments-merged",
                first,
                f"{size[s]} overlapping {first.layer} segments (records {', '.join(recs)}) merged into one",
                f"one segment in the {unit} units",
                unit=unit,
                record="+".join(dict.fromkeys(recs)),
            )
        )
    return findings


def _labelled_marks(keys: SegmentKey, merged: Merged, label: np.ndarray, made: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The marks of a labels matrix: each merged segment once per label of its fragments, over the merged extent —
    so a unit's value is its segment's label (DESIGN §4: an annotator's intersecting segments of one layer are one
    segment, labelled with their labels joined), the one rule span F1, the alt-test, adjudication and the report
    read (docs/convert.md, "One label per unit"). Empty unless ``made``."""
    if not made:
        none = np.zeros(0, np.int64)
        return none, none, none
    scale = keys.labels
    pairs = np.unique(merged.cluster.astype(np.int64) * scale + label.astype(np.int64))
    cluster, lab = pairs // scale, pairs % scale
    key = keys.labelled(merged.key[cluster], lab)
    order = np.lexsort((merged.u0[cluster], key))
    return key[order], merged.u0[cluster][order], merged.u1[cluster][order]


def _segments_table(unit: str, docs: pa.Array | None, space: UnitSpace, names: FragmentNames, keys: SegmentKey, merged: Merged,
                    label_col: pa.Array, records: pa.Array, extended: np.ndarray, snapped: np.ndarray) -> pa.Table:
    """``segments/<unit>.parquet``: a row per merged segment, sorted by (group, layer, doc, annotator, u0)."""
    docs = pa.array(space.doc_ids, pa.string()) if docs is None else docs
    m = merged.key.size
    m_group, m_layer, m_ann, m_doc = keys.split(merged.key)
    _, end_last = space.local_extent(m_doc, merged.u1)
    begin, _ = space.local_extent(m_doc, merged.u0)
    sort = np.lexsort((merged.u0, m_ann, m_doc, m_layer, m_group))
    base = space.base[m_doc]

    def dict_col(indices: np.ndarray, values: list[str] | pa.Array) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(indices[sort].astype(np.int32)), values if isinstance(values, pa.Array)
                                              else pa.array(values, pa.string()))

    take = pa.array(sort)
    return pa.Table.from_arrays(
        [
            pa.DictionaryArray.from_arrays(pa.array(np.zeros(m, dtype=np.int32)), pa.array([unit], pa.string())),
            dict_col(m_group, names["groups"]),
            dict_col(m_doc, docs),
            dict_col(m_layer, names["layers"]),
            dict_col(m_ann, names["annotators"]),
            label_col.take(take),
            pa.array((merged.u0 - base)[sort].astype(np.int32)),
            pa.array((merged.u1 + 1 - base)[sort].astype(np.int32)),
            pa.array(begin[sort].astype(np.int32)),
            pa.array(end_last[sort].astype(np.int32)),
            pa.array(extended[sort]),
            pa.array(snapped[sort]),
            pa.array(merged.size[sort].astype(np.int32)),
            records.take(take),
        ],
        schema=segments_schema(),
    )
