"""The tables of a study file other than [input]: their keys, types, defaults and one line of help each.

``unitize init`` writes a study file from them, every key becomes a flag, and
:mod:`unitize.config` checks a study against them.
"""

from __future__ import annotations

from typing import get_args

from .. import layouts
from ..units.unitizers import Approach, Discontinuous, Mode
from .options import Option

UNITS = ("char", "word")
APPROACHES: tuple[Approach, ...] = get_args(Approach)
MODES: tuple[Mode, ...] = get_args(Mode)
DISCONTINUOUS: tuple[Discontinuous, ...] = get_args(Discontinuous)
LAYERS_FROM = ("layer", "label")
LAYOUTS = (layouts.AUTO, *layouts.names())
#: [unitize] assignment: who annotates which document
ASSIGNMENT_AUTO, ASSIGNMENT_ALL, ASSIGNMENT_PER_DOCUMENT = "auto", "all", "per-document"
ASSIGNMENTS = (ASSIGNMENT_AUTO, ASSIGNMENT_ALL, ASSIGNMENT_PER_DOCUMENT)
#: ``assignment = "auto"`` treats a study with more annotators than this as crowd data (per document)
CROWD_ABOVE = 32

#: [input] keys that hold paths, resolved against the config file's directory
PATH_KEYS = ("annotations", "texts", "parses")


#: the [unitize] table: how annotations become units
UNITIZE_OPTIONS: dict[str, Option] = {
    "units": Option("list", list(UNITS), "coding units: char (every character, spaces too) and/or word (tokens)", choices=UNITS),
    "approaches": Option(
        "list", list(APPROACHES), "interval (every unit of a span is 1) and/or boundary (only its first and last units)", choices=APPROACHES
    ),
    "layers": Option(
        "list",
        ["Arg1", "Arg2"],
        "the layers (annotated elements) to unitize, one matrix each; span-tool formats: every layer found",
        example=["Arg1", "Arg2"],
    ),
    "modes": Option(
        "list",
        ["separate"],
        "separate (a 0/1 matrix per layer), combined (bit mask of the layers: Arg1=1, Arg2=2, both=3), labels (the span's label)",
        choices=MODES,
    ),
    "tokenizer": Option("str", "spacy:xx", "word units: spacy:<lang> (e.g. spacy:en), regex, whitespace, or given (the file's own tokens)"),
    "discontinuous": Option(
        "str", "extend", "an element of several fragments: extend (one segment, gap filled), keep (each fragment), drop (left out)", choices=DISCONTINUOUS
    ),
    "keep_missing": Option("bool", False, "keep documents an annotator has no file for (null column) instead of excluding them"),
    "keep_mismatched": Option("bool", False, "keep documents whose annotators have different relation counts instead of excluding them"),
    "layers_from": Option("str", "layer", "label: every span label is its own layer (a 0/1 matrix per label)", choices=LAYERS_FROM),
    "layout": Option(
        "str", layouts.AUTO, "how unit matrices are stored (storage only: the values are the same): "
        + ", ".join(f"{layout.name} ({layout.help})" for layout in layouts.LAYOUTS.values())
        + f", {layouts.AUTO} (long above {layouts.LONG_ABOVE} annotators, sparse for large matrices, else wide)", choices=LAYOUTS
    ),
    "assignment": Option(
        "str", ASSIGNMENT_AUTO, "who annotates which document: all (every annotator every document; one without a file "
        "is missing: RAT's rule, see keep_missing), per-document (each document its own annotators, as a crowd roster "
        f"assigns them: the others are simply absent), auto (per-document with a roster or above {CROWD_ABOVE} annotators)",
        choices=ASSIGNMENTS,
    ),
}
#: the [output] table
OUTPUT_OPTIONS: dict[str, Option] = {
    "dir": Option("path", None, "the output directory (or --out)", example="out"),
    "partition_units": Option("int", None, "character units per work partition (<folder>/setting=<name>/part-<k>.parquet); default 1,048,576", example=1048576),
}
#: the [run] table: how the run is carried out, never what it computes
RUN_OPTIONS: dict[str, Option] = {
    "executor": Option("str", "local", "where the work runs: local, processes[:N] (N processes, default the cores), "
                       "dask[:ADDRESS] (a Dask scheduler, or a local cluster); or --executor", example="processes:2"),
}
#: the [items] table of flat labels (format labels); ITEM_GROUP_OPTIONS are the keys of each [items.groups.<group>]
ITEMS_OPTIONS: dict[str, Option] = {
    "layouts": Option("list", [layouts.AUTO], "item matrices to write: " + " and/or ".join(
        f"{name} ({layouts.get(name).help})" for name in layouts.names(items=True))
        + f", or {layouts.AUTO} alone (long when more than {layouts.LONG_ABOVE} annotators label fewer than half of"
        " the items each, or the wide matrix would be too big; else wide)",
        choices=(layouts.AUTO, *layouts.names(items=True))),
    "complete": Option("bool", False, "keep only the items every annotator labelled"),
    "strip": Option("bool", False, "for every group: trim spaces around labels"),
    "casefold": Option("bool", False, "for every group: compare labels case-insensitively"),
    "map": Option("table", None, "for every group: rename labels before comparing", example={"yes": "Y", "no": "N"}),
    "groups": Option("toml", None, "a [items.groups.<group>] table per group (label column)"),
}
ITEM_GROUP_OPTIONS: dict[str, Option] = {
    "values": Option("list", None, "the declared labels; any other label is an error (label-undeclared)"),
    "level": Option("str", "nominal", "level of measurement: nominal, ordinal or interval", choices=("nominal", "ordinal", "interval")),
    "applies_when": Option("toml", None, "a conditional level: asked only when another group has this answer", example={"level": "offensive", "value": "OFF"}),
    "reach": Option("str", "any", "with applies_when: items some annotator reached (any) or every annotator reached (every)", choices=("any", "every")),
    "multi": Option("str", None, "several labels in one cell: set (a+b) or split (one 0/1 group per label)", choices=("set", "split")),
    "separator": Option("str", ",", "with multi: what separates the labels of a cell"),
    "strip": Option("bool", False, "trim spaces around labels"),
    "casefold": Option("bool", False, "compare labels case-insensitively"),
    "map": Option("table", None, "rename labels before comparing", example={"yes": "Y"}),
}
#: the [roles] table: who is a human and who a candidate (a model) — for ``unitize agree`` (written to the manifest)
ROLES_OPTIONS: dict[str, Option] = {
    "humans": Option("list", None, "the human annotators (default: every annotator not a candidate)", example=["ana", "ben", "chen"]),
    "candidates": Option("list", None, "the candidates (models): an annotator, FAMILY=A+B (runs of one model), or a range "
                         "NAME1..5 (the family NAME's runs NAME1 … NAME5)", example=["gpt-run1..2"]),
}
