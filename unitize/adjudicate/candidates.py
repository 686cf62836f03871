"""Each candidate (an annotator who did not vote: a model, its runs) scored against the gold the voters made.

Written beside the review queue as ``candidates.csv``, one row per candidate: on the units (items) both the
candidate and the gold have a value for — ``units``, ``agreeing`` and ``unit_accuracy`` (the share where the
candidate's value is the gold's; "not marked" is a value) — and for interval span settings the spans, each a
run of units of one value (the rule every gold span follows), matched exactly: ``gold_spans`` (on the
documents the candidate coded), ``candidate_spans``, ``matched_spans`` and ``span_f1`` = 2·matched / (gold +
candidate).

The candidates' cells are read a piece of whole documents (items) at a time
(:func:`~unitize.dataset.pieces.layer_pieces`), the gold of a (group, layer) as three Arrow columns: memory
holds a piece and one (group, layer)'s gold, never a Python object per unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..dataset.directory import OutputData, Setting
from ..dataset.pieces import layer_pieces
from ..dataset.regions import Cells, not_annotated
from ..model.codes import look_up

#: the columns of candidates.csv
COLUMNS = ("setting", "candidate", "units", "agreeing", "unit_accuracy", "gold_spans", "candidate_spans", "matched_spans", "span_f1")


def scores(data: OutputData, setting: Setting, candidates: Sequence[str], units_file: Path) -> list[dict[str, Any]]:
    """One row of :data:`COLUMNS` per candidate of ``setting`` (``units_file``: the adjudication's units.parquet)."""
    present = [c for c in candidates if c in setting.annotators]
    if not present:
        return []
    items = setting.kind == "items"
    spans = setting.approach == "interval" and not items
    totals = {c: np.zeros(5, np.int64) for c in present}  # units, agreeing, gold spans, candidate spans, matched
    selected = OutputData(data.path, present)
    empty = None if items else not_annotated(setting)
    for group, layer, pieces in layer_pieces(selected, selected.setting(setting.name)):
        gold = _gold_of(units_file, group, None if items else layer)
        for cells in pieces:
            compared = Compared(cells, gold, items, empty)
            for k, candidate in enumerate(cells.annotators):
                totals[candidate] += compared.of(k, spans)
    return [_row(setting, c, totals[c], spans) for c in present]


def _gold_of(units_file: Path, group: str, layer: str | None) -> pa.Table:
    """One (group, layer)'s gold (items: one group's): where (document or item), unit, gold value."""
    where = "item" if layer is None else "doc_id"
    filters = [("group", "=", group)] + ([("layer", "=", layer)] if layer is not None else [])
    columns = [where, "gold"] if layer is None else [where, "unit", "gold"]
    table = pq.read_table(units_file, columns=columns, filters=filters)
    return table.rename_columns(["where", "gold"] if layer is None else ["where", "unit", "gold"])


class Compared:
    """One piece of the candidates' cells beside the gold of its documents (items), as integer arrays: each unit a
    key (document × unit), each value a code into the piece's values followed by the gold's others; ``empty``:
    the value "not marked" (units), which no span holds."""

    def __init__(self, cells: Cells, gold: pa.Table, items: bool, empty: str | None):
        self.cells = cells
        docs = pa.array(cells.docs, pa.string())
        mine = gold.filter(pc.is_in(gold.column("where"), value_set=docs))
        self.gold_doc = pc.index_in(mine.column("where"), value_set=docs).to_numpy(zero_copy_only=False).astype(np.int64)
        self.gold_unit = np.zeros(mine.num_rows, np.int64) if items else mine.column("unit").to_numpy().astype(np.int64)
        values = mine.column("gold")
        known = set(cells.values)
        self.names = [*cells.values, *(v for v in pc.unique(values).to_pylist() if v is not None and v not in known)]
        code = pc.index_in(values, value_set=pa.array(self.names, pa.string()))
        self.gold_code = pc.fill_null(code, -1).to_numpy(zero_copy_only=False).astype(np.int64)  # -1: no gold
        self.stride = int(max(cells.row_unit.max(initial=0), self.gold_unit.max(initial=0))) + 1
        key = self.gold_doc * self.stride + self.gold_unit
        self.order = np.argsort(key, kind="stable")
        self.gold_key = key[self.order]
        self.empty = self.names.index(empty) if empty in self.names else None  # "not marked", by whoever gave it

    def of(self, k: int, spans: bool) -> np.ndarray:
        """(units, agreeing, gold spans, candidate spans, matched spans) of candidate ``k`` in this piece."""
        c = self.cells
        mine = c.cell_annotator == k
        row, code = c.cell_row[mine], c.cell_code[mine]
        doc, unit = c.row_doc[row], c.row_unit[row]
        gold = np.full(row.size, -1, np.int64)  # the gold's code per cell; -1: no gold
        if self.gold_key.size:
            at, found = look_up(self.gold_key, doc * self.stride + unit)
            gold[found] = self.gold_code[self.order[at[found]]]
        shared = gold >= 0
        counts = [int(shared.sum()), int((shared & (gold == code)).sum())]
        if not spans:
            return np.array([*counts, 0, 0, 0])
        coded = np.zeros(len(c.docs), bool)
        coded[doc] = True
        on = coded[self.gold_doc]
        theirs = span_rows(self.gold_doc[on], self.gold_unit[on], self.gold_code[on], self.empty)
        own = span_rows(doc, unit, code, self.empty)
        matched = len(theirs) + len(own) - len(np.unique(np.concatenate([theirs, own]), axis=0))
        return np.array([*counts, len(theirs), len(own), matched])


def span_rows(doc: np.ndarray, unit: np.ndarray, code: np.ndarray, empty: int | None) -> np.ndarray:
    """Maximal runs of consecutive units of one document holding one value (not ``empty``, not -1: no value), the
    gold spans' rule (:func:`~unitize.dataset.regions.runs`): one row (document, value, first unit, end unit) each."""
    marked = (code >= 0) & (code != (-1 if empty is None else empty))
    doc, unit, code = doc[marked], unit[marked], code[marked]
    order = np.lexsort((unit, doc))
    doc, unit, code = doc[order], unit[order], code[order]
    if not doc.size:
        return np.zeros((0, 4), np.int64)
    new = np.r_[True, (np.diff(doc) != 0) | (np.diff(unit) != 1) | (np.diff(code) != 0)]
    starts = np.flatnonzero(new)
    stops = np.r_[starts[1:], doc.size]
    return np.column_stack([doc[starts], code[starts], unit[starts], unit[stops - 1] + 1]).astype(np.int64)


def _row(setting: Setting, candidate: str, t: np.ndarray, spans: bool) -> dict[str, Any]:
    units, agreeing, gold_spans, own_spans, matched = (int(x) for x in t)
    return {"setting": setting.name, "candidate": candidate, "units": units, "agreeing": agreeing,
            "unit_accuracy": agreeing / units if units else None,
            "gold_spans": gold_spans if spans else None, "candidate_spans": own_spans if spans else None,
            "matched_spans": matched if spans else None,
            "span_f1": (2 * matched / (gold_spans + own_spans) if gold_spans + own_spans else None) if spans else None}
