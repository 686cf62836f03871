"""Relations counted from segments: the RAT's "Annotation #" of discourse data.

A group's relations in a set of layers are the distinct source records (``records``
column of ``segments/<unit>.parquet``) one annotator has segments of in those layers;
the count reported is the most any annotator has. A record with segments in two
layers of the set counts once.

``unitize convert`` counts them for every group when it writes the segments of
discourse data, and keeps them in the file's schema metadata (:data:`KEY`), so that
``unitize agree`` reads no records; an output written before has them counted from
its records, group by group, with the same function.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import combinations

import numpy as np
import pyarrow as pa

from ..model.codes import sorted_codes

#: the key of the segments file's schema metadata that holds its relation counts
KEY = b"unitize:relations"

#: the segments' columns the relations are counted from
COLUMNS = ("group", "layer", "annotator", "records")

#: a group's counts: per set of layers, its relations
Counts = dict[frozenset[str], int]

#: up to this many layers with segments in a group, every set of them is counted (above: each layer, and all)
ALL_SETS = 6


def relation_counts(table: pa.Table) -> dict[str, Counts]:
    """Per group of a segments table (:data:`COLUMNS`): the
    relations of each set of the layers it has segments in (:data:`ALL_SETS`). Null records are no record;
    a group without records is left out (its relations are 0 in any layers)."""
    if not table.num_rows:
        return {}
    records = table.column("records")
    records = records.chunk(0) if records.num_chunks == 1 else records.combine_chunks()
    offsets = records.offsets.to_numpy().astype(np.int64)
    row = np.repeat(np.arange(len(records), dtype=np.int64), np.diff(offsets))
    flat = records.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    if flat.null_count:
        valid = flat.is_valid().to_numpy(zero_copy_only=False)
        flat, row = flat.filter(pa.array(valid)), row[valid]
    if not len(flat):
        return {}
    groups, g = sorted_codes(table.column("group"))
    layers, layer = sorted_codes(table.column("layer"))
    annotators, a = sorted_codes(table.column("annotator"))
    record = flat.dictionary_encode().indices.to_numpy(zero_copy_only=False).astype(np.int64)
    # each (group, layer, annotator, record) once, sorted: a group's are one run
    sizes = (len(groups), len(layers), len(annotators), int(record.max()) + 1)
    if float(np.prod(np.array(sizes, dtype=np.float64))) < 2.0**62:  # one int64 key each
        key = np.unique(((g[row] * sizes[1] + layer[row]) * sizes[2] + a[row]) * sizes[3] + record)
        found = np.stack([key // (sizes[1] * sizes[2] * sizes[3]), key // (sizes[2] * sizes[3]) % sizes[1],
                          key // sizes[3] % sizes[2], key % sizes[3]])
    else:
        found = np.unique(np.stack([g[row], layer[row], a[row], record]), axis=1)
    bounds = np.searchsorted(found[0], np.arange(len(groups) + 1))
    out: dict[str, Counts] = {}
    for i, name in enumerate(groups):
        _, lay, ann, rec = found[:, bounds[i]:bounds[i + 1]]
        if lay.size:
            out[name] = _group_counts([layers[k] for k in np.unique(lay).tolist()], lay, ann, rec, len(annotators))
    return out


def _group_counts(present: list[str], layer: np.ndarray, annotator: np.ndarray, record: np.ndarray, n_annotators: int) -> Counts:
    """One group's counts from its distinct (layer, annotator, record)s (``present``: its layers, sorted as their codes)."""
    local = np.searchsorted(np.unique(layer), layer)  # the layer's index among ``present``
    pairs, inverse = np.unique(annotator * (int(record.max()) + 1) + record, return_inverse=True)
    owner = pairs // (int(record.max()) + 1)
    if len(present) > ALL_SETS:  # each layer, and all of them
        each = np.bincount(local * n_annotators + annotator, minlength=len(present) * n_annotators).reshape(len(present), n_annotators)
        out = {frozenset([x]): int(each[k].max()) for k, x in enumerate(present)}
        out[frozenset(present)] = int(np.bincount(owner, minlength=n_annotators).max())
        return out
    mask = np.zeros(pairs.size, np.int64)  # per (annotator, record): the bits of its layers
    np.bitwise_or.at(mask, inverse.reshape(-1), np.left_shift(np.int64(1), local))
    counts = {}
    for k in range(1, len(present) + 1):
        for chosen in combinations(range(len(present)), k):
            hit = (mask & sum(1 << c for c in chosen)) != 0
            counts[frozenset(present[c] for c in chosen)] = int(np.bincount(owner[hit], minlength=n_annotators).max()) if hit.any() else 0
    return counts


def look_up(counts: Counts, layers: Iterable[str]) -> int | None:
    """The relations in ``layers`` (those the group has no segments in add none); None when the set was not counted."""
    present = frozenset().union(*counts)
    wanted = frozenset(layers) & present
    return counts.get(wanted, None) if wanted else 0


def to_metadata(counts: dict[str, Counts]) -> bytes:
    """The counts as the value of :data:`KEY`: per group, [layers, relations] of each set (layers sorted)."""
    return json.dumps({g: [[sorted(s), n] for s, n in sorted(c.items(), key=lambda x: (len(x[0]), sorted(x[0])))]
                       for g, c in counts.items()}, ensure_ascii=False, separators=(",", ":")).encode()


def from_metadata(schema: pa.Schema) -> dict[str, Counts] | None:
    """The counts a segments file's schema keeps (:func:`to_metadata`); None when it keeps none (or unreadable ones)."""
    raw = (schema.metadata or {}).get(KEY)
    if raw is None:
        return None
    try:
        found = json.loads(raw)
        return {str(g): {frozenset(map(str, s)): int(n) for s, n in sets} for g, sets in found.items()}
    except (ValueError, TypeError, AttributeError):
        return None
