"""The report's data as JSON text (compact, UTF-8 as is, no NaN), with parts serialized ahead spliced in.

A crowd study's documents hold a hundred thousand disagreement regions; kept as nested Python lists until the
documents are written they cost several times their text in memory. :mod:`.build` serializes each region as it is
found (:class:`Raw`) and :func:`dumps` splices the text in: the result is what ``json.dumps`` gives for the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class Raw(str):
    """JSON text, spliced into :func:`dumps`'s output as it is."""


def plain(value: Any) -> str:
    """JSON text of a value holding no :class:`Raw` text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> str:
    """JSON text of a value whose dicts (with string keys) and lists may hold :class:`Raw` text: the values of such a
    dict and the items of a list holding some (or holding dicts) are written here, anything else by :func:`plain`."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + ",".join(f"{plain(k)}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list) and any(isinstance(v, (Raw, dict)) for v in value):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return plain(value)


#: items of a long list made Python objects at once by :func:`in_slices`
SLICE = 1 << 16


def in_slices(items: Callable[[int, int], list[Any]], n: int, size: int = SLICE) -> Raw:
    """JSON text of a list of ``n`` items, made a slice at a time (``items(start, stop)``: that slice's items), as
    :func:`plain` writes the whole list: a list per document of a crowd study is never all Python objects at once."""
    parts = (plain(items(a, min(a + size, n)))[1:-1] for a in range(0, n, size))
    return Raw("[" + ",".join(parts) + "]")
