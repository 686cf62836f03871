"""Arrow schemas of the output tables, built from the JSON contracts in ``schemas/``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import pyarrow as pa

#: the output format this unitize writes (manifest ``format_version``); readers take 1 … FORMAT_VERSION.
#: 3: every matrix folder is one dataset of one schema (label settings in ``labels/``, the long item
#: matrix in ``long/``); 2: every setting in ``units/setting=<name>/``; 1: ``units/<name>/part-0.parquet``
FORMAT_VERSION = 3

#: the folders of an output directory holding matrix datasets (format 3), each Hive-partitioned by setting and
#: of one schema, so that every reader reads a folder whole: ``units`` (the 0/1 and bit-mask unit matrices,
#: the wide item matrix), ``labels`` (the unit matrices of labels mode: label strings), ``long`` (the long item matrix)
DATASETS = ("units", "labels", "long")

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


#: the results column of relations, which only discourse data has (:attr:`unitize.model.traits.FormatTraits.relations`)
RELATIONS = "relations"


def results_schema(relations: bool = True) -> pa.Schema:
    """Schema of ``unitize agree``'s results table (``agreement/results.parquet``); without ``relations`` (data
    whose records are not relations: span tools, item labels) it has no :data:`RELATIONS` column."""
    return pa.schema([f for f in _fields("results.arrow.json") if relations or f.name != RELATIONS])


def setting_name(unit: str, approach: str, mode: str) -> str:
    """The name of a setting's unit-matrix dataset, ``<folder>/setting=<unit>-<approach>[-<mode>]/`` (:func:`dataset_folder`)."""
    return f"{unit}-{approach}" + ("" if mode == "separate" else f"-{mode}")


def dataset_folder(setting: str) -> str:
    """The folder of :data:`DATASETS` a setting's matrices go in: ``labels`` for a labels-mode setting
    (``<unit>-<approach>-labels``: label strings where the others hold 0/1), ``long`` for the long item
    matrix (``items-long``: a row per cell where the wide one has a column per annotator), else ``units``."""
    if setting.endswith("-labels"):
        return "labels"
    return "long" if setting == "items-long" else "units"


def setting_path(setting: str) -> str:
    """A setting's dataset folder relative to the output directory, ``<folder>/setting=<name>``."""
    return f"{dataset_folder(setting)}/setting={setting}"
