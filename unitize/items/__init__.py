"""Flat labels (no text offsets) → item matrices: one row per (group, item), one value per annotator.

- :mod:`~unitize.items.options` — the ``[items]`` table, parsed (:func:`parse_options`);
- :mod:`~unitize.items.values` — how a group reads a raw label (:func:`canonical`);
- :mod:`~unitize.items.build` — one bucket of items' labels → its rows (:func:`build_bucket`);
- :mod:`~unitize.items.stream` — all labels → matrices, a bucket of items at a time (:func:`build`);
  a layout writes them (:mod:`unitize.layouts`).
"""

from .build import build_bucket, item_key
from .options import LAYOUTS, LEVELS, NOT_APPLICABLE, GroupSpec, ItemOptions, parse_options
from .stream import GroupMatrix, ItemResult, build
from .values import InvalidLabel, canonical, number_text, numbers

__all__ = [
    "LAYOUTS",
    "LEVELS",
    "NOT_APPLICABLE",
    "GroupMatrix",
    "GroupSpec",
    "InvalidLabel",
    "ItemOptions",
    "ItemResult",
    "build",
    "build_bucket",
    "canonical",
    "item_key",
    "number_text",
    "numbers",
    "parse_options",
]
