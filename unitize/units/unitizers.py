"""Unitization as pure NumPy functions (DESIGN.md §4). No I/O, no model objects.

Positions live in a *global unit space*: the documents are laid end to end, so a
document's units occupy ``[base[d], base[d] + n[d])``. Character units are the
document's characters; word units are its tokens. All ranges of units are
inclusive ``(u0, u1)`` pairs; all character ranges are half-open ``[b, e)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Discontinuous = Literal["extend", "keep", "drop"]
Approach = Literal["interval", "boundary"]
#: what a unit matrix holds (DESIGN.md §4, step 5): a 0/1 column per layer, the layers' bit mask, the label
Mode = Literal["separate", "combined", "labels"]

_I64 = np.int64


@dataclass(frozen=True)
class UnitSpace:
    """The coding units of every document with a text, laid end to end.

    Document ``d`` has ``n_units[d]`` units at global positions
    ``base[d] …``; its characters start at global position ``char_base[d]``,
    and ``chars_total`` is where the last one's end. For word units
    ``starts``/``ends`` are the global character extents of every token.
    """

    unit: str
    doc_ids: list[str]
    n_units: np.ndarray
    base: np.ndarray
    char_base: np.ndarray
    chars_total: int
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None

    def doc_chars(self) -> np.ndarray:
        """Each document's length in characters (code points)."""
        return np.diff(self.char_base, append=self.chars_total)

    def local_extent(self, doc: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Document-local character ``[begin, end)`` of global units ``u`` of documents ``doc``."""
        if self.unit == "char":
            begin = u - self.char_base[doc]
            return begin, begin + 1
        starts, ends = self.extents()
        return starts[u] - self.char_base[doc], ends[u] - self.char_base[doc]

    def extents(self) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ends)``: the global character extents of every token (a word space's; a char space has none)."""
        if self.starts is None or self.ends is None:
            raise ValueError(f"a {self.unit} unit space has no token extents")
        return self.starts, self.ends

    def part(self, d0: int, d1: int) -> UnitSpace:
        """The unit space of documents ``d0 … d1-1``, positions from 0."""
        u0 = int(self.base[d0]) if d0 < len(self.doc_ids) else int(self.n_units.sum())
        u1 = u0 + int(self.n_units[d0:d1].sum())
        c0, c1 = (int(self.char_base[d]) if d < len(self.doc_ids) else self.chars_total for d in (d0, d1))
        cut = (lambda a: (a[u0:u1] - c0).astype(np.int32)) if self.starts is not None else (lambda a: None)
        return UnitSpace(self.unit, self.doc_ids[d0:d1], self.n_units[d0:d1], self.base[d0:d1] - u0,
                         self.char_base[d0:d1] - c0, c1 - c0, cut(self.starts), cut(self.ends))


def cumulative(n: np.ndarray) -> np.ndarray:
    """Start positions of consecutive blocks of sizes ``n`` (an exclusive prefix sum)."""
    base = np.zeros(n.size, dtype=np.int64)
    if n.size:
        np.cumsum(n[:-1], out=base[1:])
    return base


@dataclass(frozen=True)
class SegmentKey:
    """The mixed-radix key that sorts merged segments by (group, layer, annotator, document):
    ``((group · layers + layer) · annotators + annotator) · docs + doc`` — the documents of one unit
    space, so an (group, layer, annotator)'s segments are one run of keys, document by document. A
    per-label key is ``key · labels + label``."""

    layers: int
    annotators: int
    docs: int
    labels: int = 1

    def encode(self, group: Any, layer: Any, annotator: Any, doc: Any) -> Any:
        return ((group * self.layers + layer) * self.annotators + annotator) * self.docs + doc

    def block(self, group: int, layer: int, annotator: int) -> int:
        """The first key of a (group, layer, annotator): its document 0."""
        return int(self.encode(group, layer, annotator, 0))

    def split(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(group, layer, annotator, doc) of keys."""
        doc, rest = key % self.docs, key // self.docs
        annotator, rest = rest % self.annotators, rest // self.annotators
        return rest // self.layers, rest % self.layers, annotator, doc

    def labelled(self, key: np.ndarray, label: np.ndarray) -> np.ndarray:
        """Per-label keys."""
        return key * self.labels + label

    def documents(self, key: np.ndarray, labelled: bool = False) -> np.ndarray:
        """The document index of each key (``labelled``: per-label keys)."""
        return key // self.labels % self.docs if labelled else key % self.docs

    def renumbered(self, key: np.ndarray, d0: int, d1: int, labelled: bool = False) -> np.ndarray:
        """Keys of documents ``d0 … d1-1`` renumbered over these documents (the key of :meth:`with_docs`
        ``(d1 - d0)``); ``labelled``: per-label keys."""
        scale = self.labels if labelled else 1
        seg = key // scale
        return (seg // self.docs * (d1 - d0) + (seg % self.docs - d0)) * scale + key % scale

    def with_docs(self, docs: int) -> SegmentKey:
        return SegmentKey(self.layers, self.annotators, docs, self.labels)


@dataclass(frozen=True)
class Segments:
    """Segments made from fragments.

    ``fragment_segment[i]`` is the segment fragment ``i`` went into, or -1 when
    its element was dropped. ``first_fragment[s]`` is a representative fragment of
    segment ``s`` (for its keys); ``extended[s]`` marks a filled gap.
    """

    begin: np.ndarray
    end: np.ndarray
    extended: np.ndarray
    first_fragment: np.ndarray
    fragment_segment: np.ndarray


def fragments_to_segments(
    element: np.ndarray,
    begin: np.ndarray,
    end: np.ndarray,
    mode: Discontinuous,
    element_size: np.ndarray | None = None,
) -> Segments:
    """Turn fragments of elements into segments.

    ``extend``: one segment per element from its first begin to its last end;
    ``keep``: one segment per fragment; ``drop``: elements with several fragments
    produce no segment. ``element_size[i]`` is how many fragments the element of
    fragment ``i`` has in its source (default: how many are given here), so an
    element whose other fragments were left out upstream is still dropped.
    """
    element = np.asarray(element, dtype=_I64)
    begin = np.asarray(begin, dtype=_I64)
    end = np.asarray(end, dtype=_I64)
    n = element.size
    if mode == "keep":
        idx = np.arange(n, dtype=_I64)
        return Segments(begin.copy(), end.copy(), np.zeros(n, dtype=bool), idx, idx.copy())
    if mode not in ("extend", "drop"):
        raise ValueError(f"discontinuous must be 'extend', 'keep' or 'drop', not {mode!r}")
    uniq, inverse, counts = np.unique(element, return_inverse=True, return_counts=True)
    m = uniq.size
    first = np.full(m, n, dtype=_I64)
    np.minimum.at(first, inverse, np.arange(n, dtype=_I64))
    seg_begin = np.full(m, np.iinfo(_I64).max, dtype=_I64)
    seg_end = np.full(m, np.iinfo(_I64).min, dtype=_I64)
    np.minimum.at(seg_begin, inverse, begin)
    np.maximum.at(seg_end, inverse, end)
    if mode == "extend":
        return Segments(seg_begin, seg_end, counts > 1, first, inverse.astype(_I64))
    if element_size is None:
        kept = counts == 1
    else:
        size = np.zeros(m, dtype=_I64)
        np.maximum.at(size, inverse, np.asarray(element_size, dtype=_I64))
        kept = np.maximum(size, counts) == 1
    new_index = np.cumsum(kept) - 1
    fragment_segment = np.where(kept[inverse], new_index[inverse], -1).astype(_I64)
    return Segments(seg_begin[kept], seg_end[kept], np.zeros(int(kept.sum()), dtype=bool), first[kept], fragment_segment)


def char_units(begin: np.ndarray, end: np.ndarray, char_base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Character units covered by ``[begin, end)`` (document-local offsets, ``char_base`` per segment).

    Returns global ``(u0, u1)`` inclusive and an ``empty`` mask (zero-length segments).
    """
    b = np.asarray(char_base, dtype=_I64) + np.asarray(begin, dtype=_I64)
    e = np.asarray(char_base, dtype=_I64) + np.asarray(end, dtype=_I64)
    return b, e - 1, e <= b


def _as(positions: np.ndarray, sorted_positions: np.ndarray) -> np.ndarray:
    """``positions`` in the dtype of the array they are looked up in (searchsorted would copy a 32-bit token array
    to 64 bits at every call), clipped to its range: the same places."""
    if sorted_positions.dtype == positions.dtype:
        return positions
    info = np.iinfo(sorted_positions.dtype)
    return np.clip(positions, info.min, info.max).astype(sorted_positions.dtype)


def word_units(
    begin: np.ndarray,
    end: np.ndarray,
    char_base: np.ndarray,
    token_starts: np.ndarray,
    token_ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokens whose character extent intersects ``[begin, end)``.

    ``token_starts``/``token_ends`` are global character positions of every token
    of every document, sorted. Returns global token indices ``(u0, u1)``
    inclusive, an ``empty`` mask (no token intersects: zero length or
    whitespace only) and a ``snapped`` mask (a token was cut by the selection).
    """
    b = np.asarray(char_base, dtype=_I64) + np.asarray(begin, dtype=_I64)
    e = np.asarray(char_base, dtype=_I64) + np.asarray(end, dtype=_I64)
    u0 = np.searchsorted(token_ends, _as(b, token_ends), side="right").astype(_I64)
    u1 = np.searchsorted(token_starts, _as(e, token_starts), side="left").astype(_I64) - 1
    empty = (u0 > u1) | (e <= b)
    snapped = np.zeros(b.size, dtype=bool)
    ok = ~empty
    if ok.any():
        snapped[ok] = (token_starts[u0[ok]] < b[ok]) | (token_ends[u1[ok]] > e[ok])
    return u0, u1, empty, snapped


@dataclass(frozen=True)
class Merged:
    """Disjoint segments after merging overlaps within each key.

    ``cluster[i]`` is the merged segment input segment ``i`` went into; merged
    segments are ordered by (key, u0).
    """

    key: np.ndarray
    u0: np.ndarray
    u1: np.ndarray
    size: np.ndarray
    cluster: np.ndarray


def merge_overlaps(key: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> Merged:
    """Merge segments of the same key that share at least one unit; abutting ones stay apart."""
    key = np.asarray(key, dtype=_I64)
    u0 = np.asarray(u0, dtype=_I64)
    u1 = np.asarray(u1, dtype=_I64)
    n = key.size
    if n == 0:
        z = np.zeros(0, dtype=_I64)
        return Merged(z, z, z, z, z)
    order = np.lexsort((u1, u0, key))
    k, s, e = key[order], u0[order], u1[order]
    # shift each key into its own band so one running maximum serves all keys
    span = int(max(e.max(), s.max()) - min(s.min(), 0)) + 2
    shift = (k - k.min()) * span
    run_end = np.maximum.accumulate(e + shift)
    starts = np.ones(n, dtype=bool)
    starts[1:] = (s[1:] + shift[1:]) > run_end[:-1]
    cluster_sorted = np.cumsum(starts) - 1
    m = int(cluster_sorted[-1]) + 1
    merged_u1 = np.full(m, np.iinfo(_I64).min, dtype=_I64)
    np.maximum.at(merged_u1, cluster_sorted, e)
    cluster = np.empty(n, dtype=_I64)
    cluster[order] = cluster_sorted
    return Merged(
        key=k[starts],
        u0=s[starts],
        u1=merged_u1,
        size=np.bincount(cluster_sorted, minlength=m).astype(_I64),
        cluster=cluster,
    )


def mark(n_units: int, r0: np.ndarray, r1: np.ndarray, approach: Approach) -> np.ndarray:
    """A 0/1 vector of ``n_units`` marking disjoint segments ``[r0, r1]`` (inclusive).

    ``interval``: every unit of a segment is 1; ``boundary``: its first and last units.
    """
    r0 = np.asarray(r0, dtype=_I64)
    r1 = np.asarray(r1, dtype=_I64)
    if approach == "interval":  # counts of open segments in 32 bits: the temporaries of a partition's million units halved
        delta = np.bincount(r0, minlength=n_units + 1).astype(np.int32)
        np.subtract(delta, np.bincount(r1 + 1, minlength=n_units + 1), out=delta, casting="unsafe")
        return (np.cumsum(delta[:n_units], dtype=np.int32) > 0).view(np.uint8)
    if approach == "boundary":
        out = np.zeros(n_units, dtype=np.uint8)
        out[r0] = 1
        out[r1] = 1
        return out
    raise ValueError(f"approach must be 'interval' or 'boundary', not {approach!r}")


def label_codes(n_units: int, r0: np.ndarray, r1: np.ndarray, label: np.ndarray, approach: Approach) -> np.ndarray:
    """Per unit, the bit mask of the labels marking it (bit ``i`` = label ``i``, at most 64 labels).

    Segments ``[r0, r1]`` (inclusive) must be disjoint within each label; segments of
    different labels may overlap, and a unit they share gets both bits.
    """
    label = np.asarray(label, dtype=_I64)
    r0 = np.asarray(r0, dtype=_I64)
    r1 = np.asarray(r1, dtype=_I64)
    out = np.zeros(n_units, dtype=np.uint64)
    for lab in np.unique(label).tolist():
        sel = label == lab
        out |= mark(n_units, r0[sel], r1[sel], approach).astype(np.uint64) << np.uint64(lab)
    return out


def label_dictionary(codes: np.ndarray, names: list[str], none: str) -> tuple[np.ndarray, list[str]]:
    """Dictionary-encode label bit masks: ``(indices, values)``; a value is the labels of its
    bits joined with '+' in ``names`` order (sorted names give sorted joins), ``none`` for 0."""
    uniq, inverse = np.unique(np.asarray(codes, dtype=np.uint64), return_inverse=True)
    values = ["+".join(n for i, n in enumerate(names) if (c >> i) & 1) or none for c in uniq.tolist()]
    return inverse.reshape(-1).astype(np.int32), values
