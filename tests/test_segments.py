"""The vectorized segment builder (unitize.units.segments) against a naive reference, fragment by fragment.

Random spans (discontinuous elements, zero-length and whitespace-only selections, labels
that are missing, empty, ``*`` or shared, records and sources holding ``#``) are unitized;
every row of ``segments/<unit>`` is compared with what a per-unit Python definition of
DESIGN.md §4 steps 1–3 gives: fragments → segments (extend / keep / drop), units (chars,
whitespace tokens with snapping), overlaps merged per annotator and layer, and per merged
segment its records (first fragment order) and its labels (sorted, joined with '+').
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.config import Settings
from unitize.errors import RunError
from unitize.model import Corpus, Document, Span, SpanStream, Submission
from unitize.spans.run import unitize_spans

TEXT = "aa bb  cc dd\nee ff gg hh"
TOKENS = [m.span() for m in re.finditer(r"\S+", TEXT)]
LAYERS = ("L1", "L2")

fragment = st.tuples(st.integers(0, len(TEXT)), st.integers(0, 6))
element = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from(LAYERS),
    st.sampled_from(["r1", "r2", "r#3", "2#r1"]),
    st.sampled_from(["f1", "f#2", "f"]),  # f#2 + r1 and f + 2#r1 print alike
    st.sampled_from([None, "x", "y", "*", ""]),
    st.lists(fragment, min_size=1, max_size=3),
)


def corpus_of(elements) -> Corpus:
    spans = []
    seen = set()
    for annotator, layer, record, source, label, frags in elements:
        key = (source, record, layer)
        if key in seen:  # one element per (source, record, layer), as a reader gives them
            continue
        seen.add(key)
        for i, (b, n) in enumerate(frags):
            e = min(b + n, len(TEXT))
            spans.append(Span(annotator, "d1", "all", record, layer, i, b, e, label=label, source=source, line=1))
    return Corpus(
        format="brat",
        documents={"d1": Document("d1", TEXT)},
        spans=spans,
        submissions=[Submission("f", a, "d1", "all", 1) for a in ("a", "b")],
    )


def units_of(unit: str, b: int, e: int) -> list[int]:
    if unit == "char":
        return list(range(b, e))
    return [i for i, (s, t) in enumerate(TOKENS) if s < e and t > b and e > b]


def reference(corpus: Corpus, unit: str, discontinuous: str) -> list[tuple]:
    """Rows (layer, annotator, unit_begin, unit_end, extended, snapped, merged, records, label), naively."""
    elements: dict[tuple, list[Span]] = {}
    for s in corpus.spans:
        elements.setdefault((s.source, s.record, s.layer), []).append(s)
    segments = []  # (layer, annotator, units, extended, snapped, member spans)
    for frags in elements.values():
        if discontinuous == "keep" or len(frags) == 1:
            pieces = [([f], f.begin, f.end, False) for f in frags]
        elif discontinuous == "extend":
            pieces = [(frags, min(f.begin for f in frags), max(f.end for f in frags), True)]
        else:
            pieces = []
        for members, b, e, extended in pieces:
            covered = units_of(unit, b, e)
            if not covered:
                continue
            snapped = unit == "word" and (TOKENS[covered[0]][0] < b or TOKENS[covered[-1]][1] > e)
            segments.append((members[0].layer, members[0].annotator, set(covered), extended, snapped, members))
    rows = []
    for layer in LAYERS:
        for annotator in ("a", "b"):
            mine = [s for s in segments if s[0] == layer and s[1] == annotator]
            clusters: list[list] = []
            for seg in sorted(mine, key=lambda s: (min(s[2]), max(s[2]))):
                if clusters and min(seg[2]) <= max(u for c in clusters[-1] for u in c[2]):
                    clusters[-1].append(seg)
                else:
                    clusters.append([seg])
            for c in clusters:
                members = sorted((m for s in c for m in s[5]), key=corpus.spans.index)
                records = list(dict.fromkeys(f"{m.source}#{m.record}" for m in members))
                labels = sorted({m.label for m in members if m.label is not None})
                covered = set().union(*(s[2] for s in c))
                rows.append(
                    (layer, annotator, min(covered), max(covered) + 1, any(s[3] for s in c), any(s[4] for s in c),
                     len(c), records, "+".join(labels) if labels else None)
                )
    return sorted(rows, key=lambda r: (r[0], r[1], r[2]))


@settings(max_examples=150, deadline=None)
@given(st.lists(element, max_size=12), st.sampled_from(["extend", "keep", "drop"]))
def test_segments_equal_the_naive_reference(elements, discontinuous):
    corpus = corpus_of(elements)
    layers = tuple(sorted({s.layer for s in corpus.spans})) or LAYERS  # a layer asked for must occur
    settings_ = Settings(format="brat", pairs=(("char", "interval"), ("word", "interval")), layers=layers,
                         tokenizer="whitespace", discontinuous=discontinuous, layout="wide")
    result = unitize_spans(corpus, settings_)
    for unit in ("char", "word"):
        t = result.results[unit].segments.to_pydict()
        got = sorted(
            zip(t["layer"], t["annotator"], t["unit_begin"], t["unit_end"], t["extended"], t["snapped"],
                t["merged"], t["records"], t["label"]),
            key=lambda r: (r[0], r[1], r[2]),
        )
        assert got == reference(corpus, unit, discontinuous)


def test_a_streamed_run_makes_label_marks_only_for_a_labels_mode_and_keeps_positions_in_32_bits():
    """A corpus read as a stream (a conversion's) makes the labels matrices' marks only when a setting has the labels
    mode (a crowd run would carry them through every batch for nothing); one read whole makes them always (its
    result may be asked for any matrix). Asking a streamed run without them for a labels matrix is refused clearly.
    The marks' unit positions are 32-bit integers."""
    corpus = corpus_of([("a", "L1", "r1", "f", "x", [(0, 5)]), ("b", "L1", "r2", "f", "y", [(3, 9)]),
                        ("a", "L2", "r3", "f", None, [(14, 4)])])

    def streamed() -> Corpus:
        batch = Corpus(format="brat", spans=corpus.spans, submissions=corpus.submissions)
        return Corpus(format="brat", documents=corpus.documents, stream=SpanStream(["a", "b"], [lambda: batch]))

    def run(source: Corpus, modes: tuple[str, ...]):
        return unitize_spans(source, Settings(format="brat", pairs=(("char", "interval"),), layers=LAYERS, modes=modes,
                                              tokenizer="whitespace", layout="wide"))

    plain, labelled, whole = run(streamed(), ("separate",)), run(streamed(), ("separate", "labels")), run(corpus, ("separate",))
    marks = {name: r.results["char"].marks for name, r in (("plain", plain), ("labelled", labelled), ("whole", whole))}
    assert marks["plain"].label_key.size == marks["plain"].label_u0.size == 0 and not marks["plain"].labelled
    for name in ("labelled", "whole"):
        m = marks[name]
        assert m.labelled and m.label_key.tolist() == [1, 5, 6]
        assert m.label_u0.tolist() == [0, 3, 14] and m.label_u1.tolist() == [4, 11, 17]
    assert marks["plain"].u0.dtype == marks["plain"].u1.dtype == marks["whole"].label_u0.dtype == np.int32
    assert marks["plain"].key.tolist() == marks["whole"].key.tolist() and marks["plain"].u1.tolist() == [4, 11, 17]
    assert next(whole.matrices("char", "interval", "labels")).equals(next(labelled.matrices("char", "interval", "labels")))
    with pytest.raises(RunError, match="made no labels matrices"):
        next(plain.matrices("char", "interval", "labels"))


def test_units_per_group_count_each_documents_units_once_and_none_for_a_document_without_a_space():
    """What the layout is chosen and a too-wide matrix refused from: per (unit type, group), the units of its
    documents (a document of the universe the unit spaces do not hold counts none)."""
    from unitize.spans.join import dense_rows, group_units
    from unitize.units.spaces import build_spaces
    from unitize.validate import Validation

    documents = {"d1": Document("d1", "aa bb cc"), "d2": Document("d2", "dd ee"), "d3": Document("d3", "f")}
    spaces = build_spaces(Corpus(format="brat", documents=documents), ["char", "word"], "whitespace")
    universe = {"g1": {"d1": frozenset(), "d3": frozenset()}, "g2": {"d2": frozenset(), "gone": frozenset()}, "g3": {}}
    ids = pa.array(spaces["char"].doc_ids, pa.string())
    units = group_units(spaces, Validation(findings=[], universe=universe, annotators={}), ids)
    assert units == {("char", "g1"): 9, ("char", "g2"): 5, ("char", "g3"): 0,
                     ("word", "g1"): 4, ("word", "g2"): 2, ("word", "g3"): 0}
    layered = Settings(format="brat", layers=("L1", "L2"), modes=("separate",))
    assert dense_rows(units, layered) == 28 and dense_rows(units, Settings(format="brat", modes=("combined",))) == 14
