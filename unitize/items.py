"""Item matrices: flat labels → one row per (group, item), one value per annotator.

Pure functions over :class:`~unitize.model.ItemLabel` records (no I/O):

- :func:`parse_options` — the ``[items]`` table → :class:`ItemOptions`;
- :func:`build` — labels + annotators + options → :class:`ItemResult` (normalised
  values, duplicates and conflicts resolved, conditional levels applied, item
  sets chosen, findings, record accounting);
- :func:`wide_table` / :func:`long_table` — a group's matrix as an Arrow table.

Cell states, never conflated: a value; ``None`` (the annotator gave no label, or
never saw the item); :data:`NOT_APPLICABLE` (a conditional group the annotator's
upper-level answer did not open).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .config import ConfigError
from .model import Finding, ItemLabel
from .report import finding

#: the value of a cell whose conditional group does not apply to that annotator
NOT_APPLICABLE = "#n/a"
#: the value of a split multi-label group's cell: label chosen / labelled without it
SPLIT_VALUES = ("0", "1")
LEVELS = ("nominal", "ordinal", "interval")
LAYOUTS = ("wide", "long")
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

    layouts: tuple[str, ...] = ("wide",)
    complete: bool = False
    groups: dict[str, GroupSpec] = field(default_factory=dict)
    default: GroupSpec = field(default_factory=GroupSpec)

    def spec(self, group: str) -> GroupSpec:
        return self.groups.get(group, self.default)


_GROUP_KEYS = {"level", "values", "applies_when", "reach", "multi", "separator", "map", "casefold", "strip"}
_ITEMS_KEYS = {"layouts", "complete", "groups", "map", "casefold", "strip"}


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
    layouts = table.get("layouts", ["wide"])
    if isinstance(layouts, str):
        layouts = [layouts]
    if not isinstance(layouts, list) or not layouts or not set(layouts) <= set(LAYOUTS) or len(set(layouts)) != len(layouts):
        raise ConfigError(f"[items] layouts must be a list of distinct values from {', '.join(LAYOUTS)}, not {layouts!r}")
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


# --- values ----------------------------------------------------------------------


def number_text(value: str) -> str | None:
    """The canonical text of a number (``"1.0"`` → ``"1"``, ``" 2.50"`` → ``"2.5"``), or ``None``."""
    try:
        number = float(value)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() else repr(number)


class _Invalid(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def _one(spec: GroupSpec, value: str) -> str | None:
    if spec.strip:
        value = value.strip()
    if spec.casefold:
        value = value.casefold()
    value = spec.mapping.get(value, value)
    if not value.strip():
        return None
    if spec.level != "nominal":
        number = number_text(value)
        if number is not None:
            value = number
        elif spec.level == "interval" or spec.values is None:
            raise _Invalid("label-not-numeric", f"{value!r} is not a number ({spec.level} level)")
    return value


def canonical(spec: GroupSpec, value: str | None) -> str | None:
    """A raw label as the group keeps it: trimmed, case-folded, mapped, numbers canonical, sets sorted.

    Raises ``_Invalid`` for a value the group cannot hold.
    """
    if value is None:
        return None
    if spec.multi:
        parts = [p for p in re.split("|".join(map(re.escape, {spec.separator, SET_JOIN})), value)]
        kept = sorted({c for c in (_one(spec, p) for p in parts) if c is not None})
        if spec.values is not None:
            bad = [c for c in kept if c not in spec.values]
            if bad:
                raise _Invalid("label-undeclared", f"{', '.join(map(repr, bad))} not among the declared values {', '.join(spec.values)}")
        return SET_JOIN.join(kept) or None
    result = _one(spec, value)
    if result is not None and spec.values is not None and result not in _declared(spec):
        raise _Invalid("label-undeclared", f"{result!r} is not among the declared values {', '.join(spec.values)}")
    return result


def _declared(spec: GroupSpec) -> tuple[str, ...]:
    if spec.values is None or spec.level == "nominal":
        return spec.values or ()
    return tuple(number_text(v) or v for v in spec.values)


def numbers(spec: GroupSpec, present: set[str]) -> tuple[dict[str, float], list[str]] | None:
    """For ordinal and interval groups: each value's number and the values in order.

    Numeric labels are their own number; declared non-numeric ordinal labels are
    numbered by their position in ``values`` (1, 2, …).
    """
    if spec.level == "nominal":
        return None
    declared = list(_declared(spec))
    out: dict[str, float] = {}
    for i, v in enumerate(declared):
        n = number_text(v)
        out[v] = float(n) if n is not None else float(i + 1)
    for v in present - set(out):
        out[v] = float(v)
    order = declared if declared and not all(number_text(v) is not None for v in declared) else sorted(out, key=out.__getitem__)
    return dict(sorted(out.items(), key=lambda kv: (kv[1], kv[0]))), order


def item_key(item: str) -> tuple:
    """Natural order of item ids: numbers by value (then as written), then other ids as text."""
    return (0, int(item), item) if item.isascii() and item.isdigit() else (1, 0, item)


# --- building ----------------------------------------------------------------------


@dataclass
class GroupMatrix:
    """One group's items and, per item, the cells of the annotators that have one.

    ``cells[i]`` maps an annotator to a value, ``None`` (a record without a label)
    or NOT_APPLICABLE; an annotator absent from it never saw the item. Sparse, so
    crowd data (thousands of annotators, a few per item) stay small.
    """

    name: str
    spec: GroupSpec
    items: list[str]
    cells: list[dict[str, str | None]]
    numbers: dict[str, float] | None = None
    order: list[str] | None = None
    split_of: str | None = None


@dataclass
class ItemResult:
    """Every group's matrix, the findings, and what became of every input record."""

    annotators: list[str]
    groups: list[GroupMatrix]
    findings: list[Finding]
    accounting: dict[str, Any]
    items_by_group: dict[str, dict[str, int]]


