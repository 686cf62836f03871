"""The run: read a corpus, validate it, unitize it, write it.

Each step is a plain function over plain data:

- :func:`read_corpus` — settings → :class:`~unitize.model.Corpus` (the adapter's work);
- :func:`unitize` — corpus + settings → :class:`Unitized` (validation, segments,
  lazily built unit matrices);
- :func:`write_output` — unitized → an output directory, returns the manifest;
- :func:`convert` — all three, as the CLI runs them.
"""

from __future__ import annotations

import json
import platform
import socket
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pyarrow as pa

from . import __version__
from .adapters import get_adapter
from .config import Settings
from .model import Corpus, Finding
from .output import OutputDir, ParquetStream, atomic_write_text
from .progress import Progress, Sized, no_progress
from .report import CODES, ERROR, count_by_severity, sort_key, span_finding
from .schema import FORMAT_VERSION, documents_schema, segments_schema, units_schema
from .tokenize import get_tokenizer
from .unitizers import (
    char_units,
    fragments_to_segments,
    label_codes,
    label_dictionary,
    mark,
    merge_overlaps,
    word_units,
)
from .validate import Validation, validate

_RESERVED = {"group", "doc_id", "layer", "unit", "begin", "end"}

#: layout "auto" writes the long layout above this many annotators (crowd data), else wide
LONG_LAYOUT_ABOVE = 32
#: labels mode: the value of a unit no segment of the annotator covers (null = annotator missing)
NOT_ANNOTATED = "O"
#: labels mode: the label of a span that has none
UNLABELLED = "*"
#: labels mode codes labels as bits of a uint64
MAX_LABELS = 64
#: long layout: rows per table written (whole documents per table)
LONG_BATCH_ROWS = 1 << 20


class RunError(ValueError):
    """A run that cannot proceed for a reason the user can fix (exit code 2)."""


def read_corpus(settings: Settings, progress: Progress | None = None) -> Corpus:
    """Read the input named by ``settings`` with its format's adapter."""
    adapter = get_adapter(settings.format)
    unknown = set(settings.input) - set(adapter.options)
    if unknown:
        raise RunError(
            f"[input] key(s) {', '.join(sorted(unknown))} are not options of format {settings.format!r}; "
            f"known: {', '.join(adapter.options)}"
        )
    if (
        "annotations" in adapter.options
        and "annotations" not in settings.input
        and not isinstance(settings.input.get("annotators"), dict)
    ):
        raise RunError("no input given: set [input] annotations (or --annotations), or an [input.annotators] table")
    corpus = adapter.read(**settings.input, base=settings.base, progress=progress or no_progress)
    if not corpus.submissions and not corpus.findings and not corpus.items:
        where = settings.input.get("annotations") or "the input"
        why = (
            f"; {corpus.skipped_by_selection} file(s) were skipped by the annotators/groups selection "
            f"{settings.input.get('annotators') or ''} {settings.input.get('groups') or ''}".rstrip()
            if corpus.skipped_by_selection
            else ""
        )
        raise RunError(f"no annotation files were read from {where}{why}")
    return corpus


def _configured_annotators(settings: Settings) -> list[str] | None:
    """The annotators the study names (a list, or the keys of an annotator -> directory table)."""
    named = settings.input.get("annotators")
    return list(named) if named else None


# --- unit spaces ---------------------------------------------------------------


