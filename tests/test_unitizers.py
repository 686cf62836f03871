"""Property tests of the pure unitizers against naive per-unit definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.units.unitizers import (
    char_units,
    fragments_to_segments,
    mark,
    merge_overlaps,
    word_units,
)

segments = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 10)), min_size=0, max_size=25
)


@given(segments)
def test_merge_gives_disjoint_segments_covering_the_same_units(items):
    key = np.array([k for k, _, _ in items], dtype=np.int64)
    u0 = np.array([s for _, s, _ in items], dtype=np.int64)
    u1 = u0 + np.array([n for _, _, n in items], dtype=np.int64)
    merged = merge_overlaps(key, u0, u1)
    for k in set(key.tolist()):
        covered = {u for kk, a, b in zip(key, u0, u1) if kk == k for u in range(a, b + 1)}
        mine = [(a, b) for kk, a, b in zip(merged.key, merged.u0, merged.u1) if kk == k]
        assert {u for a, b in mine for u in range(a, b + 1)} == covered
        mine.sort()
        # disjoint; abutting allowed only when no input segment spans the joint
        for (a0, b0), (a1, b1) in zip(mine, mine[1:]):
            assert a1 > b0
            assert not any(kk == k and s <= b0 and e >= a1 for kk, s, e in zip(key, u0, u1))
    # every input segment lies inside its cluster
    for i in range(key.size):
        c = merged.cluster[i]
        assert merged.key[c] == key[i] and merged.u0[c] <= u0[i] and u1[i] <= merged.u1[c]
    assert merged.size.sum() == key.size


@given(st.integers(1, 60), st.data())
def test_mark_matches_naive_definition(n, data):
    # disjoint segments, as the merge produces them
    cuts = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n)))
    pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    r0 = np.array([a for a, _ in pairs], dtype=np.int64)
    r1 = np.array([b for _, b in pairs], dtype=np.int64)
    interval = [1 if any(a <= u <= b for a, b in pairs) else 0 for u in range(n)]
    boundary = [1 if any(u in (a, b) for a, b in pairs) else 0 for u in range(n)]
    assert mark(n, r0, r1, "interval").tolist() == interval
    assert mark(n, r0, r1, "boundary").tolist() == boundary


@settings(max_examples=200)
@given(st.text(alphabet="ab \n", max_size=30), st.data())
def test_word_units_are_the_tokens_intersecting_the_selection(text, data):
    import re

    tokens = [m.span() for m in re.finditer(r"\S+", text)]
    starts = np.array([s for s, _ in tokens], dtype=np.int64)
    ends = np.array([e for _, e in tokens], dtype=np.int64)
    b = data.draw(st.integers(0, len(text)))
    e = data.draw(st.integers(b, len(text)))
    u0, u1, empty, snapped = word_units(np.array([b]), np.array([e]), np.array([0]), starts, ends)
    hit = [i for i, (s, t) in enumerate(tokens) if s < e and t > b and e > b]  # zero length covers nothing
    assert bool(empty[0]) == (not hit)
    if hit:
        assert (u0[0], u1[0]) == (hit[0], hit[-1])
        assert bool(snapped[0]) == (tokens[hit[0]][0] < b or tokens[hit[-1]][1] > e)


def test_char_units_are_offsets_shifted_by_the_document_base():
    u0, u1, empty = char_units(np.array([0, 3, 5]), np.array([2, 3, 9]), np.array([100, 100, 0]))
    assert u0.tolist() == [100, 103, 5] and u1.tolist() == [101, 102, 8] and empty.tolist() == [False, True, False]


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(0, 5)), max_size=20))
def test_fragments_to_segments_modes(frags):
    element = np.array([el for el, _, _ in frags], dtype=np.int64)
    begin = np.array([b for _, b, _ in frags], dtype=np.int64)
    end = begin + np.array([n for _, _, n in frags], dtype=np.int64)
    keep = fragments_to_segments(element, begin, end, "keep")
    assert keep.begin.tolist() == begin.tolist() and keep.fragment_segment.tolist() == list(range(len(frags)))
    ext = fragments_to_segments(element, begin, end, "extend")
    drop = fragments_to_segments(element, begin, end, "drop")
    for el in set(element.tolist()):
        idx = np.flatnonzero(element == el)
        s = ext.fragment_segment[idx[0]]
        assert (ext.fragment_segment[idx] == s).all()
        assert (ext.begin[s], ext.end[s]) == (begin[idx].min(), end[idx].max())
        assert bool(ext.extended[s]) == (idx.size > 1)
        if idx.size > 1:
            assert (drop.fragment_segment[idx] == -1).all()
        else:
            d = drop.fragment_segment[idx[0]]
            assert (drop.begin[d], drop.end[d]) == (begin[idx[0]], end[idx[0]])


def test_drop_uses_the_element_size_from_the_source():
    # element 7 had two fragments in its file, but one was left out upstream (bad offsets)
    segs = fragments_to_segments(np.array([7, 8]), np.array([0, 5]), np.array([2, 9]), "drop", element_size=np.array([2, 1]))
    assert segs.fragment_segment.tolist() == [-1, 0]
    assert (segs.begin.tolist(), segs.end.tolist()) == ([5], [9])


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), max_size=12), st.lists(st.integers(-(2**40), 2**40), max_size=6),
       st.lists(st.integers(-5, 80), max_size=6))
def test_word_units_on_32_bit_token_extents_are_those_on_64_bit_ones(gaps, far, near):
    """A corpus under 2³¹ characters keeps its token extents in 32 bits (``spaces.build_spaces``): looking positions up
    in them, far outside their range too, gives the places the 64-bit extents give."""
    starts, ends, at = [], [], 0
    for gap, size in gaps:
        starts.append(at + gap)
        ends.append(at + gap + size)
        at += gap + size
    s64, e64 = np.array(starts, np.int64), np.array(ends, np.int64)
    b = np.array([*far, *near], np.int64)
    e = b + 3
    base = np.zeros(b.size, np.int64)
    wide = word_units(b, e, base, s64, e64)
    narrow = word_units(b, e, base, s64.astype(np.int32), e64.astype(np.int32))
    assert all(np.array_equal(x, y) for x, y in zip(wide, narrow))
