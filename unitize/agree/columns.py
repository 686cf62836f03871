"""Sufficient statistics straight from the Arrow columns of a wide unit table.

The fast path of ``measure`` for the common case: a wide table (one column per
annotator) of integer values (binary 0/1 or layer bit masks), nulls for a
missing annotator. Each column becomes an int16 code array (−1 = null) with two
Arrow compute kernels, without a float matrix, sorting or pandas; one histogram
of (layer, joint profile) keys gives every layer's statistics. Other tables
(labels, long layout, items) go through :class:`~unitize.agree.data.Matrix`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .data import Setting
from .stats import PROFILES, Stats, from_codes, from_profiles, profile_keys


def _values(column: pa.ChunkedArray) -> np.ndarray:
    """An integer column as int16, null = −1."""
    filled = pc.fill_null(pc.cast(column, pa.int16()), -1)
    return np.concatenate([c.to_numpy() for c in filled.chunks]) if filled.num_chunks != 1 else filled.chunk(0).to_numpy()


def fast(setting: Setting, schema: pa.Schema) -> bool:
    """Whether :func:`group_stats` applies: wide unit data with integer annotator columns."""
    return (
        setting.kind == "units"
        and setting.layout == "wide"
        and setting.value in ("binary", "bitmask")
        and all(pa.types.is_integer(schema.field(a).type) for a in setting.annotators)
    )


def group_stats(setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int) -> list[Stats]:
    """The statistics of every layer of one group's rows of a wide integer table, in one pass:
    a histogram of (layer, joint profile) keys."""
    columns = [_values(table.column(a)) for a in setting.annotators]
    top = max((int(c.max()) for c in columns if c.size), default=-1)
    seen = np.zeros(top + 2, dtype=np.int64)
    for c in columns:
        seen += np.bincount(c + 1, minlength=top + 2)  # + 1: null (−1) counts in bin 0
    domain = np.flatnonzero(seen[1:])
    if domain.size != top + 1:  # not 0..top: remap values to codes (the last entry maps −1 to −1)
        lut = np.full(top + 2, -1, dtype=np.int16)
        lut[domain] = np.arange(domain.size)
        columns = [lut[c] for c in columns]
    v, a = domain.size, len(columns)
    size = (v + 1) ** a
    if size * n_layers > PROFILES:  # many values or annotators: per layer, the general path
        return [from_codes([c[layer == i] for c in columns], domain.astype(np.float64), setting.annotators).trimmed()
                for i in range(n_layers)]
    key = profile_keys(columns, v)
    if n_layers > 1:
        key = key + layer.astype(key.dtype) * key.dtype.type(size)
    counts = np.bincount(key, minlength=size * n_layers).reshape(n_layers, size)
    return [from_profiles(c, domain.astype(np.float64), setting.annotators).trimmed() for c in counts]