@dataclass(frozen=True)
class UnitSpace:
    """The coding units of every document with a text, laid end to end.

    Document ``d`` has ``n_units[d]`` units at global positions
    ``base[d] …``; its characters start at global position ``char_base[d]``.
    For word units ``starts``/``ends`` are the global character extents of
    every token.
    """

    unit: str
    doc_ids: list[str]
    n_units: np.ndarray
    base: np.ndarray
    char_base: np.ndarray
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None

    def local_extent(self, doc: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Document-local character ``[begin, end)`` of global units ``u`` of documents ``doc``."""
        if self.unit == "char":
            begin = u - self.char_base[doc]
            return begin, begin + 1
        return self.starts[u] - self.char_base[doc], self.ends[u] - self.char_base[doc]


def _cumulative(n: np.ndarray) -> np.ndarray:
    base = np.zeros(n.size, dtype=np.int64)
    if n.size:
        np.cumsum(n[:-1], out=base[1:])
    return base


def build_spaces(
    corpus: Corpus, units: Iterable[str], tokenizer: str, progress: Progress = no_progress
) -> dict[str, UnitSpace]:
    """Character and/or word unit spaces; each document is tokenized once."""
    doc_ids = sorted(d for d, doc in corpus.documents.items() if doc.text is not None)
    lengths = np.array([len(corpus.documents[d].text) for d in doc_ids], dtype=np.int64)
    char_base = _cumulative(lengths)
    spaces: dict[str, UnitSpace] = {}
    units = set(units)
    if "char" in units:
        spaces["char"] = UnitSpace("char", doc_ids, lengths, char_base, char_base)
    if "word" in units:
        tokenize = None if tokenizer == "given" else get_tokenizer(tokenizer)
        starts, ends, counts = [], [], []
        for d, cb in zip(progress(doc_ids, "tokenizing"), char_base):
            if tokenize is None:
                s, e = _given_tokens(corpus, d)
            else:
                s, e = tokenize(corpus.documents[d].text)
            starts.append(s + cb)
            ends.append(e + cb)
            counts.append(s.size)
        n_tok = np.array(counts, dtype=np.int64)
        spaces["word"] = UnitSpace(
            "word",
            doc_ids,
            n_tok,
            _cumulative(n_tok),
            char_base,
            np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64),
            np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64),
        )
    return spaces


def _given_tokens(corpus: Corpus, doc_id: str) -> tuple[np.ndarray, np.ndarray]:
    tokens = corpus.documents[doc_id].tokens
    if tokens is None:
        raise RunError(
            f"tokenizer 'given': format {corpus.format!r} gives no tokens for document {doc_id}; "
            "choose a tokenizer (spacy:<lang>, regex or whitespace)"
        )
    return np.asarray(tokens[0], dtype=np.int64), np.asarray(tokens[1], dtype=np.int64)


# --- unitization ---------------------------------------------------------------


@dataclass
class UnitResult:
    """Resolved segments of one unit type (global unit positions, sorted by key then u0)."""

    unit: str
    group: np.ndarray
    layer: np.ndarray
    annotator: np.ndarray
    doc: np.ndarray
    key: np.ndarray
    u0: np.ndarray
    u1: np.ndarray
    segments: pa.Table
    findings: list[Finding]
    in_segments: int
    excluded: Counter
    #: per-label merged segments for mode "labels": key * n_labels + label, sorted
    label_key: np.ndarray | None = None
    label_u0: np.ndarray | None = None
    label_u1: np.ndarray | None = None


@dataclass
class Unitized:
    """A validated, unitized corpus: segments now, unit matrices on demand."""

    settings: Settings
    corpus: Corpus
    validation: Validation
    groups: list[str]
    layers: list[str]
    annotators: list[str]
    spaces: dict[str, UnitSpace]
    results: dict[str, UnitResult]
    findings: list[Finding]
    accounting: dict[str, Any]
    #: "wide" (a column per annotator) or "long" (a row per unit and annotator)
    layout: str = "wide"
    #: labels mode: every label, sorted (bit i of a label code = labels[i])
    labels: list[str] = field(default_factory=list)
    #: per group, per document: indices of the annotators with a submission (long layout rows)
    present: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    def documents_in(self, group: str) -> list[str]:
        """Documents of a group's unit universe, sorted."""
        return sorted(self.validation.universe.get(group, {}))

    # -- matrices --

    def _frame(self, unit: str, group: str) -> dict[str, Any]:
        """Row layout of a group's matrices (shared by its layers)."""
        space = self.spaces[unit]
        doc_index = {d: i for i, d in enumerate(space.doc_ids)}
        docs = self.documents_in(group)
        di = np.array([doc_index[d] for d in docs], dtype=np.int64)
        n = space.n_units[di]
        total = int(n.sum())
        row_base = _cumulative(n)
        doc_col = np.repeat(np.arange(di.size, dtype=np.int32), n)
        local = np.arange(total, dtype=np.int64) - np.repeat(row_base, n)
        glob = local + np.repeat(space.base[di], n)
        begin, end = space.local_extent(np.repeat(di, n), glob)
        position = np.full(len(space.doc_ids), -1, dtype=np.int64)
        position[di] = np.arange(di.size)
        return {
            "docs": docs,
            "di": di,
            "n": n,
            "total": total,
            "row_base": row_base,
            "position": position,
            "columns": {
                "doc_id": pa.DictionaryArray.from_arrays(pa.array(doc_col), pa.array(docs, pa.string())),
                "unit": pa.array(local.astype(np.int32)),
                "begin": pa.array(begin.astype(np.int32)),
                "end": pa.array(end.astype(np.int32)),
            },
        }

    def _marks(self, unit: str, group: str, layer: str, approach: str, frame: dict[str, Any]) -> dict[str, np.ndarray]:
        res = self.results[unit]
        space = self.spaces[unit]
        gi = self.groups.index(group)
        li = self.layers.index(layer)
        n_a, n_d = len(self.annotators), len(space.doc_ids)
        out = {}
        for ai, annotator in enumerate(self.annotators):
            lo_key = ((gi * len(self.layers) + li) * n_a + ai) * n_d
            lo, hi = np.searchsorted(res.key, [lo_key, lo_key + n_d])
            doc = res.doc[lo:hi]
            pos = frame["position"][doc]
            keep = pos >= 0
            offset = frame["row_base"][pos[keep]] - space.base[doc[keep]]
            out[annotator] = mark(frame["total"], res.u0[lo:hi][keep] + offset, res.u1[lo:hi][keep] + offset, approach)
        return out

    def _nulls(self, group: str, frame: dict[str, Any]) -> dict[str, np.ndarray | None]:
        """Per annotator: a row mask of nulls (annotator missing), or None when there are none."""
        expected = set(self.validation.annotators.get(group, []))
        missing_by_doc = self.validation.universe.get(group, {})
        out: dict[str, np.ndarray | None] = {}
        for annotator in self.annotators:
            if annotator not in expected:
                out[annotator] = np.ones(frame["total"], dtype=bool)
                continue
            docs_missing = np.array([annotator in missing_by_doc[d] for d in frame["docs"]], dtype=bool)
            out[annotator] = np.repeat(docs_missing, frame["n"]) if docs_missing.any() else None
        return out

    def _table(self, schema: pa.Schema, group: str, layer: str, frame: dict[str, Any], values, nulls) -> pa.Table:
        total = frame["total"]
        zeros = pa.array(np.zeros(total, dtype=np.int32))
        columns = [
            pa.DictionaryArray.from_arrays(zeros, pa.array([group], pa.string())),
            frame["columns"]["doc_id"],
            pa.DictionaryArray.from_arrays(zeros, pa.array([layer], pa.string())),
            frame["columns"]["unit"],
            frame["columns"]["begin"],
            frame["columns"]["end"],
        ]
        for annotator in self.annotators:
            columns.append(_value_array(values[annotator], nulls[annotator]))
        return pa.Table.from_arrays(columns, schema=schema)

    def matrix_schema(self, unit: str, approach: str, mode: str) -> pa.Schema:
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "annotators": self.annotators,
            "unit": unit,
            "approach": approach,
            "mode": mode,
            "value": {"combined": "bitmask", "labels": "label"}.get(mode, "binary"),
            "layout": self.layout,
            "tokenizer": self.settings.tokenizer if unit == "word" else None,
            "settings": self.settings.resolved(with_output=False),
        }
        if mode == "combined":
            meta["layer_bits"] = {layer: 1 << i for i, layer in enumerate(self.settings.layers)}
        if mode == "labels":
            meta["not_annotated"] = NOT_ANNOTATED
            meta["labels"] = self.labels
        return units_schema(self.annotators, meta)

    def _group_tables(self, schema: pa.Schema, unit: str, approach: str, mode: str, group: str, layers: list[str]) -> Iterator[pa.Table]:
        frame = self._frame(unit, group)
        if self.layout == "long":
            yield from self._long_tables(schema, unit, approach, mode, group, layers, frame)
            return
        nulls = self._nulls(group, frame)
        if mode == "labels":
            for layer in layers:
                yield self._table(schema, group, layer, frame, self._label_marks(unit, group, layer, approach, frame), nulls)
            return
        if mode == "combined":
            combined = {a: np.zeros(frame["total"], dtype=np.uint8) for a in self.annotators}
            for bit, layer in enumerate(self.settings.layers):
                for a, v in self._marks(unit, group, layer, approach, frame).items():
                    combined[a] |= v << np.uint8(bit)
            yield self._table(schema, group, "+".join(self.settings.layers), frame, combined, nulls)
        else:
            for layer in layers:
                yield self._table(schema, group, layer, frame, self._marks(unit, group, layer, approach, frame), nulls)

    def _label_marks(self, unit: str, group: str, layer: str, approach: str, frame: dict[str, Any]) -> dict[str, tuple]:
        """Per annotator, the dictionary-encoded labels of a (group, layer) matrix."""
        res, space = self.results[unit], self.spaces[unit]
        n_lab = max(len(self.labels), 1)
        gi, li = self.groups.index(group), self.layers.index(layer)
        n_a, n_d = len(self.annotators), len(space.doc_ids)
        out = {}
        for ai, annotator in enumerate(self.annotators):
            lo_key = ((gi * len(self.layers) + li) * n_a + ai) * n_d
            lo, hi = np.searchsorted(res.label_key, [lo_key * n_lab, (lo_key + n_d) * n_lab])
            k = res.label_key[lo:hi]
            doc = (k // n_lab) % n_d
            pos = frame["position"][doc]
            keep = pos >= 0
            offset = frame["row_base"][pos[keep]] - space.base[doc[keep]]
            codes = label_codes(
                frame["total"], res.label_u0[lo:hi][keep] + offset, res.label_u1[lo:hi][keep] + offset, (k % n_lab)[keep], approach
            )
            out[annotator] = label_dictionary(codes, self.labels, NOT_ANNOTATED)
        return out

    def _long_tables(
        self, schema: pa.Schema, unit: str, approach: str, mode: str, group: str, layers: list[str], frame: dict[str, Any]
    ) -> Iterator[pa.Table]:
        """The long layout: one row per (unit, annotator) that exists, sorted by (doc, annotator, unit).

        Tables hold at most about :data:`LONG_BATCH_ROWS` rows (whole documents), so memory
        stays bounded for crowd data sets.
        """
        res, space = self.results[unit], self.spaces[unit]
        n_l, n_a, n_d = len(self.layers), len(self.annotators), len(space.doc_ids)
        n_lab = max(len(self.labels), 1)
        gi = self.groups.index(group)
        present = self.present.get(group, {})
        p_pos = np.array([pos for pos, d in enumerate(frame["docs"]) for _ in present.get(d, ())], dtype=np.int64)
        p_ann = np.array([a for d in frame["docs"] for a in present.get(d, ())], dtype=np.int64)
        n = frame["n"][p_pos]
        pair_base = _cumulative(n)
        pair_code = p_pos * n_a + p_ann  # ascending: documents in order, annotators sorted within
        # batches of pairs [lo, hi) that never split a document
        cuts = [0]
        for p in np.flatnonzero(np.r_[True, p_pos[1:] != p_pos[:-1]]).tolist() if p_pos.size else []:
            if pair_base[p] - pair_base[cuts[-1]] >= LONG_BATCH_ROWS:
                cuts.append(p)
        cuts.append(p_pos.size)

        def pairs_of(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Pair index of merged segments with keys ``k``, and a mask of those that have one."""
            if pair_code.size == 0:
                return np.zeros(k.size, dtype=np.int64), np.zeros(k.size, dtype=bool)
            pos = frame["position"][k % n_d]
            code = pos * n_a + (k // n_d) % n_a
            p = np.minimum(np.searchsorted(pair_code, code), pair_code.size - 1)
            return p, (pos >= 0) & (pair_code[p] == code)

        def segments(layer: str, labelled: bool) -> tuple[np.ndarray, ...]:
            """(pair, u0, u1 local to the document, label) of a layer's segments that have rows."""
            lo_key = (gi * n_l + self.layers.index(layer)) * n_a * n_d
            keys, u0, u1 = (res.label_key, res.label_u0, res.label_u1) if labelled else (res.key, res.u0, res.u1)
            scale = n_lab if labelled else 1
            lo, hi = np.searchsorted(keys, [lo_key * scale, (lo_key + n_a * n_d) * scale])
            k = keys[lo:hi]
            p, ok = pairs_of(k // scale)
            base = space.base[(k // scale) % n_d]
            return p[ok], (u0[lo:hi] - base)[ok], (u1[lo:hi] - base)[ok], (k % scale)[ok]

        def values(segs: tuple[np.ndarray, ...], a: int, b: int, labelled: bool) -> Any:
            p, u0, u1, lab = segs
            sel = (p >= a) & (p < b)
            offset = pair_base[p[sel]] - pair_base[a]
            total = int(pair_base[b - 1] + n[b - 1] - pair_base[a]) if b > a else 0
            if labelled:
                codes = label_codes(total, u0[sel] + offset, u1[sel] + offset, lab[sel], approach)
                return label_dictionary(codes, self.labels, NOT_ANNOTATED)
            return mark(total, u0[sel] + offset, u1[sel] + offset, approach)

        def table(layer_name: str, a: int, b: int, vals: Any) -> pa.Table:
            nb = n[a:b]
            total = int(nb.sum())
            rows = pa.array(np.repeat(frame["row_base"][p_pos[a:b]] - (pair_base[a:b] - pair_base[a]), nb) + np.arange(total, dtype=np.int64))
            zeros = pa.array(np.zeros(total, dtype=np.int32))
            columns = [
                pa.DictionaryArray.from_arrays(zeros, pa.array([group], pa.string())),
                pa.DictionaryArray.from_arrays(pa.array(np.repeat(p_pos[a:b], nb).astype(np.int32)), pa.array(frame["docs"], pa.string())),
                pa.DictionaryArray.from_arrays(zeros, pa.array([layer_name], pa.string())),
                frame["columns"]["unit"].take(rows),
                frame["columns"]["begin"].take(rows),
                frame["columns"]["end"].take(rows),
                pa.DictionaryArray.from_arrays(pa.array(np.repeat(p_ann[a:b], nb).astype(np.int32)), pa.array(self.annotators, pa.string())),
                _value_array(vals, None),
            ]
            return pa.Table.from_arrays(columns, schema=schema)

        batches = list(zip(cuts[:-1], cuts[1:]))
        if mode == "combined":
            segs = [segments(layer, False) for layer in self.settings.layers]
            for a, b in batches:
                combined = np.zeros(int(n[a:b].sum()), dtype=np.uint8)
                for bit, s in enumerate(segs):
                    combined |= values(s, a, b, False) << np.uint8(bit)
                yield table("+".join(self.settings.layers), a, b, combined)
            return
        labelled = mode == "labels"
        for layer in layers:
            segs = segments(layer, labelled)
            for a, b in batches:
                yield table(layer, a, b, values(segs, a, b, labelled))

    def matrices(self, unit: str, approach: str, mode: str = "separate") -> Iterator[pa.Table]:
        """Unit matrices, one table per (group, layer) — or per group in combined mode — in sorted order."""
        schema = self.matrix_schema(unit, approach, mode)
        for group in self.groups:
            if self.validation.universe.get(group):
                yield from self._group_tables(schema, unit, approach, mode, group, self.layers)

    def matrix(self, group: str, layer: str, unit: str = "char", approach: str = "interval") -> pa.Table:
        """One (group, layer) unit matrix as a table; empty when the group has no documents."""
        if unit not in self.results:
            raise RunError(f"unit {unit!r} was not computed; settings have units {', '.join(self.results)}")
        if layer not in self.layers:
            raise RunError(f"layer {layer!r} was not unitized; layers are {', '.join(self.layers)}")
        schema = self.matrix_schema(unit, approach, "separate")
        if group not in self.groups or not self.validation.universe.get(group):
            return schema.empty_table()
        # the long layout comes in batches of documents
        return pa.concat_tables(list(self._group_tables(schema, unit, approach, "separate", group, [layer])))


def _value_array(values: Any, nulls: np.ndarray | None) -> pa.Array:
    """A column of unit values: uint8 marks, or ``(indices, dictionary)`` labels; ``nulls`` masks missing."""
    if isinstance(values, tuple):
        indices, dictionary = values
        return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32(), mask=nulls), pa.array(dictionary, pa.string()))
    return pa.array(values, type=pa.uint8(), mask=nulls)


def _record_keys(corpus: Corpus, index: np.ndarray) -> list[str]:
    spans = corpus.spans
    return [f"{spans[i].source}#{spans[i].record}" for i in index]


def _unitize_one(
    unit: str,
    space: UnitSpace,
    corpus: Corpus,
    frag: dict[str, np.ndarray],
    segs,
    names: dict[str, list[str]],
) -> UnitResult:
    """Segments → units → merged disjoint segments, for one unit type."""
    spans = corpus.spans
    findings: list[Finding] = []
    rep = frag["span"][segs.first_fragment]  # a representative span per segment
    doc = frag["doc"][segs.first_fragment]
    if unit == "char":
        u0, u1, empty = char_units(segs.begin, segs.end, space.char_base[doc])
        snapped = np.zeros(u0.size, dtype=bool)
    else:
        u0, u1, empty, snapped = word_units(segs.begin, segs.end, space.char_base[doc], space.starts, space.ends)

    seg_of_frag = segs.fragment_segment
    frags_per_segment = np.bincount(seg_of_frag[seg_of_frag >= 0], minlength=segs.begin.size)
    excluded: Counter = Counter()
    if empty.any():
        excluded["empty-segment"] = int(frags_per_segment[empty].sum())
    for s in np.flatnonzero(empty):
        span = spans[rep[s]]
        what = "no character" if unit == "char" else "no word (zero length or whitespace only)"
        findings.append(
            span_finding(
                "empty-segment",
                span,
                f"{span.layer} at {segs.begin[s]}..{segs.end[s]} covers {what}",
                f"left out of the {unit} units",
                unit=unit,
            )
        )
    for s in np.flatnonzero(snapped & ~empty):
        span = spans[rep[s]]
        findings.append(
            span_finding(
                "word-snapped",
                span,
                f"{span.layer} at {segs.begin[s]}..{segs.end[s]} cuts a word; "
                f"snapped to {space.starts[u0[s]] - space.char_base[doc[s]]}..{space.ends[u1[s]] - space.char_base[doc[s]]}",
                "whole words used",
                unit=unit,
            )
        )

    live = np.flatnonzero(~empty)
    gi, li, ai = frag["group"][segs.first_fragment], frag["layer"][segs.first_fragment], frag["annotator"][segs.first_fragment]
    n_l, n_a, n_d = len(names["layers"]), len(names["annotators"]), len(space.doc_ids)
    key = ((gi * n_l + li) * n_a + ai) * n_d + doc
    merged = merge_overlaps(key[live], u0[live], u1[live])
    n_lab = max(len(names["labels"]), 1)
    by_label = merge_overlaps(key[live] * n_lab + frag["label"][segs.first_fragment][live], u0[live], u1[live])

    # member fragments of each merged segment
    frag_live = seg_of_frag >= 0
    seg_to_live = np.full(segs.begin.size, -1, dtype=np.int64)
    seg_to_live[live] = np.arange(live.size)
    frag_merged = np.full(seg_of_frag.size, -1, dtype=np.int64)
    live_of_frag = np.full(seg_of_frag.size, -1, dtype=np.int64)
    live_of_frag[frag_live] = seg_to_live[seg_of_frag[frag_live]]
    has = live_of_frag >= 0
    frag_merged[has] = merged.cluster[live_of_frag[has]]
    in_segments = int(has.sum())

    m = merged.key.size
    m_doc = merged.key % n_d
    rest = merged.key // n_d
    m_ann = rest % n_a
    rest //= n_a
    m_layer = rest % n_l
    m_group = rest // n_l

    # records and labels per merged segment, in fragment order
    order = np.lexsort((np.arange(frag_merged.size), frag_merged))
    order = order[frag_merged[order] >= 0]
    keys = _record_keys(corpus, frag["span"][order])
    owner = frag_merged[order]
    records: list[list[str]] = [[] for _ in range(m)]
    labels: list[set[str]] = [set() for _ in range(m)]
    for o, k, i in zip(owner.tolist(), keys, frag["span"][order].tolist()):
        if not records[o] or records[o][-1] != k:
            if k not in records[o]:
                records[o].append(k)
        label = spans[i].label
        if label is not None:
            labels[o].add(label)
    label_col = ["+".join(sorted(ls)) if ls else None for ls in labels]

    extended = np.zeros(m, dtype=bool)
    np.logical_or.at(extended, merged.cluster, segs.extended[live])
    snapped_m = np.zeros(m, dtype=bool)
    np.logical_or.at(snapped_m, merged.cluster, snapped[live])

    first_member = np.full(m, -1, dtype=np.int64)
    if owner.size:
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        first_member[owner[starts]] = order[starts]
    for s in np.flatnonzero(merged.size > 1):
        first = spans[frag["span"][first_member[s]]]
        recs = [r.rsplit("#", 1)[1] for r in records[s]]
        findings.append(
            span_finding(
                "segments-merged",
                first,
                f"{merged.size[s]} overlapping {first.layer} segments (records {', '.join(recs)}) merged into one",
                f"one segment in the {unit} units",
                unit=unit,
                record="+".join(dict.fromkeys(recs)),
            )
        )

    begin, end_ = space.local_extent(m_doc, merged.u0)
    _, end_last = space.local_extent(m_doc, merged.u1)
    sort = np.lexsort((merged.u0, m_ann, m_doc, m_layer, m_group))
    base = space.base[m_doc]

    def dict_col(indices: np.ndarray, values: list[str]) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(indices[sort].astype(np.int32)), pa.array(values, pa.string()))

    rec_sorted = [records[i] for i in sort.tolist()]
    table = pa.Table.from_arrays(
        [
            pa.DictionaryArray.from_arrays(pa.array(np.zeros(m, dtype=np.int32)), pa.array([unit], pa.string())),
            dict_col(m_group, names["groups"]),
            dict_col(m_doc, space.doc_ids),
            dict_col(m_layer, names["layers"]),
            dict_col(m_ann, names["annotators"]),
            pa.array([label_col[i] for i in sort.tolist()], pa.string()),
            pa.array((merged.u0 - base)[sort].astype(np.int32)),
            pa.array((merged.u1 + 1 - base)[sort].astype(np.int32)),
            pa.array(begin[sort].astype(np.int32)),
            pa.array(end_last[sort].astype(np.int32)),
            pa.array(extended[sort]),
            pa.array(snapped_m[sort]),
            pa.array(merged.size[sort].astype(np.int32)),
            pa.array(rec_sorted, pa.list_(pa.string())),
        ],
        schema=segments_schema(),
    )
    return UnitResult(
        unit=unit,
        group=m_group,
        layer=m_layer,
        annotator=m_ann,
        doc=m_doc,
        key=merged.key,
        u0=merged.u0,
        u1=merged.u1,
        segments=table,
        findings=findings,
        in_segments=in_segments,
        excluded=excluded,
        label_key=by_label.key,
        label_u0=by_label.u0,
        label_u1=by_label.u1,
    )


def unitize(corpus: Corpus, settings: Settings, progress: Progress | None = None) -> Unitized:
    """Validate and unitize a corpus: segments for every unit type asked for.

    A corpus of flat labels (``corpus.items``) becomes item matrices instead
    (:func:`unitize.item_pipeline.unitize_items`).
    """
    if _is_items(corpus):
        from .item_pipeline import unitize_items

        return unitize_items(corpus, settings)
    progress = progress or no_progress
    if settings.layers_from == "label":
        corpus = replace(corpus, spans=[replace(s, layer=s.label if s.label is not None else s.layer) for s in corpus.spans])
    settings = _format_defaults(settings, corpus)
    annotators = list(_configured_annotators(settings) or corpus.annotators)
    clash = _RESERVED & set(annotators)
    if clash:
        raise RunError(f"annotator name(s) {', '.join(sorted(clash))} clash with unit-matrix column names")
    layout = settings.layout if settings.layout != "auto" else ("long" if len(annotators) > LONG_LAYOUT_ABOVE else "wide")
    adapter_defaults = get_adapter(corpus.format).defaults
    validation = validate(
        corpus,
        annotators=_configured_annotators(settings),
        keep_missing=settings.keep_missing,
        keep_mismatched=settings.keep_mismatched,
        boundaries=bool(adapter_defaults.get("check_boundaries", False)),
        missing_rule=layout == "wide",
        count_rule=adapter_defaults.get("count_rule", True),
    )
    known = set(adapter_defaults.get("layers", ())) | {s.layer for s in corpus.spans}
    unknown = [layer for layer in settings.layers if layer not in known]
    if unknown:
        aliases = adapter_defaults.get("layer_aliases", {})
        hints = [f"{u!r} is read as {aliases[u]!r}" for u in unknown if u in aliases]
        raise RunError(
            f"layer(s) {', '.join(map(repr, unknown))} do not occur in format {corpus.format!r}; "
            f"its layers are {', '.join(sorted(known))}" + (f" ({'; '.join(hints)})" if hints else "")
        )
    spaces = build_spaces(corpus, settings.units, settings.tokenizer, progress)
    groups = corpus.groups
    layers = sorted(set(settings.layers))
    names = {"groups": groups, "layers": layers, "annotators": annotators}
    g_index = {g: i for i, g in enumerate(groups)}
    l_index = {layer: i for i, layer in enumerate(layers)}
    a_index = {a: i for i, a in enumerate(annotators)}
    doc_ids = sorted(d for d, doc in corpus.documents.items() if doc.text is not None)
    d_index = {d: i for i, d in enumerate(doc_ids)}

    spans = corpus.spans
    selected = [i for i, s in enumerate(spans) if s.layer in l_index]
    fate = validation.fate
    findings = list(validation.findings)
    element_ids: dict[tuple[str, str, str], int] = {}
    element_of = {i: element_ids.setdefault((spans[i].source, spans[i].record, spans[i].layer), len(element_ids)) for i in selected}
    # fragments per element over every parsed fragment, valid or not: an element with a bad
    # fragment is still discontinuous
    fragments_of = Counter(element_of.values())
    base_excluded: Counter = Counter(fate[i] for i in selected if fate[i] is not None)
    live = [i for i in selected if fate[i] is None and spans[i].annotator in a_index]
    not_selected_annotator = sum(1 for i in selected if fate[i] is None and spans[i].annotator not in a_index)

    label_names = sorted({spans[i].label if spans[i].label is not None else UNLABELLED for i in live})
    if "labels" in settings.modes and len(label_names) > MAX_LABELS:
        raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(layers)} have {len(label_names)}")
    lab_index = {name: i for i, name in enumerate(label_names)}
    names["labels"] = label_names
    frag = {
        "span": np.array(live, dtype=np.int64),
        "label": np.array([lab_index[spans[i].label if spans[i].label is not None else UNLABELLED] for i in live], dtype=np.int64),
        "group": np.array([g_index[spans[i].group] for i in live], dtype=np.int64),
        "layer": np.array([l_index[spans[i].layer] for i in live], dtype=np.int64),
        "annotator": np.array([a_index[spans[i].annotator] for i in live], dtype=np.int64),
        "doc": np.array([d_index[spans[i].doc_id] for i in live], dtype=np.int64),
        "element": np.array([element_of[i] for i in live], dtype=np.int64),
        "begin": np.array([spans[i].begin for i in live], dtype=np.int64),
        "end": np.array([spans[i].end for i in live], dtype=np.int64),
    }
    segs = fragments_to_segments(
        frag["element"],
        frag["begin"],
        frag["end"],
        settings.discontinuous,
        element_size=np.array([fragments_of[element_of[i]] for i in live], dtype=np.int64),
    )

    dropped = np.flatnonzero(segs.fragment_segment < 0)
    if dropped.size:
        base_excluded["discontinuous-dropped"] += int(dropped.size)
        reported: set[int] = set()
        for f in dropped.tolist():
            element = int(frag["element"][f])
            if element in reported:
                continue
            reported.add(element)
            span = spans[frag["span"][f]]
            findings.append(
                span_finding(
                    "discontinuous-dropped",
                    span,
                    f"{span.layer} has {fragments_of[element]} fragments",
                    "element left out (discontinuous = \"drop\"); use \"extend\" or \"keep\" to include it",
                )
            )

    results: dict[str, UnitResult] = {}
    for unit in settings.units:
        results[unit] = _unitize_one(unit, spaces[unit], corpus, frag, segs, names)
        findings.extend(results[unit].findings)
    findings.sort(key=sort_key)

    accounting = {
        "files": {
            "read": len(corpus.submissions),
            "unreadable": sum(1 for f in corpus.findings if f.code == "file-unreadable"),
            "not_matching_pattern": sum(1 for f in corpus.findings if f.code == "filename-pattern"),
            "duplicates_skipped": sum(1 for f in corpus.findings if f.code == "duplicate-file"),
            "skipped_by_selection": corpus.skipped_by_selection,
        },
        "records": {
            "read": len(corpus.spans),
            "in_selected_layers": len(selected),
            "in_other_layers": len(corpus.spans) - len(selected),
        },
        "by_unit": {},
    }
    for unit, res in results.items():
        excluded = base_excluded + res.excluded
        if not_selected_annotator:
            excluded["annotator-not-selected"] = not_selected_annotator
        accounting["by_unit"][unit] = {
            "records": len(selected),
            "in_segments": res.in_segments,
            "excluded": dict(sorted(excluded.items())),
            "segments": res.segments.num_rows,
        }
    return Unitized(
        settings=settings,
        corpus=corpus,
        validation=validation,
        groups=groups,
        layers=layers,
        annotators=annotators,
        spaces=spaces,
        results=results,
        findings=findings,
        accounting=accounting,
        layout=layout,
        labels=label_names,
        present=_present(corpus, validation, a_index),
    )


def _present(corpus: Corpus, validation: Validation, a_index: dict[str, int]) -> dict[str, dict[str, list[int]]]:
    """Per group and document of the unit universe: the annotators with a submission, as sorted indices."""
    out: dict[str, dict[str, set[int]]] = {}
    for sub in corpus.submissions:
        if sub.annotator in a_index and sub.doc_id in validation.universe.get(sub.group, {}):
            out.setdefault(sub.group, {}).setdefault(sub.doc_id, set()).add(a_index[sub.annotator])
    return {g: {d: sorted(a) for d, a in docs.items()} for g, docs in out.items()}


def _format_defaults(settings: Settings, corpus: Corpus) -> Settings:
    """Settings with the format's own defaults where the user kept the built-in ones.

    A format's adapter may declare ``default_layers = "found"`` (every layer — or label,
    with ``layers_from = "label"`` — that occurs) and a ``tokenizer`` (``"given"`` for
    formats that carry their tokens); they replace the built-in defaults ``Arg1, Arg2``
    and ``spacy:xx`` only when those were left unchanged.
    """
    defaults = get_adapter(corpus.format).defaults
    builtin = Settings.__dataclass_fields__
    changes: dict[str, Any] = {}
    if settings.layers == builtin["layers"].default and defaults.get("default_layers") == "found":
        found = sorted({s.layer for s in corpus.spans}) or list(defaults.get("layers", ()))
        if found:
            changes["layers"] = tuple(found)
    if settings.tokenizer == builtin["tokenizer"].default and "tokenizer" in defaults:
        changes["tokenizer"] = defaults["tokenizer"]
    return replace(settings, **changes) if changes else settings


# --- writing -------------------------------------------------------------------


def _is_items(corpus: Corpus) -> bool:
    return bool(corpus.items) or get_adapter(corpus.format).defaults.get("kind") == "items"


def setting_name(unit: str, approach: str, mode: str) -> str:
    return f"{unit}-{approach}" + ("" if mode == "separate" else f"-{mode}")


def documents_table(unitized: Unitized) -> pa.Table:
    corpus = unitized.corpus
    doc_ids = sorted(corpus.documents)
    word = unitized.spaces.get("word")
    tokens = dict(zip(word.doc_ids, word.n_units.tolist())) if word else {}
    rows = [corpus.documents[d] for d in doc_ids]
    return pa.Table.from_pydict(
        {
            "doc_id": doc_ids,
            "source": [d.source for d in rows],
            "bytes": [d.size for d in rows],
            "sha256": [d.sha256 for d in rows],
            "encoding": [d.encoding for d in rows],
            "newline": [d.newline for d in rows],
            "bom": [d.bom for d in rows],
            "chars": [len(d.text) if d.text is not None else None for d in rows],
            "tokens": [tokens.get(d.doc_id) for d in rows],
            "tokenizer": [unitized.settings.tokenizer if word and d.text is not None else None for d in rows],
        },
        schema=documents_schema(),
    )


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "pyarrow", "lxml", "spacy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def summary(unitized: Unitized) -> dict[str, Any]:
    """Counts a person (or a script) wants after a run."""
    if getattr(unitized, "kind", None) == "items":
        return unitized.summary()
    by_code = Counter(f.code for f in unitized.findings)
    universe = unitized.validation.universe
    return {
        "documents": len(unitized.corpus.documents),
        "groups": len(unitized.groups),
        "groups_with_documents": sum(1 for g in unitized.groups if universe.get(g)),
        "annotators": unitized.annotators,
        "layers": list(unitized.settings.layers),
        "document_group_pairs": sum(len(v) for v in universe.values()),
        "findings": count_by_severity(unitized.findings),
        "findings_by_code": dict(sorted(by_code.items())),
        "segments": {u: r.segments.num_rows for u, r in unitized.results.items()},
    }


def write_output(
    unitized: Unitized,
    out: Path,
    *,
    progress: Progress | None = None,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest."""
    if getattr(unitized, "kind", None) == "items":
        from .item_pipeline import write_items_output

        return write_items_output(unitized, out, run_info=run_info)
    progress = progress or no_progress
    started = time.time()
    target = OutputDir(out)
    try:
        settings = unitized.settings
        jobs = [(u, a, m) for (u, a) in settings.pairs for m in settings.modes]
        unit_rows: dict[str, int] = {}

        def write_units(job: tuple[str, str, str]) -> tuple[str, int]:
            unit, approach, mode = job
            name = setting_name(unit, approach, mode)
            relative = f"units/{name}/part-0.parquet"
            stream = ParquetStream(target.file(relative), unitized.matrix_schema(unit, approach, mode))
            for table in unitized.matrices(unit, approach, mode):
                stream.write(table)
            stream.close()
            return relative, stream.rows

        if threads > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                done = list(progress(Sized(pool.map(write_units, jobs), len(jobs)), "writing unit matrices"))
        else:
            done = [write_units(j) for j in progress(jobs, "writing unit matrices")]
        for relative, rows in done:
            target.record(relative, rows)
            unit_rows[relative.split("/")[1]] = rows

        for unit, res in unitized.results.items():
            target.write_table(f"segments/{unit}.parquet", res.segments)
        target.write_table("documents.parquet", documents_table(unitized))
        target.write_jsonl("report.jsonl", (f.as_dict() for f in unitized.findings))

        manifest = finish(target, unitized, unit_rows, started, run_info)
    except BaseException:
        target.abort()
        raise
    return manifest


def finish(target: OutputDir, unitized: Any, unit_rows: dict[str, int], started: float, run_info: dict[str, Any] | None) -> dict[str, Any]:
    """Write the manifest of a run (unit or item matrices) last and commit the output directory."""
    manifest = {
        "format_version": FORMAT_VERSION,
        "tool": {"name": "unitize", "version": __version__},
        "libraries": _versions(),
        "settings": unitized.settings.resolved(),
        "inputs": input_rows(unitized.corpus),
        "outputs": target.outputs,
        "accounting": unitized.accounting,
        "summary": {**summary(unitized), "unit_rows": dict(sorted(unit_rows.items()))},
        "run": run_section(started, seconds_writing=round(time.time() - started, 3), **(run_info or {})),
    }
    target.write_json("manifest.json", manifest)
    target.commit()
    return manifest


def input_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The manifest's ``inputs``: every file read, by role and path."""
    return [
        {"path": i.path, "role": i.role, "bytes": i.size, "sha256": i.sha256}
        for i in sorted(corpus.inputs, key=lambda i: (i.role, i.path))
    ]


def run_section(started: float, **more: Any) -> dict[str, Any]:
    """The manifest's ``run`` section: when and where (the only host- or time-dependent part)."""
    return {
        "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        **more,
    }


def convert(settings: Settings, *, strict: bool = False, progress: Progress | None = None) -> tuple[Unitized, dict | None]:
    """Read, unitize and write. Under ``strict``, error findings stop the run before any output.

    Returns the unitized corpus and the manifest (``None`` when nothing was written).
    """
    started = time.time()
    corpus = read_corpus(settings, progress)
    unitized = unitize(corpus, settings, progress)
    if strict and unitized.errors:
        return unitized, None
    if settings.out is None:
        raise RunError("no output directory: set [output] dir or --out")
    manifest = write_output(
        unitized,
        settings.out,
        progress=progress,
        run_info={"seconds_total": None, "argv": sys.argv[1:]},
    )
    manifest["run"]["seconds_total"] = round(time.time() - started, 3)
    # the run section only: data files and their hashes are untouched
    atomic_write_text(settings.out / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return unitized, manifest


__all__ = [
    "CODES",
    "RunError",
    "Unitized",
    "convert",
    "read_corpus",
    "setting_name",
    "summary",
    "unitize",
    "write_output",
]
