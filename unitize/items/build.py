"""The matrices of one bucket of items: its label records → one row per (group, item), one value per annotator.

:func:`build_bucket` reads each label as its group's :class:`~unitize.items.options.GroupSpec`
says, resolves duplicates and conflicts, applies conditional groups and chooses the
items, for the items of one bucket — every record of those items, and no other (pure,
no I/O). What it decides of an item depends on that item's records alone, so a corpus
cut into buckets of whole items gives the matrices of the corpus taken at once
(:mod:`unitize.items.stream` cuts and joins them).

Cell states, never conflated: a value; ``None`` (the annotator gave no label, or
never saw the item); :data:`NOT_APPLICABLE` (a conditional group the annotator's
upper-level answer did not open).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..config import ConfigError
from ..layouts import ItemCells
from ..model import Finding, ItemLabel
from ..model.findings import finding
from ..model.text import natural_key
from .options import NOT_APPLICABLE, SET_JOIN, GroupSpec, ItemOptions
from .values import InvalidLabel, canonical


def item_key(item: str) -> tuple:
    """Natural order of item ids: numbers by value (then as written), then other ids as text."""
    return natural_key(item)


# --- building ----------------------------------------------------------------------


@dataclass
class GroupCounts:
    """How many items of a group there were, were labelled by every annotator, were kept; and, for a
    conditional group, how many items some annotator reached (additive over buckets)."""

    items: int = 0
    complete: int = 0
    kept: int = 0
    reached_by_any: int | None = None

    def add(self, other: GroupCounts) -> None:
        self.items += other.items
        self.complete += other.complete
        self.kept += other.kept
        if other.reached_by_any is not None:
            self.reached_by_any = (self.reached_by_any or 0) + other.reached_by_any


@dataclass
class Bucket:
    """What one bucket of items gave: per group its kept rows (in natural item order), their counts
    and the values present; the findings about its records; what became of each record."""

    cells: dict[str, ItemCells]
    counts: dict[str, GroupCounts]
    values: dict[str, set[str]]  # per group, every value (not None, not NOT_APPLICABLE) in its kept cells
    findings: list[Finding]
    fate: Counter[str] = field(default_factory=Counter)


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


def check_groups(present: Sequence[str], options: ItemOptions) -> list[str]:
    """The groups in the order conditions are applied (each after its upper level); a
    :class:`ConfigError` when ``[items.groups]`` names a group the input lacks, or conditions loop."""
    known = set(present)
    for name, spec in options.groups.items():
        if name not in known:
            raise ConfigError(f"[items.groups.{name}] names a group the input does not have; its groups are: {', '.join(present) or '(none)'}")
        if spec.applies_when and spec.applies_when[0] not in known:
            raise ConfigError(
                f"[items.groups.{name}] applies_when level {spec.applies_when[0]!r} does not exist; groups are: {', '.join(present)}"
            )
    return _topological(list(present), options)


def build_bucket(labels: Sequence[ItemLabel], annotators: list[str], options: ItemOptions, order: list[str]) -> Bucket:
    """The kept rows of every group (``order``: :func:`check_groups`) for the items of ``labels``, which
    hold every record of those items, in reading order."""
    findings: list[Finding] = []
    fate: list[str | None] = [None] * len(labels)
    cells = _cells(labels, annotators, options, order, fate, findings)
    bucket = Bucket(cells={}, counts={}, values={}, findings=findings)
    for group in order:
        _group_rows(bucket, group, cells, labels, annotators, options, fate)
    # every label that was not otherwise settled sits in a cell of a group that no annotator reached
    bucket.fate = Counter(f if f is not None else "item_not_kept" for f in fate)
    return bucket


def _cells(labels: Sequence[ItemLabel], annotators: list[str], options: ItemOptions, order: list[str],
           fate: list[str | None], findings: list[Finding]) -> dict[str, _Rows]:
    """Every selected record's value in its cell (group -> item -> annotator); a duplicate is kept once, a conflict left null."""
    a_set = set(annotators)
    cells: dict[str, _Rows] = {g: defaultdict(dict) for g in order}
    conflicts: dict[tuple[str, str, str], list[int]] = {}
    for i, rec in enumerate(labels):
        if rec.annotator not in a_set:
            fate[i] = "annotator_not_selected"
            continue
        try:
            value = canonical(options.spec(rec.group), rec.label)
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
    return cells


def _group_rows(bucket: Bucket, group: str, cells: dict[str, _Rows], labels: Sequence[ItemLabel], annotators: list[str],
                options: ItemOptions, fate: list[str | None]) -> None:
    """One group's kept rows, counts and values into ``bucket``; the fate of each of its records."""
    spec = options.spec(group)
    table = cells[group]
    n_reached = None
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
            group, spec, table, cells[parent_name], opens, bool(parent_spec.multi), annotators, labels, fate, bucket.findings
        )
        cells[group] = conditioned  # what this group's own conditional groups see
    else:
        item_list = sorted(table, key=item_key)
    item_cells = [{a: v for a, (v, _) in table[it].items()} for it in item_list]
    complete = [i for i, row in enumerate(item_cells)
                if len(row) == len(annotators) and not any(v is None or v == NOT_APPLICABLE for v in row.values())]
    keep = complete if options.complete else list(range(len(item_list)))
    bucket.counts[group] = GroupCounts(items=len(item_list), complete=len(complete), kept=len(keep), reached_by_any=n_reached)
    kept_items = [item_list[i] for i in keep]
    kept_set = set(kept_items)
    for item, row in table.items():
        for value, r in row.values():
            if r >= 0 and fate[r] is None:
                if item not in kept_set:
                    fate[r] = "item_not_kept"
                elif value == NOT_APPLICABLE:
                    fate[r] = "not_applicable"
                else:
                    fate[r] = "labelled" if value is not None else "not_labelled"
    kept_rows = [item_cells[i] for i in keep]
    bucket.cells[group] = ItemCells.from_rows(kept_items, kept_rows, annotators)
    bucket.values[group] = {v for row in kept_rows for v in row.values() if v is not None and v != NOT_APPLICABLE}


def _apply_condition(group: str, spec: GroupSpec, table: _Rows, parent: _Rows, opens: set[str | None], parent_multi: bool,
                     annotators: list[str], labels: Sequence[ItemLabel], fate: list[str | None], findings: list[Finding]
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
        row = dict(table.get(item, {}))
        reached, closed = _close(group, item, spec, row, parent.get(item, {}), opens, parent_multi, position, labels, fate, findings)
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


def _close(group: str, item: str, spec: GroupSpec, row: dict[str, tuple[str | None, int]], upper: dict[str, tuple[str | None, int]],
           opens: set[str | None], parent_multi: bool, position: dict[str, int], labels: Sequence[ItemLabel], fate: list[str | None],
           findings: list[Finding]) -> tuple[list[str], list[tuple[str, str]]]:
    """One item of a conditional group: NOT_APPLICABLE in ``row`` for each annotator whose upper answer did not open it
    (a label given there is reported); the annotators who reached it, and those it was closed to with their answer."""
    assert spec.applies_when is not None
    parent_name = spec.applies_when[0]
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
            findings.append(_label_finding(
                "label-not-applicable", rec,
                f"{group} = {value!r} for item {item!r}, but {rec.annotator}'s {parent_name} = {pv!r} does not open {group}",
                f"set to {NOT_APPLICABLE!r}",
            ))
        row[a] = (NOT_APPLICABLE, r)
    return reached, closed
