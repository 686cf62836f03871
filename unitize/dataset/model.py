"""What the consumers of an output directory speak of: settings (datasets), matrices and the data error."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..layouts import Layout

LEVELS = ("nominal", "ordinal", "interval")

@dataclass(frozen=True)
class Setting:
    """One unit-matrix dataset of an output directory: ``<folder>/setting=<name>/``, the folder ``units``,
    ``labels`` or ``long`` (format 2 ``units/setting=<name>/``; format 1 ``units/<name>/``)."""

    name: str
    path: Path  # its first part (the schema and metadata of every part)
    kind: str  # "units" or "items"
    layout: Layout  # how the matrices are stored (unitize.layouts); a consumer asks its traits
    value: str  # "binary", "bitmask", "label"
    unit: str | None  # "char", "word"; None for items
    approach: str | None
    mode: str | None
    annotators: tuple[str, ...]
    levels: dict[str, str] = field(default_factory=dict)
    layer_bits: dict[str, int] = field(default_factory=dict)
    #: item data: the value meaning "this level did not apply to the annotator" (measured as missing)
    not_applicable: str | None = None
    #: label data: the value meaning "not annotated" (``O``)
    not_annotated: str | None = None
    #: every part of the dataset, in order (formats 2 and 3: part-00000 …; format 1: part-0 alone)
    parts: tuple[Path, ...] = ()
    #: sparse layout: the layers of the setting, every one present for every document of the universe
    layers: tuple[str, ...] = ()

    def level(self, group: str) -> str:
        """Level of measurement for Krippendorff's alpha: declared for items, nominal otherwise."""
        return self.levels.get(group, "nominal") if self.kind == "items" else "nominal"


@dataclass
class Matrix:
    """One (setting, group, layer) matrix: rows are units (or items), columns annotators."""

    setting: Setting
    group: str
    layer: str
    annotators: list[str]
    values: np.ndarray  # float64 (rows, annotators); NaN = annotator missing
    categories: list[str] | None  # code -> label for label data; None when values are numbers
    docs: list[str]  # documents of the group's universe (empty for items)
    row_doc: np.ndarray  # per row: index into docs (-1 for items)
    row_unit: np.ndarray  # per row: unit index within the document (item index for items)
    row_names: list[str] | None = None  # item names for items
    continuum: Matrix | None = None  # layers laid end to end: the one-layer matrix whose units are the continuum
    crowd: int | None = None  # crowd data (see _value_counts): the number of annotators; values is then empty
    counts: np.ndarray | None = None  # crowd data: rows × values, how many annotators gave each value
    value_domain: np.ndarray | None = None  # crowd data: the value (or category code) of each counts column

    @property
    def binary(self) -> bool:
        return self.setting.value == "binary" and self.categories is None

    def value_counts(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Crowd data: ``(counts, value_domain)``; None for a matrix of values (a column per annotator)."""
        if self.counts is None or self.value_domain is None:
            return None
        return self.counts, self.value_domain

    def item_names(self) -> list[str]:
        """Stable names of the rows: ``group/doc/unit`` (units) or ``group/item`` (items)."""
        if self.row_names is not None:
            return [f"{self.group}/{n}" for n in self.row_names]
        return [f"{self.group}/{self.docs[d]}/{u}" for d, u in zip(self.row_doc.tolist(), self.row_unit.tolist())]

    def label(self, code: float) -> str:
        """The written form of a value."""
        if self.categories is not None:
            return self.categories[int(code)]
        return str(int(code)) if float(code).is_integer() else repr(float(code))

    def doc_units(self) -> np.ndarray:
        """Units per document of the universe, in ``docs`` order."""
        if self.continuum is not None:
            return self.continuum.doc_units()
        return np.bincount(self.row_doc, minlength=len(self.docs)) if self.docs else np.zeros(0, dtype=np.int64)

    def doc_presence(self) -> np.ndarray:
        """(documents, annotators) bool: the annotator has data for the document."""
        out = np.zeros((len(self.docs), len(self.annotators)), dtype=bool)
        if self.docs and self.values.size:
            for k in range(len(self.annotators)):
                present = ~np.isnan(self.values[:, k])
                out[:, k] = np.bincount(self.row_doc, weights=present, minlength=len(self.docs)) > 0
        return out
