"""The report's data as JSON text (compact, UTF-8 as is, no NaN), with parts serialized ahead spliced in.

A crowd study's documents hold a hundred thousand disagreement regions; kept as nested Python lists until the
documents are written they cost several times their text in memory. :mod:`.build` serializes each region as it is
found (:class:`Raw`) and :func:`dumps` splices the text in: the result is what ``json.dumps`` gives for the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any


class Raw(str):
    """JSON text, spliced into :func:`dumps`'s output as it is."""


def plain(value: Any) -> str:
    """JSON text of a value holding no :class:`Raw` text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> str:
    """JSON text of a value whose dicts (with string keys) and lists may hold :class:`Raw` text: the values of such a
    dict and the items of a list holding some (or holding dicts) are written here, anything else by :func:`plain`."""
    return "".join(pieces(value))


def pieces(value: Any) -> Iterator[str]:
    """:func:`dumps`'s text in pieces, one after another (a writer need not hold the whole): each :class:`Raw` text
    and each value :func:`plain` writes is one piece, and so is each bracket, comma and key between them — a
    JSON string never spans two pieces."""
    if isinstance(value, Raw):
        yield str(value)
    elif isinstance(value, dict) and all(isinstance(k, str) for k in value):
        yield "{"
        for i, (k, v) in enumerate(value.items()):
            yield f"{',' if i else ''}{plain(k)}:"
            yield from pieces(v)
        yield "}"
    elif isinstance(value, list) and any(isinstance(v, (Raw, dict)) for v in value):
        yield "["
        for i, v in enumerate(value):
            if i:
                yield ","
            yield from pieces(v)
        yield "]"
    else:
        yield plain(value)


#: items of a long list made Python objects at once by :func:`in_slices`
SLICE = 1 << 16


def in_slices(items: Callable[[int, int], list[Any]], n: int, size: int = SLICE) -> Raw:
    """JSON text of a list of ``n`` items, made a slice at a time (``items(start, stop)``: that slice's items), as
    :func:`plain` writes the whole list: a list per document of a crowd study is never all Python objects at once."""
    parts = ["["]
    for a in range(0, n, size):
        if a:
            parts.append(",")
        parts.append(plain(items(a, min(a + size, n)))[1:-1])
    parts.append("]")
    return Raw("".join(parts))  # one join: the text is made once, beside its parts (not copied again for the brackets)
