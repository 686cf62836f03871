"""Mode "labels": label bit codes against a per-unit set of labels (property test)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from unitize.units.unitizers import label_codes, label_dictionary

NAMES = ["A", "B", "C", "D"]


def _runs(units: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for u in units:
        if runs and u == runs[-1][1] + 1:
            runs[-1][1] = u
        else:
            runs.append([u, u])
    return runs


@given(st.lists(st.tuples(st.integers(0, 19), st.integers(0, 5), st.integers(0, 3)), max_size=12))
def test_label_codes_match_a_per_unit_set_of_labels(segs: list[tuple[int, int, int]]) -> None:
    n = 25
    spans = [(b, b + w, x) for b, w, x in segs]
    # segments are disjoint within each label (merged first), as the pipeline gives them
    r0, r1, lab = [], [], []
    for x in range(len(NAMES)):
        for a, b in _runs(sorted({u for s, e, y in spans if y == x for u in range(s, e + 1)})):
            r0.append(a), r1.append(b), lab.append(x)
    codes = label_codes(n, np.array(r0, dtype=np.int64), np.array(r1, dtype=np.int64), np.array(lab, dtype=np.int64), "interval")
    indices, values = label_dictionary(codes, NAMES, "O")
    expected = ["+".join(sorted({NAMES[x] for s, e, x in spans if s <= u <= e})) or "O" for u in range(n)]
    assert [values[i] for i in indices] == expected


def test_boundary_labels_mark_first_and_last_units() -> None:
    codes = label_codes(6, np.array([0, 2]), np.array([3, 2]), np.array([0, 1]), "boundary")
    indices, values = label_dictionary(codes, ["LOC", "PER"], "O")
    assert [values[i] for i in indices] == ["LOC", "O", "PER", "LOC", "O", "O"]
