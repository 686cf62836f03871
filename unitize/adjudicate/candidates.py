"""Each candidate (an annotator who did not vote: a model, its runs) scored against the gold the voters made.

Written beside the review queue as ``candidates.csv``, one row per candidate: on the units (items) both the
candidate and the gold have a value for — ``units``, ``agreeing`` and ``unit_accuracy`` (the share where the
candidate's value is the gold's; "not marked" is a value) — and for interval span settings the spans, each a
run of units of one value (the rule every gold span follows), matched exactly: ``gold_spans`` (on the
documents the candidate coded), ``candidate_spans``, ``matched_spans`` and ``span_f1`` = 2·matched / (gold +
candidate). The candidate's units are read a (group, layer) at a time, the gold of that (group, layer) with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..dataset.directory import OutputData, Setting
from ..dataset.regions import Cells, runs, setting_cells

#: the columns of candidates.csv
COLUMNS = ("setting", "candidate", "units", "agreeing", "unit_accuracy", "gold_spans", "candidate_spans", "matched_spans", "span_f1")

Key = tuple[str, int]  # (document or item, unit index; items: 0)
Span = tuple[str, str, int, int]  # (document, value, first unit, end unit)


def scores(data: OutputData, setting: Setting, candidates: Sequence[str], units_file: Any) -> list[dict[str, Any]]:
    """One row of :data:`COLUMNS` per candidate of ``setting`` (``units_file``: the adjudication's units.parquet)."""
    present = [c for c in candidates if c in setting.annotators]
    if not present:
        return []
    gold = pq.read_table(units_file)
    items = setting.kind == "items"
    spans = setting.approach == "interval" and not items
    totals = {c: np.zeros(5, np.int64) for c in present}  # units, agreeing, gold spans, candidate spans, matched
    selected = OutputData(data.path, present)
    for cells in setting_cells(selected, selected.setting(setting.name)):
        golden = _gold_of(gold, cells, items)
        empty = cells.name(cells.empty) if cells.empty is not None else None
        for k, candidate in enumerate(cells.annotators):
            totals[candidate] += _compared(_values(cells, k), golden, spans, empty)
    return [_row(setting, c, totals[c], spans) for c in present]


def _gold_of(gold: Any, cells: Cells, items: bool) -> dict[Key, str | None]:
    """The gold value of each unit (item) of one (group, layer)."""
    mask = pc.equal(gold.column("group"), cells.group)
    if not items:
        mask = pc.and_(mask, pc.equal(gold.column("layer"), cells.layer))
    rows = gold.filter(mask)
    where = rows.column("item").to_pylist() if items else rows.column("doc_id").to_pylist()
    units = [0] * rows.num_rows if items else rows.column("unit").to_pylist()
    return dict(zip(zip(where, units), rows.column("gold").to_pylist()))


def _values(cells: Cells, k: int) -> dict[Key, str]:
    """Annotator ``k``'s value of each unit (item) it coded, by name."""
    mine = cells.cell_annotator == k
    rows, codes = cells.cell_row[mine], cells.cell_code[mine]
    return {(cells.docs[int(cells.row_doc[r])], int(cells.row_unit[r])): cells.name(int(v)) for r, v in zip(rows.tolist(), codes.tolist())}


def _compared(own: dict[Key, str], gold: dict[Key, str | None], spans: bool, empty: str | None) -> np.ndarray:
    """(units, agreeing, gold spans, candidate spans, matched spans) of one (group, layer); ``empty``: "not marked"."""
    shared = [(key, value) for key, value in own.items() if gold.get(key) is not None]
    agreeing = sum(1 for key, value in shared if gold[key] == value)
    if not spans:
        return np.array([len(shared), agreeing, 0, 0, 0])
    coded = {doc for doc, _ in own}
    theirs = _runs(((key, v) for key, v in gold.items() if key[0] in coded), empty)
    mine = _runs(own.items(), empty)
    return np.array([len(shared), agreeing, len(theirs), len(mine), len(theirs & mine)])


def _runs(values: Iterable[tuple[Key, str | None]], empty: str | None) -> set[Span]:
    """Maximal runs of consecutive units of one document holding one value (not ``empty``, not None): the gold
    spans' rule (:func:`~unitize.dataset.regions.runs`)."""
    marked = sorted((key, value) for key, value in values if value is not None and value != empty)
    if not marked:
        return set()
    docs, doc_of = np.unique([key[0] for key, _ in marked], return_inverse=True)
    names, value_of = np.unique([value for _, value in marked], return_inverse=True)
    unit = np.array([key[1] for key, _ in marked], np.int64)
    out: set[Span] = set()
    for code, name in enumerate(names.tolist()):
        starts, stops = runs(value_of == code, doc_of, unit)
        out.update((str(docs[doc_of[a]]), name, int(unit[a]), int(unit[b - 1]) + 1) for a, b in zip(starts.tolist(), stops.tolist()))
    return out


def _row(setting: Setting, candidate: str, t: np.ndarray, spans: bool) -> dict[str, Any]:
    units, agreeing, gold_spans, own_spans, matched = (int(x) for x in t)
    return {"setting": setting.name, "candidate": candidate, "units": units, "agreeing": agreeing,
            "unit_accuracy": agreeing / units if units else None,
            "gold_spans": gold_spans if spans else None, "candidate_spans": own_spans if spans else None,
            "matched_spans": matched if spans else None,
            "span_f1": (2 * matched / (gold_spans + own_spans) if gold_spans + own_spans else None) if spans else None}
