"""Arrow string columns as integer codes, and back: what the writers and the readers of unit tables share."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

#: at most this many dictionary values in all: :func:`sorted_codes` sorts them in Python (an Arrow kernel call costs more)
SMALL = 4096


def sorted_codes(column: pa.ChunkedArray | pa.Array) -> tuple[list[str], np.ndarray]:
    """Distinct strings, sorted, and per row the index into them (dictionary columns stay encoded).

    Vectorised: the chunks' dictionaries are pooled and sorted once by Arrow (UTF-8 bytes sort as
    code points, as Python sorts ``str``), and each chunk's indices are remapped with one NumPy
    ``take`` through its dictionary's place in the sorted values — no Python lookup per
    dictionary value. Rows must not be null."""
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    chunks = [c if pa.types.is_dictionary(c.type) else pc.dictionary_encode(c)
              for c in (column.chunks if isinstance(column, pa.ChunkedArray) else [column])]
    dictionaries = [c.dictionary for c in chunks]
    if not dictionaries:
        return [], np.zeros(0, dtype=np.int64)
    if sum(len(d) for d in dictionaries) <= SMALL:
        return _small(chunks)
    first = dictionaries[0]
    if all(d.equals(first) for d in dictionaries[1:]):
        pool = first
    else:
        pool = pa.concat_arrays([d if d.type == first.type else d.cast(first.type) for d in dictionaries])
    pool = pc.unique(pool)
    values = pool.take(pc.array_sort_indices(pool))
    parts = []
    luts: list[tuple[pa.Array, np.ndarray | None]] = []  # per distinct dictionary: its values' codes (None: they are the codes)
    for c in chunks:
        lut = _codes_of(c.dictionary, values, luts)
        indices = c.indices.to_numpy(zero_copy_only=False)
        parts.append(indices if lut is None else lut[indices])
    return _used(values.to_pylist(), parts[0] if len(parts) == 1 else np.concatenate(parts))


def value_codes(column: pa.ChunkedArray | pa.Array) -> tuple[list[str], np.ndarray]:
    """A column's distinct values, in no particular order (some may be unused), and per row the index of its value
    among them (int64; a null row: the number of values). One dictionary for every chunk and no sort: for a caller
    that looks names up (:func:`sorted_codes` when their order matters)."""
    import pyarrow.compute as pc

    whole = column if isinstance(column, pa.Array) else column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not pa.types.is_dictionary(whole.type):
        whole = pc.dictionary_encode(whole)
    names = whole.dictionary.to_pylist()
    codes = whole.indices.fill_null(len(names)) if whole.indices.null_count else whole.indices
    return names, codes.to_numpy(zero_copy_only=False).astype(np.int64)


def positions(column: pa.ChunkedArray | pa.Array, place: Mapping[str, int]) -> tuple[np.ndarray, list[str]]:
    """Per row, ``place`` of its string (−1 for a value ``place`` lacks), and the values it lacks that rows use
    (dictionary columns stay encoded: each dictionary is looked up once, not each row)."""
    import pyarrow.compute as pc

    chunks = [c if pa.types.is_dictionary(c.type) else pc.dictionary_encode(c)
              for c in (column.chunks if isinstance(column, pa.ChunkedArray) else [column])]
    parts, lacking = [], []
    for c in chunks:
        if not len(c):
            continue
        values = c.dictionary.to_pylist()
        lut = np.array([place.get(v, -1) for v in values], dtype=np.int64)
        indices = c.indices.to_numpy(zero_copy_only=False)
        if (lut < 0).any():  # a dictionary may hold values no row uses: only the used ones are lacking
            used = np.bincount(indices, minlength=len(values)) > 0
            lacking += [values[i] for i in np.flatnonzero((lut < 0) & used).tolist()]
        parts.append(lut[indices])
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return codes, sorted(set(lacking))


def _small(chunks: list[pa.DictionaryArray]) -> tuple[list[str], np.ndarray]:
    """:func:`sorted_codes` of dictionary chunks with few values in all: their values sorted as Python
    strings, each chunk's indices remapped through its dictionary's places among them."""
    names = sorted(set().union(*(c.dictionary.to_pylist() for c in chunks)))
    codes, _ = positions(pa.chunked_array(chunks, chunks[0].type), {v: i for i, v in enumerate(names)})
    return _used(names, codes)


def _used(names: list[str], codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The names some row uses (a dictionary may hold values no row uses), and the rows' codes among them."""
    used = np.flatnonzero(np.bincount(codes, minlength=len(names)))
    if used.size == len(names):
        return names, codes
    lut = np.zeros(len(names), dtype=np.int64)
    lut[used] = np.arange(used.size)
    return [names[i] for i in used.tolist()], lut[codes]


def _codes_of(dictionary: pa.Array, values: pa.Array, seen: list[tuple[pa.Array, np.ndarray | None]]) -> np.ndarray | None:
    """The codes of a dictionary's values among the sorted ``values`` (None: the dictionary is ``values``),
    looked up once per distinct dictionary (``seen``)."""
    import pyarrow.compute as pc

    for d, lut in seen:
        if d is dictionary or d.equals(dictionary):
            return lut
    lut = None if dictionary.equals(values) else pc.index_in(dictionary, value_set=values).to_numpy(zero_copy_only=False).astype(np.int64)
    seen.append((dictionary, lut))
    return lut


def decode(table: pa.Table) -> pa.Table:
    """Dictionary columns as plain strings (simpler filtering and pivoting)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(f.type.value_type))
    return table


def constant(value: str, rows: int) -> pa.DictionaryArray:
    """A dictionary column holding one value on every row."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([value], pa.string()))


