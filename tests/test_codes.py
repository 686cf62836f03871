"""Arrow string columns as integer codes (unitize.model.codes): sorted_codes gives the same names and codes by its
small-dictionary path (Python) and its Arrow path, for plain and dictionary chunks whose dictionaries differ or
hold unused values; positions looks each row up in a given mapping and names the values it lacks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.model import codes
from unitize.model.codes import positions, sorted_codes, value_codes

WORDS = st.sampled_from(["ama", "ve", "ki", "için", "Ama", "", "ğ", "a b"])


def _chunk(values: list[str], encode: bool, unused: list[str]) -> pa.Array:
    plain = pa.array(values, pa.string())
    if not encode:
        return plain
    dictionary = pa.array(sorted(set(values) | set(unused), reverse=True), pa.string())  # unsorted, with unused values
    index = {v: i for i, v in enumerate(dictionary.to_pylist())}
    return pa.DictionaryArray.from_arrays(pa.array([index[v] for v in values], pa.int32()), dictionary)


CHUNKS = st.lists(st.tuples(st.lists(WORDS, max_size=12), st.booleans(), st.lists(WORDS, max_size=3)), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(CHUNKS)
def test_sorted_codes_are_the_rows_sorted_names_by_either_path(chunks: list[tuple[list[str], bool, list[str]]]) -> None:
    column = pa.chunked_array([_chunk(v, e, u) for v, e, u in chunks], pa.dictionary(pa.int32(), pa.string())) \
        if all(e for _, e, _ in chunks) else pa.chunked_array([pa.array(v, pa.string()) for v, _, _ in chunks], pa.string())
    rows = [x for v, _, _ in chunks for x in v]
    names, found = sorted_codes(column)
    assert names == sorted(set(rows))
    assert [names[i] for i in found.tolist()] == rows
    small = codes.SMALL
    try:
        codes.SMALL = -1  # the Arrow path
        arrow_names, arrow_codes = sorted_codes(column)
    finally:
        codes.SMALL = small
    assert arrow_names == names and np.array_equal(arrow_codes, found)


def test_positions_look_rows_up_and_name_what_is_lacking() -> None:
    column = pa.chunked_array([_chunk(["b", "a", "b"], True, ["zz"]), _chunk(["c", "a"], True, [])])
    found, lacking = positions(column, {"a": 0, "b": 1})
    assert found.tolist() == [1, 0, 1, -1, 0]
    assert lacking == ["c"]  # "zz" is in a dictionary but on no row
    found, lacking = positions(pa.array(["x", "y"]), {"y": 5, "x": 7})
    assert found.tolist() == [7, 5] and lacking == []
    empty, lacking = positions(pa.chunked_array([], pa.string()), {})
    assert empty.size == 0 and lacking == []


def test_value_codes_name_every_row_through_one_dictionary():
    """Unsorted codes: chunks with dictionaries of their own (or none) unified, a null row coded past the names."""
    column = pa.chunked_array([pa.array(["b", "a", None]).dictionary_encode(), pa.array(["c", "b"]).dictionary_encode()])
    names, codes = value_codes(column)
    assert [names[c] if c < len(names) else None for c in codes.tolist()] == ["b", "a", None, "c", "b"]
    assert codes.dtype == "int64" and codes.tolist()[2] == len(names)
    names, codes = value_codes(pa.array(["x", "y", "x"]))
    assert [names[c] for c in codes.tolist()] == ["x", "y", "x"]
