"""Alpha-U's disagreements of many stretches at once (a ``--by-doc`` run: every document of a category), and of every
pair of annotators at once (:func:`pair_disagreements`: the rows of roles and ``--by-annotator``).

:meth:`~.alphau.Stretch.disagreement` sums a stretch's units and gaps in exact Python integers; a run with a row
per document called it once per document and category. :func:`disagreements` gives the same values for a list
of stretches from one sort of all their gaps: the integer sums in int64 (exact while they fit, checked in floating
point first; a stretch whose sums might not fit goes through its own method), the last division in Python
integers as the method does, so every value is the same to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .alphau import LONG, SAFE, CategoryDisagreement, Stretch, normalised
from .overlaps import Units, observed_matrix

# a stretch whose sums might come near SAFE (or with a unit of LONG units or more) goes through
# :meth:`Stretch.disagreement`; a test lowers this module's SAFE to send some there


def disagreements(parts: Sequence[Stretch]) -> list[CategoryDisagreement]:
    """``[p.disagreement() for p in parts]``, the same values, at once (the parts: stretches of one category, with the
    same annotators)."""
    if not parts or any(p.lead.size != parts[0].lead.size or p.length <= 0 for p in parts) or parts[0].lead.size < 2:
        return [p.disagreement() for p in parts]  # its own errors, as each raises them
    m = int(parts[0].lead.size)
    n = len(parts)
    length = np.array([p.length for p in parts], dtype=np.int64)
    gap_doc, gap_len, gap_count = _gaps(parts, length)
    unit_doc = np.repeat(np.arange(n), [p.units[0].size for p in parts])
    u = np.concatenate([p.units[0] for p in parts]).astype(np.int64)
    c = np.concatenate([p.units[1] for p in parts]).astype(np.int64)
    top = int(max(gap_len.max(initial=0), u.max(initial=0))) + 2
    key = gap_doc * top + gap_len
    order = np.argsort(key, kind="stable")
    key, gap_len, gap_count = key[order], gap_len[order], gap_count[order]
    at_least = np.concatenate((np.cumsum(gap_count[::-1])[::-1], [0]))  # gaps from here on: how many, and their length
    summed = np.concatenate((np.cumsum((gap_len * gap_count)[::-1])[::-1], [0]))
    first = np.searchsorted(key, unit_doc * top + u, side="left")  # the unit's document's first gap at least u long
    end = np.searchsorted(key, (unit_doc + 1) * top, side="left")  # … and the end of its document's gaps
    fitting = (summed[first] - summed[end]) - (u - 1) * (at_least[first] - at_least[end])
    n_c = np.bincount(unit_doc, weights=c, minlength=n).astype(np.int64)
    uf, ff, cf, ncf = u.astype(np.float64), fitting.astype(np.float64), c.astype(np.float64), n_c[unit_doc].astype(np.float64)
    rough = np.bincount(unit_doc, weights=cf * (ncf * 2 * uf**3 + uf * uf * np.abs(ff)), minlength=n)  # a bound on each sum
    risky = (rough >= SAFE) | ((float(m) * length.astype(np.float64)) ** 2 >= SAFE)
    if u.size and int(u.max()) >= LONG:
        risky[:] = True
    terms = c * ((n_c[unit_doc] - 1) * (u * (u - 1) * (2 * u - 1) // 3) + u * u * fitting)
    numerator = np.zeros(n, np.int64)
    np.add.at(numerator, unit_doc, np.where(risky[unit_doc], 0, terms))
    squares = np.zeros(n, np.int64)
    np.add.at(squares, unit_doc, np.where(risky[unit_doc], 0, c * u * (u - 1)))
    out = []
    for p, num, sq, r in zip(parts, numerator.tolist(), squares.tolist(), risky.tolist()):
        if r:
            out.append(p.disagreement())
            continue
        out.append(CategoryDisagreement.of_sums(m, int(p.length), p.observed, num, sq))
    return out


def _gaps(parts: Sequence[Stretch], length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every gap of every part as (part, length, count), those of positive length: inner gaps, leading and trailing
    gaps of the annotators who marked something, the whole part for those who did not (:meth:`Stretch.all_gaps`)."""
    n = len(parts)
    lead = np.stack([p.lead for p in parts]).astype(np.int64)
    trail = np.stack([p.trail for p in parts]).astype(np.int64)
    marked = np.stack([p.marked for p in parts])
    inner_doc = np.repeat(np.arange(n), [p.gaps[0].size for p in parts])
    rows, _ = np.nonzero(marked)
    unmarked = (~marked).sum(axis=1)
    doc = np.concatenate((inner_doc, rows, rows, np.repeat(np.arange(n), unmarked)))
    size = np.concatenate(([p.gaps[0] for p in parts] or [np.zeros(0, np.int64)])
                          + [lead[marked], trail[marked], np.repeat(length, unmarked)]).astype(np.int64)
    count = np.concatenate(([p.gaps[1] for p in parts] or [np.zeros(0, np.int64)]) + [np.ones(2 * rows.size + int(unmarked.sum()), np.int64)]).astype(np.int64)
    keep = size > 0
    return doc[keep], size[keep], count[keep]