def _label_finding(code: str, rec: ItemLabel, message: str, action: str) -> Finding:
    return finding(code, message, action, file=rec.source, record=str(rec.line) if rec.line is not None else None, doc=rec.item, group=rec.group, annotator=rec.annotator)


def _topological(groups: list[str], options: ItemOptions) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(g: str, path: list[str]) -> None:
        if state.get(g) == 2:
            return
        if state.get(g) == 1:
            raise ConfigError(f"applies_when forms a cycle: {' -> '.join(path + [g])}")
        state[g] = 1
        parent = options.spec(g).applies_when
        if parent:
            visit(parent[0], path + [g])
        state[g] = 2
        order.append(g)

    for g in groups:
        visit(g, [])
    return order


def build(labels: list[ItemLabel], annotators: list[str], options: ItemOptions) -> ItemResult:
    """Item matrices of every group (sorted by name), items in natural order."""
    present = sorted({r.group for r in labels})
    known = set(present)
    for name, spec in options.groups.items():
        if name not in known:
            raise ConfigError(f"[items.groups.{name}] names a group the input does not have; its groups are: {', '.join(present) or '(none)'}")
        if spec.applies_when and spec.applies_when[0] not in known:
            raise ConfigError(
                f"[items.groups.{name}] applies_when level {spec.applies_when[0]!r} does not exist; groups are: {', '.join(present)}"
            )
    a_set = set(annotators)
    findings: list[Finding] = []
    fate: list[str | None] = [None] * len(labels)
    # group -> item -> annotator -> (value, record index or -1 for a conflict)
    cells: dict[str, dict[str, dict[str, tuple[str | None, int]]]] = {g: defaultdict(dict) for g in present}
    conflicts: dict[tuple[str, str, str], list[int]] = {}

    for i, rec in enumerate(labels):
        if rec.annotator not in a_set:
            fate[i] = "annotator_not_selected"
            continue
        spec = options.spec(rec.group)
        try:
            value = canonical(spec, rec.label)
        except _Invalid as exc:
            findings.append(_label_finding(exc.code, rec, f"label {rec.label!r}: {exc}", "cell left null; declare the value or map it in [items]"))
            fate[i] = "invalid_label"
            value = None
        row = cells[rec.group][rec.item]
        key = (rec.group, rec.item, rec.annotator)
        if rec.annotator not in row:
            row[rec.annotator] = (value, i)
            continue
        if key in conflicts:
            conflicts[key].append(i)
            continue
        first_value, first = row[rec.annotator]
        if first_value == value and (fate[i] is None or labels[first].label == rec.label):
            fate[i] = "duplicate"
            findings.append(_label_finding("duplicate-label", rec, f"item {rec.item!r} labelled {value!r} again (first at line {labels[first].line})", "kept once"))
            continue
        conflicts[key] = [first, i]
        row[rec.annotator] = (None, -1)
    for (group, item, annotator), members in conflicts.items():
        for m in members:
            fate[m] = "conflicting"
        values = ", ".join(f"{labels[m].label!r} (line {labels[m].line})" for m in members)
        findings.append(
            _label_finding("conflicting-labels", labels[members[0]], f"item {item!r} has different labels from {annotator}: {values}", "cell left null; keep one row per item and annotator")
        )

    matrices: dict[str, GroupMatrix] = {}
    items_by_group: dict[str, dict[str, int]] = {}
    for group in _topological(present, options):
        spec = options.spec(group)
        table = cells[group]
        if spec.applies_when:
            parent_name, opening = spec.applies_when
            parent_spec = options.spec(parent_name)
            opens = set()
            for v in opening:
                try:
                    c = canonical(parent_spec, v)
                except _Invalid:
                    c = v
                opens.update((c or "").split(SET_JOIN) if parent_spec.multi else [c])
            item_list, table, n_reached, conditioned = _apply_condition(
                group, spec, table, cells[parent_name], opens, bool(parent_spec.multi), annotators, labels, fate, findings
            )
            cells[group] = conditioned  # what this group's own conditional groups see
        else:
            item_list = sorted(table, key=item_key)
            n_reached = None
        item_cells = [{a: v for a, (v, _) in table[it].items()} for it in item_list]
        n_annotators = len(annotators)
        complete = [
            i
            for i, row in enumerate(item_cells)
            if len(row) == n_annotators and not any(v is None or v == NOT_APPLICABLE for v in row.values())
        ]
        counts = {"items": len(item_list), "complete": len(complete)}
        if n_reached is not None:
            counts["reached_by_any"] = n_reached
        keep = complete if options.complete else list(range(len(item_list)))
        counts["kept"] = len(keep)
        items_by_group[group] = counts
        choice = f"complete = {'true' if options.complete else 'false'} keeps {len(keep)}"
        reach = f"; reach = {spec.reach}: {len(item_list)} of {n_reached} items some annotator reached" if n_reached is not None else ""
        findings.append(
            finding(
                "items-kept",
                f"group {group}: {len(item_list)} items{reach}; {len(complete)} labelled by every annotator "
                + (f"({', '.join(annotators)})" if len(annotators) <= 10 else f"(all {len(annotators)})"),
                choice,
                group=group,
            )
        )
        kept_items = [item_list[i] for i in keep]
        kept_set = set(kept_items)
        for item, row in table.items():
            for annotator, (value, r) in row.items():
                if r >= 0 and fate[r] is None:
                    if item not in kept_set:
                        fate[r] = "item_not_kept"
                    elif value == NOT_APPLICABLE:
                        fate[r] = "not_applicable"
                    else:
                        fate[r] = "labelled" if value is not None else "not_labelled"
        matrices[group] = GroupMatrix(
            name=group,
            spec=spec,
            items=kept_items,
            cells=[item_cells[i] for i in keep],
        )
        # a parent's cells must stay complete for its children: filtered only after all groups
    for name, m in matrices.items():
        present_values = {v for row in m.cells for v in row.values() if v is not None and v != NOT_APPLICABLE}
        nums = numbers(m.spec, present_values)
        if nums:
            m.numbers, m.order = nums

    out: list[GroupMatrix] = []
    for name in present:
        m = matrices[name]
        out.extend(_split(m) if m.spec.multi == "split" else [m])
    # every label that was not otherwise settled sits in a cell of a group that no annotator reached
    for i, f in enumerate(fate):
        if f is None:
            fate[i] = "item_not_kept"
    accounting = {"read": len(labels), **dict(sorted(Counter(fate).items()))}
    return ItemResult(annotators=list(annotators), groups=out, findings=findings, accounting=accounting, items_by_group=items_by_group)


