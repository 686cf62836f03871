"""The ``[items]`` table of a flat-label study, parsed and checked (no I/O).

:func:`parse_options` turns the table into :class:`ItemOptions`: the output
layouts, the item-set choice (``complete``) and a :class:`GroupSpec` per group —
level of measurement, declared values, conditional application, multi-label
handling and value normalisation. Errors are :class:`~unitize.config.ConfigError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import layouts as _layouts
from ..config import ITEM_GROUP_OPTIONS, ITEMS_OPTIONS, ConfigError

#: the value of a cell whose conditional group does not apply to that annotator
NOT_APPLICABLE = "#n/a"
#: the value of a split multi-label group's cell: label chosen / labelled without it
SPLIT_VALUES = ("0", "1")
LEVELS = ("nominal", "ordinal", "interval")
#: the layouts an item matrix can be written in (unitize.layouts), and ``auto``
LAYOUTS = (_layouts.AUTO, *_layouts.names(items=True))
REACH = ("any", "every")
MULTI = ("set", "split")
#: in a multi-label value the labels are sorted and joined with this
SET_JOIN = "+"
#: between a split group's name and its label
SPLIT_JOIN = ":"


@dataclass(frozen=True)
class GroupSpec:
    """How the values of one group (question, scheme level) are read and kept."""

    level: str = "nominal"
    values: tuple[str, ...] | None = None
    applies_when: tuple[str, tuple[str, ...]] | None = None
    reach: str = "any"
    multi: str | None = None
    separator: str = ","
    mapping: dict[str, str] = field(default_factory=dict)
    casefold: bool = False
    strip: bool = False


@dataclass(frozen=True)
class ItemOptions:
    """The ``[items]`` table, parsed: output layouts, item-set choice, per-group specs."""

    layouts: tuple[str, ...] = (_layouts.AUTO,)
    complete: bool = False
    groups: dict[str, GroupSpec] = field(default_factory=dict)
    default: GroupSpec = field(default_factory=GroupSpec)

    def spec(self, group: str) -> GroupSpec:
        return self.groups.get(group, self.default)


_GROUP_KEYS = set(ITEM_GROUP_OPTIONS)
_ITEMS_KEYS = set(ITEMS_OPTIONS)


def _bool(table: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where} {key} must be true or false, not {value!r}")
    return value


def _mapping(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(f"{where} map must be a table of strings (\"raw value\" = \"value\")")
    return dict(value)


def _group_spec(table: Any, where: str, default: GroupSpec) -> GroupSpec:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = set(table) - _GROUP_KEYS
    if unknown:
        raise ConfigError(f"unknown key(s) in {where}: {', '.join(sorted(unknown))}; known: {', '.join(sorted(_GROUP_KEYS))}")
    level = table.get("level", "nominal")
    if level not in LEVELS:
        raise ConfigError(f"{where} level must be one of {', '.join(LEVELS)}, not {level!r}")
    values = table.get("values")
    if values is not None:
        if not isinstance(values, list) or not values or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
            raise ConfigError(f"{where} values must be a non-empty list of labels")
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            raise ConfigError(f"{where} values must be labels or finite numbers, not {[v for v in values if isinstance(v, float) and not math.isfinite(v)]!r}")
        values = tuple(str(v) for v in values)
        if len(set(values)) != len(values):
            raise ConfigError(f"{where} values lists a label twice")
    applies = table.get("applies_when")
    if applies is not None:
        if not isinstance(applies, dict) or set(applies) != {"level", "value"} or not isinstance(applies["level"], str):
            raise ConfigError(f"{where} applies_when must be {{level = \"<group>\", value = \"<label>\" or [labels]}}")
        opening = applies["value"] if isinstance(applies["value"], list) else [applies["value"]]
        if not opening or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in opening):
            raise ConfigError(f"{where} applies_when value must be a label or a list of labels")
        applies = (applies["level"], tuple(str(v) for v in opening))
    reach = table.get("reach", "any")
    if reach not in REACH:
        raise ConfigError(f"{where} reach must be one of {', '.join(REACH)}, not {reach!r}")
    if "reach" in table and applies is None:
        raise ConfigError(f"{where} reach needs applies_when (it chooses the items of a conditional group)")
    multi = table.get("multi")
    if multi is not None and multi not in MULTI:
        raise ConfigError(f"{where} multi must be one of {', '.join(MULTI)}, not {multi!r}")
    if multi is not None and level != "nominal":
        raise ConfigError(f"{where}: multi-label groups are nominal (sets of labels), not {level}")
    separator = table.get("separator", ",")
    if not isinstance(separator, str) or not separator:
        raise ConfigError(f"{where} separator must be a non-empty string")
    return GroupSpec(
        level=level,
        values=values,
        applies_when=applies,
        reach=reach,
        multi=multi,
        separator=separator,
        mapping=_mapping(table["map"], where) if "map" in table else dict(default.mapping),
        casefold=_bool(table, "casefold", where, default.casefold),
        strip=_bool(table, "strip", where, default.strip),
    )


def parse_options(table: dict[str, Any] | None) -> ItemOptions:
    """The ``[items]`` configuration table → :class:`ItemOptions` (raises :class:`ConfigError`)."""
    table = dict(table or {})
    unknown = set(table) - _ITEMS_KEYS
    if unknown:
        raise ConfigError(f"unknown key(s) in [items]: {', '.join(sorted(unknown))}; known: {', '.join(sorted(_ITEMS_KEYS))}")
    layouts = table.get("layouts", [_layouts.AUTO])
    if isinstance(layouts, str):
        layouts = [layouts]
    if not isinstance(layouts, list) or not layouts or not set(layouts) <= set(LAYOUTS) or len(set(layouts)) != len(layouts):
        raise ConfigError(f"[items] layouts must be a list of distinct values from {', '.join(LAYOUTS)}, not {layouts!r}")
    if _layouts.AUTO in layouts and len(layouts) > 1:
        raise ConfigError(f'[items] layouts: "{_layouts.AUTO}" decides alone; give it alone or name the layouts, not {layouts!r}')
    default = GroupSpec(
        mapping=_mapping(table["map"], "[items]") if "map" in table else {},
        casefold=_bool(table, "casefold", "[items]", False),
        strip=_bool(table, "strip", "[items]", False),
    )
    groups = table.get("groups", {})
    if not isinstance(groups, dict):
        raise ConfigError("[items] groups must be a table of [items.groups.<name>] tables")
    specs = {name: _group_spec(spec, f"[items.groups.{name}]", default) for name, spec in groups.items()}
    for name, spec in specs.items():
        if spec.applies_when and spec.applies_when[0] == name:
            raise ConfigError(f"[items.groups.{name}] applies_when points at the group itself")
    return ItemOptions(layouts=tuple(layouts), complete=_bool(table, "complete", "[items]", False), groups=specs, default=default)
