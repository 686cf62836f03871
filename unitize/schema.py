"""Arrow schemas of the output tables, built from the JSON contracts in ``schemas/``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import pyarrow as pa

#: the output format this unitize writes (manifest ``format_version``); readers take 1 … FORMAT_VERSION
FORMAT_VERSION = 2

_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "double": pa.float64(),
    "uint8": pa.uint8(),
    "bool": pa.bool_(),
    "dictionary<string>": pa.dictionary(pa.int32(), pa.string()),
    "list<string>": pa.list_(pa.string()),
}


@cache
def contract(name: str) -> dict[str, Any]:
    """The JSON contract ``schemas/<name>`` shipped with the package."""
    return json.loads(resources.files("unitize").joinpath("schemas", name).read_text(encoding="utf-8"))


def arrow_type(name: str) -> pa.DataType:
    return _TYPES[name]


def _fields(name: str) -> list[pa.Field]:
    return [pa.field(f["name"], _TYPES[f["type"]], nullable=f["nullable"]) for f in contract(name)["fields"]]


def units_schema(annotators: list[str], metadata: dict[str, Any], *, columnar: bool = True) -> pa.Schema:
    """Schema of a unit matrix: one column per annotator (``columnar``), or an annotator and a value column.

    ``metadata["value"]`` (default ``"binary"``) picks the type of the values.
    """
    spec = contract("units.arrow.json")
    value_type = _TYPES[spec["value_types"][metadata.get("value", "binary")]]
    if columnar:
        extra = [pa.field(a, value_type, nullable=spec["annotator_columns"]["nullable"]) for a in annotators]
    else:
        extra = [
            pa.field(f["name"], value_type if f["name"] == "value" else _TYPES[f["type"]], nullable=f["nullable"])
            for f in spec["long_columns"]
        ]
    fields = _fields("units.arrow.json") + extra
    return pa.schema(fields, metadata={"unitize": json.dumps(metadata, sort_keys=True, ensure_ascii=False)})


def segments_schema() -> pa.Schema:
    return pa.schema(_fields("segments.arrow.json"))


def documents_schema() -> pa.Schema:
    return pa.schema(_fields("documents.arrow.json"))


def universe_schema() -> pa.Schema:
    return pa.schema(_fields("universe.arrow.json"))


def tokens_schema() -> pa.Schema:
    return pa.schema(_fields("tokens.arrow.json"))


def items_schema(layout: str, annotators: list[str], metadata: dict[str, Any]) -> pa.Schema:
    """Schema of an item matrix (flat labels) in a layout of the contract (``schemas/items.arrow.json``)."""
    spec = contract("items.arrow.json")["layouts"][layout]
    fields = [pa.field(f["name"], _TYPES[f["type"]], nullable=f["nullable"]) for f in spec["fields"]]
    if "annotator_columns" in spec:
        column = spec["annotator_columns"]
        fields += [pa.field(a, _TYPES[column["type"]], nullable=column["nullable"]) for a in annotators]
    return pa.schema(fields, metadata={"unitize": json.dumps(metadata, sort_keys=True, ensure_ascii=False)})


def adjudication_schema(table: str) -> pa.Schema:
    """Schema of a table of ``OUT/adjudication`` (``units``, ``items``, ``spans``; ``schemas/adjudication.arrow.json``)."""
    spec = contract("adjudication.arrow.json")["tables"][table]
    return pa.schema([pa.field(f["name"], _TYPES[f["type"]], nullable=f["nullable"]) for f in spec["fields"]])


def results_schema() -> pa.Schema:
    """Schema of ``unitize agree``'s results table (``agreement/results.parquet``)."""
    return pa.schema(_fields("results.arrow.json"))


def setting_name(unit: str, approach: str, mode: str) -> str:
    """The name of a setting's unit-matrix dataset, ``units/setting=<unit>-<approach>[-<mode>]/``."""
    return f"{unit}-{approach}" + ("" if mode == "separate" else f"-{mode}")