def _apply_condition(group, spec, table, parent, opens, parent_multi, annotators, labels, fate, findings):
    """Cells of a conditional group: NOT_APPLICABLE where the annotator's upper answer did not open it.

    Returns the items chosen by ``reach``, their rows, how many items some annotator
    reached, and the rows of every candidate item (for the group's own conditional groups).
    """
    parent_name = spec.applies_when[0]
    result: dict[str, dict[str, tuple[str | None, int]]] = {}
    conditioned: dict[str, dict[str, tuple[str | None, int]]] = {}
    position = {a: i for i, a in enumerate(annotators)}
    candidates = sorted(set(table) | set(parent), key=item_key)
    reached_any: list[str] = []
    chosen: list[str] = []
    for item in candidates:
        upper = parent.get(item, {})
        row = dict(table.get(item, {}))
        reached, closed = [], []
        for a in sorted(set(upper) | set(row), key=position.__getitem__):
            pv = upper.get(a, (None, -1))[0]
            if pv is None:
                continue
            opened = pv != NOT_APPLICABLE and bool(set(pv.split(SET_JOIN) if parent_multi else [pv]) & opens)
            if opened:
                reached.append(a)
                continue
            closed.append((a, pv))
            value, r = row.get(a, (None, -1))
            if value not in (None, NOT_APPLICABLE) and r >= 0:
                rec = labels[r]
                fate[r] = "not_applicable"
                findings.append(
                    _label_finding(
                        "label-not-applicable",
                        rec,
                        f"{group} = {value!r} for item {item!r}, but {rec.annotator}'s {parent_name} = {pv!r} does not open {group}",
                        f"set to {NOT_APPLICABLE!r}",
                    )
                )
            row[a] = (NOT_APPLICABLE, r)
        conditioned[item] = row
        if not reached:
            continue
        reached_any.append(item)
        every = len(reached) == len(annotators)
        if spec.reach == "every" and not every:
            action = f"item left out (reach = every: only {', '.join(reached)} reached {group})"
        else:
            action = f"value {NOT_APPLICABLE!r} for {', '.join(a for a, _ in closed)}" if closed else ""
            chosen.append(item)
            result[item] = row
        if closed:
            findings.append(
                finding(
                    "not-applicable",
                    f"{group} does not apply to item {item!r} for {', '.join(f'{a} ({parent_name} = {pv!r})' for a, pv in closed)}",
                    action,
                    doc=item,
                    group=group,
                )
            )
    return chosen, result, len(reached_any), conditioned