def dictionary(indices: np.ndarray, names: list[str], valid: np.ndarray | None = None) -> pa.DictionaryArray:
    """A dictionary column: ``indices`` (int32) into ``names``; null where not ``valid``."""
    mask = None if valid is None else ~valid
    return pa.DictionaryArray.from_arrays(pa.array(indices.astype(np.int32, copy=False), mask=mask), pa.array(names, pa.string()))


def look_up(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per key of ``keys``, its position in ``sorted_keys`` (ascending) and whether it is there (where it is not, the
    position is some valid index, or 0 when ``sorted_keys`` is empty)."""
    if not sorted_keys.size:
        return np.zeros(keys.shape, np.int64), np.zeros(keys.shape, bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return at, sorted_keys[at] == keys


def places(names: pa.Array | pa.ChunkedArray, wanted: pa.Array | pa.ChunkedArray, names_sorted: bool = False) -> np.ndarray:
    """Per ``wanted`` string, the index of that string in ``names`` (distinct), or -1 when it is not there (or null):
    ``names`` looked up among the wanted ones' distinct values — a hash of those each call, not of ``names``, so a
    few wanted at a time among millions of names cost one pass over them and no index of them held. With
    ``names_sorted`` (ascending) the pass is over the names between the least and the greatest wanted (found by
    bisection): wanted names that lie close together in that order cost little more than themselves."""
    import pyarrow.compute as pc

    if names_sorted and len(names) and len(wanted):
        least, greatest = pc.min_max(wanted).values()
        if not least.is_valid:  # every wanted one null
            return np.full(len(wanted), -1, np.int64)
        first = bisect_left(names, least.as_py(), key=_as_py)
        stop = bisect_right(names, greatest.as_py(), lo=first, key=_as_py)
        found = places(names.slice(first, stop - first), wanted)
        return np.where(found >= 0, found + first, -1)
    encoded = pc.dictionary_encode(wanted)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks() if encoded.num_chunks != 1 else encoded.chunk(0)
    distinct = encoded.dictionary if encoded.dictionary.type == names.type else encoded.dictionary.cast(names.type)
    found = pc.index_in(names, value_set=distinct)
    place_of = np.full(len(encoded.dictionary) + 1, -1, np.int64)  # the last: a null wanted
    place_of[pc.drop_null(found).to_numpy(zero_copy_only=False)] = np.flatnonzero(pc.is_valid(found).to_numpy(zero_copy_only=False))
    return place_of[encoded.indices.fill_null(len(encoded.dictionary)).to_numpy(zero_copy_only=False)]


def _as_py(scalar: pa.Scalar) -> object:
    return scalar.as_py()


def position(sorted_names: Sequence[str], name: object) -> int | None:
    """The position of ``name`` in ``sorted_names`` (ascending, distinct), by bisection; None when it is not there."""
    if not isinstance(name, str):
        return None
    i = bisect_left(sorted_names, name)
    return i if i < len(sorted_names) and sorted_names[i] == name else None


def sorted_positions(sorted_names: Sequence[str], names: Iterable[object]) -> np.ndarray:
    """:func:`position` of each of ``names`` in ``sorted_names``, -1 for one not there: no dict of the sorted names made
    (millions of document ids, an int object each)."""
    return np.fromiter((-1 if (i := position(sorted_names, n)) is None else i for n in names), dtype=np.int64)


def text_codes(column: pa.ChunkedArray, missing: str | None = None) -> tuple[np.ndarray, list[str]]:
    """Per row a code into the column's distinct values as text (−1: null, or the value ``missing``), and those values
    (in no particular order). A column of small non-negative integers (the 0/1 marks of a wide table) is counted, a
    string or dictionary column coded as stored (:func:`value_codes`): no text made per row; any other is cast to text."""
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    if pa.types.is_integer(column.type) and len(column) > column.null_count:
        values = np.asarray(pc.fill_null(column, 0).to_numpy(), dtype=np.int64)
        if int(values.min()) >= 0 and int(values.max()) < 1 << 16:
            present = np.flatnonzero(np.bincount(values[np.asarray(column.is_valid())] if column.null_count else values))
            lut = np.zeros(int(values.max()) + 1, np.int64)
            lut[present] = np.arange(present.size)
            codes = lut[values]
            if column.null_count:
                codes[np.asarray(column.is_null())] = present.size  # a null row: the number of values, as value_codes
            return _named(codes, [str(v) for v in present.tolist()], missing)
    encoded = pa.types.is_dictionary(column.type)
    value_type = column.type.value_type if encoded else column.type
    if not (pa.types.is_string(value_type) or pa.types.is_large_string(value_type)):
        column = pc.cast(column.cast(value_type) if encoded else column, pa.string())
    names, codes = value_codes(column)
    return _named(codes, names, missing)


def _named(codes: np.ndarray, names: list[str], missing: str | None) -> tuple[np.ndarray, list[str]]:
    """``codes`` into ``names`` (a null row: ``len(names)``) as codes into the names some row uses but ``missing``,
    −1 for a null or ``missing`` row."""
    used = np.bincount(codes, minlength=len(names) + 1)[: len(names)] > 0
    if missing is not None:
        used &= np.array([n != missing for n in names], bool)
    lut = np.full(len(names) + 1, -1, np.int64)
    lut[np.flatnonzero(used)] = np.arange(int(used.sum()))
    return lut[codes], [n for n, u in zip(names, used.tolist()) if u]
