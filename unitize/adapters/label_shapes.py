"""How one record of a labels file becomes cells: the shapes of :mod:`unitize.adapters.labels`, record by record.

A :class:`Mapping` holds the ``[input]`` options that say where the item, the annotator and the
labels are in a record; :meth:`Mapping.cells` turns a record into ``(group, annotator, label)``
cells, :meth:`Mapping.problem` says why a record cannot be read (or ``None``). Values are text,
exactly as written; empty cells and the ``missing`` tokens are *not labelled*.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from . import AdapterError

Cell = tuple[str, str, str | None]


class Malformed(ValueError):
    """A record whose cells cannot be read (the message says why)."""


def text_of(value: Any) -> str | None:
    """A cell as text, or ``None`` for an empty one. Lists are label sets."""
    if type(value) is str:
        return value if value.strip() else None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (list, tuple)):
        parts = sorted({p for p in (text_of(v) for v in value) if p is not None})
        return "+".join(parts) if parts else None
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


def _split_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    if value is None:
        return []
    return [v.strip() for v in str(value).split(",")]


@dataclass(frozen=True)
class Mapping:
    """Where a record holds its item id, annotator and labels, for one shape."""

    shape: str
    item: str
    annotator: str | None
    labels: list[str] | None
    annotator_columns: list[str] | None
    ignore: list[str] | None
    group: str
    bundles: dict[str, list[str]] | None
    missing: frozenset[str]
    normalize_ids: bool
    max_label_chars: int

    def item_id(self, value: Any) -> str | None:
        """An item id as text (``normalize_ids``: stripped, leading zeros of a number dropped), ``None`` if empty."""
        text = text_of(value)
        if text is None:
            return None
        if self.normalize_ids:
            text = text.strip()
            if text.isascii() and text.isdigit():
                text = text.lstrip("0") or "0"
        return text

    def label(self, value: Any) -> str | None:
        text = text_of(value)
        return None if text is None or text.strip() in self.missing else text

    def needed(self, file_annotator: str | None) -> list[str]:
        """The columns a file's header must have."""
        annotator = self.annotator if not file_annotator else None
        needed = [self.item]
        if self.shape in ("long", "lists", "per-annotator") and annotator:
            needed.append(annotator)
        needed += list(self.labels or []) if self.shape != "wide" else list(self.annotator_columns or [])
        for features in (self.bundles or {}).values():
            needed += features
        return list(dict.fromkeys(needed))

    def wide_columns(self, name: str, header: list[str] | None, records: Any) -> list[str] | None:
        """The annotator columns of a wide file (``None`` for the other shapes)."""
        if self.shape != "wide":
            return None
        drop = {self.item, *(self.ignore or [])}
        columns = header if header is not None else list(dict.fromkeys(k for _, r in records for k in r))  # JSON: a list
        found = self.annotator_columns or [c for c in columns if c not in drop and not c.startswith("\0")]
        if not found:
            raise AdapterError(f"{name}: no annotator columns; set [input] annotator_columns")
        if header is not None:
            require(name, header, found)
        return found

    def problem(self, record: dict[str, Any], header: list[str] | None, iid: str | None) -> str | None:
        """Why a record cannot be read (its item id ``iid`` already taken), or ``None``."""
        if "\0bad" in record:
            return record["\0bad"]
        if "\0width" in record:
            width = record["\0width"]
            return f"{width} fields where the header has {len(header or [])}"
        if header is None:  # JSON: a label key may be absent (not labelled), ids may not
            absent = [c for c in (self.item, self.annotator if self.shape in ("long", "lists") else None) if c and c not in record]
            if absent:
                return f"field(s) {', '.join(absent)} missing"
        if iid is None:
            return f"the item field {self.item!r} is empty"
        if len(iid) > self.max_label_chars:
            return f"the item id has {len(iid):,} characters, more than max_label_chars = {self.max_label_chars:,}"
        return None

    def cells(self, record: dict[str, Any], file_annotator: str | None, wide_columns: list[str] | None) -> list[Cell]:
        """(group, annotator, label) of every cell of one record; raises :class:`Malformed`."""
        if self.shape == "wide":
            return [(self.group, column, self.label(record.get(column))) for column in wide_columns or []]
        if self.shape in ("long", "per-annotator"):
            return self._one_annotator(record, file_annotator)
        out = []
        for column in self.labels or []:
            for who, v in self._pairs(record, column):
                if text_of(who) is None:
                    raise Malformed(f"an empty annotator name in {self.annotator or column!r}")
                out.append((column, str(who), self.label(v)))
        return out

    def _one_annotator(self, record: dict[str, Any], file_annotator: str | None) -> list[Cell]:
        who = file_annotator or (text_of(record.get(self.annotator)) if self.annotator else None)
        if who is None:
            raise Malformed(f"the annotator field {self.annotator!r} is empty")
        out: list[Cell] = [(column, who, self.label(record.get(column))) for column in self.labels or []]
        for name, features in (self.bundles or {}).items():
            parts = [(f, self.label(record.get(f))) for f in sorted(features)]
            out.append((name, who, "+".join(f"{f}={v}" for f, v in parts if v is not None) or None))
        return out

    def _pairs(self, record: dict[str, Any], column: str) -> list[tuple[Any, Any]]:
        """(annotator, label) pairs of a lists or dict record's label column."""
        value = record.get(column)
        if self.shape == "dict":
            if value is not None and not isinstance(value, dict):
                raise Malformed(f"field {column!r} is not an {{annotator: label}} object")
            return list((value or {}).items())
        names, values = _split_list(record.get(self.annotator) if self.annotator else None), _split_list(value)
        if len(names) != len(values):
            raise Malformed(f"{len(names)} annotators in {self.annotator!r} but {len(values)} labels in {column!r}")
        return list(zip(names, values))


def require(name: str, header: list[str], needed: list[str]) -> None:
    """Refuse a header that lacks a needed column or has one twice."""
    twice = sorted({c for c in needed if header.count(c) > 1})
    if twice:
        raise AdapterError(f"{name}: column(s) {', '.join(map(repr, twice))} appear more than once in the header; rename them")
    absent = [c for c in needed if c not in header]
    if absent:
        raise AdapterError(
            f"{name}: column(s) {', '.join(map(repr, absent))} not found; the file has {', '.join(map(repr, header)) or 'no columns'}. "
            "Fix the column mapping in [input] (item, annotator, labels, annotator_columns, bundles)"
        )