def _split(m: GroupMatrix) -> list[GroupMatrix]:
    """One binary group per label of a multi-label group (``group:label``, values "1"/"0")."""
    chosen = [{a: None if v is None or v == NOT_APPLICABLE else set(v.split(SET_JOIN)) for a, v in row.items()} for row in m.cells]
    labels = list(m.spec.values) if m.spec.values else sorted({p for row in chosen for v in row.values() if v for p in v})
    out = []
    for label in labels:
        cells = [
            {a: (m.cells[i][a] if v is None else SPLIT_VALUES[label in v]) for a, v in row.items()} for i, row in enumerate(chosen)
        ]
        out.append(GroupMatrix(f"{m.name}{SPLIT_JOIN}{label}", GroupSpec(), m.items, cells, split_of=m.name))
    return out


# --- tables ------------------------------------------------------------------------


def _dictionary(values: list[str | None]) -> pa.DictionaryArray:
    return pa.array(values, pa.string()).dictionary_encode()


def wide_table(m: GroupMatrix, annotators: list[str], schema: pa.Schema) -> pa.Table:
    """``group, item, <annotator>…``: one row per item, null = no label."""
    n = len(m.items)
    columns = [
        pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), pa.array([m.name], pa.string())),
        pa.array(m.items, pa.string()),
    ] + [_dictionary([row.get(a) for row in m.cells]) for a in annotators]
    return pa.Table.from_arrays(columns, schema=schema)


def long_table(m: GroupMatrix, annotators: list[str], schema: pa.Schema) -> pa.Table:
    """``group, item, annotator, value``: one row per cell with a record or NOT_APPLICABLE."""
    position = {a: i for i, a in enumerate(annotators)}
    items, who, values = [], [], []
    for item, row in zip(m.items, m.cells):
        for a in sorted(row, key=position.__getitem__):
            items.append(item)
            who.append(position[a])
            values.append(row[a])
    n = len(items)
    columns = [
        pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), pa.array([m.name], pa.string())),
        pa.array(items, pa.string()),
        pa.DictionaryArray.from_arrays(pa.array(who, pa.int32()), pa.array(annotators, pa.string())),
        _dictionary(values),
    ]
    return pa.Table.from_arrays(columns, schema=schema)
