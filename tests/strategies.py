"""Hypothesis strategies shared by the segment-metric tests."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def unitizations(draw, max_docs=1, values="abc"):
    """Per annotator, disjoint (begin, end, value) segments on [0, length), none across a document cut."""
    length = draw(st.integers(min_value=1, max_value=30))
    m = draw(st.integers(min_value=2, max_value=4))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(length - 1, 1)), max_size=max_docs - 1)))) if length > 1 else []
    starts = [0, *[c for c in cuts if 0 < c < length]]
    bounds = list(zip(starts, starts[1:] + [length]))
    units = []
    for _ in range(m):
        mine = []
        for s, e in bounds:
            points = sorted(set(draw(st.lists(st.integers(s, e), max_size=6))))
            for x in range(0, len(points) - 1, 2):
                mine.append((points[x], points[x + 1], draw(st.sampled_from(values))))
        units.append(mine)
    return units, length, starts
