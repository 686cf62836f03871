"""What a layout is: how a unit or item matrix is stored, never what it holds.

A layout writes a group's matrices (:meth:`Layout.unit_tables`, :meth:`Layout.item_table`),
says what its tables look like (:meth:`Layout.units_schema`, :meth:`Layout.metadata`); its module
holds its reading half too (how its stored rows become a column per annotator). What a
unit's value is, and which annotator is missing where, comes from the study (the run's
validation), so every layout of the same run gives the same agreement.

Its traits say what a consumer may rely on: ``columnar`` (a column per annotator),
``implicit_rows`` (units nobody marked and nobody is missing on are not stored: a reader counts
or restores them), ``dense_frame`` (the writer needs the per-row columns of every unit),
``items`` (it can hold item labels, under the dataset name ``items_dataset``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from ..schema import items_schema, units_schema
from ..units.unitizers import Approach, Mode, UnitSpace
from .frames import Frame
from .item_cells import ItemCells

#: per annotator, a layer's merged segments as inclusive frame rows and their label codes
AnnotatorSegments = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass
class GroupMarks:
    """One group's merged segments in one unit space: what a layout writes its matrices from.

    ``segments(layer, labelled)`` gives per annotator (in ``annotators`` order) the layer's
    segments as ``(r0, r1, label)`` frame rows (inclusive) of the frame's documents;
    ``missing()`` per annotator a mask over ``frame.docs`` where the annotator is missing (null);
    ``present[doc]`` the indices of the annotators with a submission for a document.
    """

    group: str
    space: UnitSpace
    frame: Frame
    annotators: list[str]
    labels: list[str]  # labels mode: bit i of a label code is labels[i]
    layer_order: list[str]  # combined mode: bit i of a mask is layer_order[i]
    segments: Callable[[str, bool], AnnotatorSegments]
    missing: Callable[[], dict[str, np.ndarray]]
    present: dict[str, list[int]]


class StoredSetting(Protocol):
    """What a layout's reading half needs of a setting (:class:`unitize.dataset.Setting` has it), read only."""

    @property
    def unit(self) -> str | None: ...
    @property
    def value(self) -> str: ...
    @property
    def annotators(self) -> tuple[str, ...]: ...
    @property
    def not_annotated(self) -> str | None: ...


class Layout(ABC):
    """One way to store a matrix (see the module docstring)."""

    name: str
    help: str
    columnar: bool
    implicit_rows: bool = False
    dense_frame: bool = True
    items_dataset: str | None = None  # the item matrices' dataset name; None: item labels are not written so

    def __repr__(self) -> str:
        return f"<layout {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:  # one instance per layout, also across processes
        from . import get

        return get, (self.name,)

    def items_name(self) -> str:
        """The item matrices' dataset name (``items_dataset``); an error for a layout that holds no item labels."""
        if self.items_dataset is None:
            raise NotImplementedError(f"the {self.name} layout holds no item labels")
        return self.items_dataset

    # -- writing --

    @abstractmethod
    def unit_tables(self, g: GroupMarks, schema: pa.Schema, approach: Approach, mode: Mode, layers: Sequence[str]) -> Iterator[pa.Table]:
        """A group's unit-matrix tables of one setting: per layer, or one of every layer in combined mode."""

    def metadata(self, layers: Sequence[str]) -> dict[str, Any]:
        """What the layout adds to a unit matrix's ``unitize`` schema metadata (beyond its name)."""
        return {}

    def units_schema(self, annotators: list[str], metadata: dict[str, Any]) -> pa.Schema:
        """The schema of a unit matrix stored in this layout."""
        return units_schema(annotators, {**metadata, "layout": self.name}, columnar=self.columnar)

    def items_schema(self, annotators: list[str], metadata: dict[str, Any]) -> pa.Schema:
        """The schema of an item matrix stored in this layout."""
        return items_schema(self.name, annotators, {**metadata, "layout": self.name})

    def item_table(self, group: str, cells: ItemCells, annotators: list[str], schema: pa.Schema) -> pa.Table:
        """Some consecutive rows of one group's item matrix (all of them, or a part's)."""
        raise NotImplementedError(f"the {self.name} layout holds no item labels")

    def item_rows(self, cells: ItemCells) -> int:
        """The rows :meth:`item_table` writes of ``cells``: one per item (columnar) or one per cell."""
        return cells.n_items if self.columnar else cells.n_cells


def label_column(values: pa.Array) -> pa.DictionaryArray:
    """Item labels as a dictionary column (dictionary in order of first occurrence; null stays null)."""
    return values.dictionary_encode()
