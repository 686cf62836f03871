"""Flat labels (no text offsets) → item matrices: one row per (group, item), one value per annotator.

- :mod:`~unitize.items.options` — the ``[items]`` table, parsed (:func:`parse_options`);
- :mod:`~unitize.items.values` — how a group reads a raw label (:func:`canonical`);
- :mod:`~unitize.items.build` — labels → matrices (:func:`build`); a layout writes them (:mod:`unitize.layouts`).
"""

from .build import GroupMatrix, ItemResult, build, item_key
from .options import LAYOUTS, LEVELS, NOT_APPLICABLE, GroupSpec, ItemOptions, parse_options
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
    "canonical",
    "item_key",
    "number_text",
    "numbers",
    "parse_options",
]
