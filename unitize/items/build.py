"""Item matrices: flat labels → one row per (group, item), one value per annotator (pure, no I/O).

:func:`build` reads each label as its group's :class:`~unitize.items.options.GroupSpec`
says, resolves duplicates and conflicts, applies conditional groups, chooses the
item sets and accounts for every record; a layout (:mod:`unitize.layouts`) writes a
group's matrix as an Arrow table.

Cell states, never conflated: a value; ``None`` (the annotator gave no label, or
never saw the item); :data:`NOT_APPLICABLE` (a conditional group the annotator's
upper-level answer did not open).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from ..config import ConfigError
from ..findings import finding
from ..model import Finding, ItemLabel
from ..text import natural_key
from .options import NOT_APPLICABLE, SET_JOIN, SPLIT_JOIN, SPLIT_VALUES, GroupSpec, ItemOptions
from .values import InvalidLabel, canonical, numbers


def item_key(item: str) -> tuple:
    """Natural order of item ids: numbers by value (then as written), then other ids as text."""
    return natural_key(item)


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


#: a group's cells: item -> annotator -> (value, index of its record; -1: conflicting records)
_Rows = dict[str, dict[str, tuple[str | None, int]]]


def _label_finding(code: str, rec: ItemLabel, message: str, action: str) -> Finding:
    return finding(code, message, action, file=rec.source, record=str(rec.line) if rec.line is not None else None, doc=rec.item,
                   group=rec.group, annotator=rec.annotator)


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
    cells: dict[str, _Rows] = {g: defaultdict(dict) for g in present}
    conflicts: dict[tuple[str, str, str], list[int]] = {}

    for i, rec in enumerate(labels):
        if rec.annotator not in a_set:
            fate[i] = "annotator_not_selected"
            continue
        spec = options.spec(rec.group)
        try:
            value = canonical(spec, rec.label)
        except InvalidLabel as exc:
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
            findings.append(_label_finding("duplicate-label", rec, f"item {rec.item!r} labelled {value!r} again (first at line {labels[first].line})",
                                           "kept once"))
            continue
        conflicts[key] = [first, i]
        row[rec.annotator] = (None, -1)
    for (_group, item, annotator), members in conflicts.items():
        for r in members:
            fate[r] = "conflicting"
        values = ", ".join(f"{labels[m].label!r} (line {labels[m].line})" for m in members)
        findings.append(
            _label_finding("conflicting-labels", labels[members[0]], f"item {item!r} has different labels from {annotator}: {values}",
                           "cell left null; keep one row per item and annotator")
        )

    matrices: dict[str, GroupMatrix] = {}
    items_by_group: dict[str, dict[str, int]] = {}
    for group in _topological(present, options):
        spec = options.spec(group)
        table = cells[group]
        if spec.applies_when:
            parent_name, opening = spec.applies_when
            parent_spec = options.spec(parent_name)
            opens: set[str | None] = set()
            for v in opening:
                try:
                    c = canonical(parent_spec, v)
                except InvalidLabel:
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
            for _annotator, (value, r) in row.items():
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
    for m in matrices.values():
        present_values = {v for row in m.cells for v in row.values() if v is not None and v != NOT_APPLICABLE}
        nums = numbers(m.spec, present_values)
        if nums:
            m.numbers, m.order = nums

    out: list[GroupMatrix] = []
    for name in present:
        m = matrices[name]
        out.extend(_split(m) if m.spec.multi == "split" else [m])
    # every label that was not otherwise settled sits in a cell of a group that no annotator reached
    settled = [f if f is not None else "item_not_kept" for f in fate]
    accounting = {"read": len(labels), **dict(sorted(Counter(settled).items()))}
    return ItemResult(annotators=list(annotators), groups=out, findings=findings, accounting=accounting, items_by_group=items_by_group)


def _apply_condition(group: str, spec: GroupSpec, table: _Rows, parent: _Rows, opens: set[str | None], parent_multi: bool,
                     annotators: list[str], labels: list[ItemLabel], fate: list[str | None], findings: list[Finding]
                     ) -> tuple[list[str], _Rows, int, _Rows]:
    """Cells of a conditional group: NOT_APPLICABLE where the annotator's upper answer did not open it.

    Returns the items chosen by ``reach``, their rows, how many items some annotator
    reached, and the rows of every candidate item (for the group's own conditional groups).
    """
    assert spec.applies_when is not None  # only a conditional group is conditioned
    parent_name = spec.applies_when[0]
    result: _Rows = {}
    conditioned: _Rows = {}
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