def pair_disagreements(units: Sequence[Units], length: int, pairs: Sequence[tuple[int, int]]) -> list[CategoryDisagreement]:
    """One category's observed and expected disagreement of each pair of annotators alone, at once, on a continuum of
    ``length``: ``units`` holds each annotator's units (sorted, disjoint). The expected numerator adds up over the
    pair's units and gaps (``Σ_u c(l_u)`` and ``Σ_u l_u² Σ_{gaps ≥ l_u} (gap − l_u + 1)``, an annotator's gaps being
    the rest of the continuum: leading, inner and trailing), so it comes from per-annotator sums, every annotator's
    at once; the observed Σ δ of every pair from one sort of all units (:func:`~.overlaps.observed_matrix`). The same
    values as :meth:`~.alphau.Stretch.disagreement` of the two together."""
    if not pairs:
        return []
    m = len(units)
    norm = [normalised(u, length) for u in units]
    owner = np.repeat(np.arange(m), [b.size for b, _ in norm])
    every = np.concatenate([e - b for b, e in norm] or [np.zeros(0, np.int64)]).astype(np.float64)  # every unit's length
    n_units = np.bincount(owner, minlength=m).astype(np.float64)
    cubic = np.bincount(owner, weights=(every * (every - 1) * (2 * every - 1)) / 3, minlength=m)  # Σ (2l³ − 3l² + l) / 3
    squares = np.bincount(owner, weights=every * (every - 1), minlength=m)
    fits = _fits(norm, length, every, owner).reshape(m, m)
    observed = observed_matrix(norm)
    out = []
    for i, j in pairs:
        n_c = n_units[i] + n_units[j]
        numerator = (n_c - 1) * (cubic[i] + cubic[j]) + fits[i, i] + fits[i, j] + fits[j, i] + fits[j, j]
        denominator = 2 * length * (2 * length - 1) - squares[i] - squares[j]
        expected = 2 * numerator / (length * denominator) if numerator else 0.0
        out.append(CategoryDisagreement(observed=2 * int(observed[i, j]) / (2 * length * length), expected=expected))
    return out


def _fits(norm: Sequence[Units], length: int, every: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(m · m,) [a · m + b]: Σ over a's units of l² Σ over b's gaps ≥ l of (gap − l + 1), every (a, b) at once: the gaps
    sorted by annotator and length, each unit's length looked up among every annotator's gaps."""
    m = len(norm)
    edges = [np.concatenate(([0], np.ravel(np.column_stack((b, e))), [length])) for b, e in norm]  # 0, b0, e0, b1, …, L
    gaps = [edge[1::2] - edge[0::2] for edge in edges]
    gap_owner = np.repeat(np.arange(m), [g.size for g in gaps])
    gap = np.concatenate(gaps)
    keep = gap > 0
    gap, gap_owner = gap[keep], gap_owner[keep]
    top = int(length) + 1
    order = np.argsort(gap_owner * top + gap, kind="stable")
    key, gap = (gap_owner * top + gap)[order], gap[order].astype(np.float64)
    bound = np.searchsorted(key, np.arange(m + 1) * top)  # each annotator's gaps: [bound[b], bound[b + 1])
    summed = np.concatenate(([0.0], np.cumsum(gap)))
    b = np.repeat(np.arange(m), every.size)  # every (unit, annotator b) pair
    ls, a = np.tile(every, m), np.tile(owner, m)
    k = np.searchsorted(key, b * top + ls, side="left")  # b's first gap at least l long
    at_least = bound[b + 1] - k
    total = summed[bound[b + 1]] - summed[k]
    return np.bincount(a * m + b, weights=ls * ls * (total - (ls - 1) * at_least), minlength=m * m)
