"""Arrow string columns as integer codes, and back: what the writers and the readers of unit tables share."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def sorted_codes(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """Distinct strings, sorted, and per row the index into them (dictionary columns stay encoded)."""
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    chunks = [c if pa.types.is_dictionary(c.type) else pc.dictionary_encode(c) for c in column.chunks]
    dictionaries = [c.dictionary.to_pylist() for c in chunks]
    values = sorted({v for d in dictionaries for v in d})
    index = {v: i for i, v in enumerate(values)}
    parts = [
        c.indices.to_numpy(zero_copy_only=False) if d == values  # a sorted dictionary: its indices are the codes
        else np.array([index[v] for v in d], dtype=np.int64)[c.indices.to_numpy(zero_copy_only=False)] if d
        else np.zeros(len(c), np.int64)
        for c, d in zip(chunks, dictionaries)
    ]
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    used = np.flatnonzero(np.bincount(codes, minlength=len(values)))  # a dictionary may hold values no row uses
    if used.size == len(values):
        return values, codes
    lut = np.zeros(len(values), dtype=np.int64)
    lut[used] = np.arange(used.size)
    return [values[i] for i in used.tolist()], lut[codes]


def decode(table: pa.Table) -> pa.Table:
    """Dictionary columns as plain strings (simpler filtering and pivoting)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(f.type.value_type))
    return table


def constant(value: str, rows: int) -> pa.DictionaryArray:
    """A dictionary column holding one value on every row."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([value], pa.string()))


def dictionary(indices: np.ndarray, names: list[str]) -> pa.DictionaryArray:
    """A dictionary column: ``indices`` (int32) into ``names``."""
    return pa.DictionaryArray.from_arrays(pa.array(indices.astype(np.int32)), pa.array(names, pa.string()))
