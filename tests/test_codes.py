"""Arrow string columns as integer codes (unitize.model.codes): sorted_codes gives the same names and codes by its
small-dictionary path (Python) and its Arrow path, for plain and dictionary chunks whose dictionaries differ or
hold unused values; positions looks each row up in a given mapping and names the values it lacks; text_codes codes
a column by its values as text."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.model import codes
from unitize.model.codes import places, positions, sorted_codes, sorted_positions, value_codes

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


def _texts(codes, names):
    return [names[c] if c >= 0 else None for c in codes.tolist()]


@pytest.mark.parametrize("column, missing, expected", [
    (pa.chunked_array([pa.array([0, 1, None, 1], pa.uint8()), pa.array([3, 0], pa.uint8())]), None, ["0", "1", None, "1", "3", "0"]),
    (pa.chunked_array([pa.array([0, 1, 2], pa.uint8())]), "2", ["0", "1", None]),  # the value that did not apply: missing
    (pa.chunked_array([pa.array([70_000, 1], pa.int64())]), None, ["70000", "1"]),  # too large to count: as text
    (pa.chunked_array([pa.array([None, None], pa.uint8())]), None, [None, None]),
    (pa.chunked_array([], pa.uint8()), None, []),
    (pa.chunked_array([pa.array(["B", None, "O"]), pa.array(["n/a", "B"])]), "n/a", ["B", None, "O", None, "B"]),
    (pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array([1, 0, None], pa.int32()), pa.array(["O", "B-X"])),
                       pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), pa.array(["I-X"]))]), None, ["B-X", "O", None, "I-X"]),
])
def test_text_codes_give_each_row_its_value_as_text(column, missing, expected):
    """What casting the column to text and coding it gave (a wide table's 0/1 marks are counted, not cast per row)."""
    from unitize.model.codes import text_codes

    codes, names = text_codes(column, missing)
    assert codes.dtype == np.int64 and len(set(names)) == len(names)
    assert _texts(codes, names) == expected
    assert missing not in names
    as_text = pc.cast(column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column, pa.string())
    assert sorted(names) == sorted(v for v in pc.unique(as_text).to_pylist() if v is not None and v != missing)


def test_places_finds_a_few_names_among_many() -> None:
    """places: per wanted string its index among names (any order), -1 when absent or null; the wanted plain, large,
    chunked or dictionary-encoded; repeated ones each found."""
    names = pa.array(["t10", "t2", "ü", "", "a b"])
    wanted = ["ü", "t2", "nope", "", "t2", None, "a b"]
    expected = [2, 1, -1, 3, 1, -1, 4]
    assert places(names, pa.array(wanted)).tolist() == expected
    assert places(names, pa.array(wanted, pa.large_string())).tolist() == expected
    assert places(names, pa.chunked_array([wanted[:3], wanted[3:]])).tolist() == expected
    assert places(names, pa.array(wanted).dictionary_encode()).tolist() == expected
    assert places(names, pa.array([], pa.string())).tolist() == [] and places(pa.array([], pa.string()), pa.array(["x"])).tolist() == [-1]


@given(st.lists(WORDS, unique=True), st.lists(WORDS))
@settings(max_examples=60, deadline=None)
def test_places_is_a_dict_lookup(names: list[str], wanted: list[str]) -> None:
    index = {n: i for i, n in enumerate(names)}
    assert places(pa.array(names, pa.string()), pa.array(wanted, pa.string())).tolist() == [index.get(w, -1) for w in wanted]


def test_sorted_positions_find_each_name_by_bisection():
    names = ["a", "b", "d10", "d2", "é"]
    assert sorted_positions(names, ["d2", "x", "a", "é", None, 3, "d1"]).tolist() == [3, -1, 0, 4, -1, -1, -1]
    assert sorted_positions(names, []).tolist() == [] and sorted_positions([], ["a"]).tolist() == [-1]
