"""How unit and item matrices are stored: wide, sparse, long — each a :class:`Layout` object in its own module.

A layout is storage only: what a unit's value is and who is missing where comes from the
study, so every layout of a run gives the same agreement. Each one owns its rows
(:meth:`Layout.unit_tables`, :meth:`Layout.item_table`), its schema and metadata, and its
reading half (in its module); consumers ask its traits (``columnar``, ``implicit_rows``, …),
never its name. :func:`choose` and :func:`choose_items` are the ``auto`` policy. A new layout is a module here and one
line in :data:`LAYOUTS`.
"""

from __future__ import annotations

from ..errors import ConfigError, RunError
from .base import GroupMarks, Layout, StoredSetting
from .item_cells import ItemCells
from .long import LONG
from .sparse import SPARSE
from .wide import WIDE

#: every layout, by name, in the order the help lists them
LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in (WIDE, SPARSE, LONG)}
#: the ``layout`` value that lets :func:`choose` decide
AUTO = "auto"
#: ``auto`` stores crowd data long: more annotators than this, a few per document
LONG_ABOVE = 32
#: ``auto`` stores a setting sparse when its dense matrix would have more rows than this (every
#: unit of every group's documents × layers; the bundled examples stay wide)
SPARSE_ABOVE_ROWS = 20_000_000
#: the wide layout is refused for a group whose matrix would hold more cells (units × annotators)
MAX_WIDE_CELLS = 250_000_000


def names(*, items: bool = False) -> tuple[str, ...]:
    """The layouts' names (``items``: only those that can hold item labels)."""
    return tuple(name for name, layout in LAYOUTS.items() if not items or layout.items_dataset is not None)


def get(name: str) -> Layout:
    """The layout called ``name``."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise ConfigError(f"unknown layout {name!r}; choose from {', '.join((AUTO, *LAYOUTS))}") from None


def choose(requested: str, *, annotators: int, dense_rows: int) -> Layout:
    """The layout of a span run: ``requested``, or for ``auto`` long above :data:`LONG_ABOVE` annotators,
    sparse when the largest setting's dense matrix would exceed :data:`SPARSE_ABOVE_ROWS` rows, else wide."""
    if requested != AUTO:
        return get(requested)
    if annotators > LONG_ABOVE:
        return LONG
    return SPARSE if dense_rows > SPARSE_ABOVE_ROWS else WIDE


def choose_items(requested: tuple[str, ...], *, annotators: int, items: int, cells: int, clash: bool) -> list[Layout]:
    """The layouts of an item run: ``requested``, or for ``auto`` long when a wide matrix would be
    mostly empty (more than :data:`LONG_ABOVE` annotators, fewer than half of them per item: a crowd
    table), too big (more than :data:`MAX_WIDE_CELLS` cells) or an annotator takes a reserved column
    name (``clash``); else wide. ``items`` counts the rows of every group, ``cells`` the labels kept."""
    if requested != (AUTO,):
        return [get(name) for name in requested]
    dense = items * annotators
    if clash or dense > MAX_WIDE_CELLS or (annotators > LONG_ABOVE and 2 * cells < dense):
        return [LONG]
    return [WIDE]


def refuse_too_wide_items(chosen: list[Layout], *, annotators: int, items: int) -> None:
    """Refuse a columnar item matrix of more than :data:`MAX_WIDE_CELLS` cells (items × annotators)."""
    cells = items * annotators
    for layout in chosen:
        if layout.columnar and cells > MAX_WIDE_CELLS:
            raise RunError(
                f"a {layout.name} item matrix would hold {cells:,} cells ({items:,} items × {annotators:,} annotators), "
                f"more than {MAX_WIDE_CELLS:,}; use layouts = [\"{LONG.name}\"] (or [\"{AUTO}\"]): a row per label"
            )


def refuse_too_wide(layout: Layout, cells: dict[tuple[str, str], int], annotators: int) -> None:
    """Refuse a columnar dense matrix (wide) whose largest group would not fit in memory: ``cells`` is
    units × annotators per (unit type, group)."""
    if not layout.columnar or layout.implicit_rows:
        return
    for (unit, group), n in cells.items():
        if n > MAX_WIDE_CELLS:
            raise RunError(
                f"a {layout.name} matrix of group {group!r} would hold {n:,} cells ({unit} units × {annotators:,} "
                f"annotators), more than {MAX_WIDE_CELLS:,}; use layout \"{LONG.name}\" (or \"{AUTO}\"): a row per "
                "unit and annotator who has the document"
            )


__all__ = [
    "AUTO",
    "LAYOUTS",
    "LONG",
    "LONG_ABOVE",
    "MAX_WIDE_CELLS",
    "SPARSE",
    "SPARSE_ABOVE_ROWS",
    "WIDE",
    "GroupMarks",
    "ItemCells",
    "Layout",
    "StoredSetting",
    "choose",
    "choose_items",
    "get",
    "names",
    "refuse_too_wide",
    "refuse_too_wide_items",
]
