"""The humans' gold beside a candidate's values, per observation: what a corpus estimate is made of.

The gold is the one ``unitize adjudicate`` made (``OUT/adjudication/units.parquet``: the humans' votes by
default). An **observation** is an item (item data) or a (group, layer, document) (span data). Its value for a
label is the share of its units holding the label (an item: 1 or 0; a document: the share of its units inside
a span of the label), the empty value ("not marked") aside. Per observation of a candidate:

- **labeled**: the humans' gold decided at least one of its units — ``Y`` (gold) and ``Ŷ`` (candidate) both;
- **unlabeled**: no human coded it — ``Ŷ`` only (the many the model labels alone);
- **undecided**: humans coded it but their votes tied on every unit — left out, counted;
- **without the candidate**: humans coded it, the candidate did not — left out, counted (from the gold:
  :func:`human_observations`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..dataset.adjudication import FOLDER, UNITS, read_adjudication
from ..dataset.regions import Cells
from ..dataset.roles import Roles
from ..errors import RunError
from ..model.codes import look_up


@dataclass
class Gold:
    """The adjudication's per-unit (per-item) gold and the setting it was made on."""

    table: Any  # pyarrow Table: adjudication units (or items)
    setting: str


def read_gold(out: Path, roles: Roles | None) -> Gold:
    """``OUT/adjudication``'s gold (its summary read as the report reads it, :func:`read_adjudication`); an error that says
    what to run when there is none, or when candidates voted in it."""
    adjudication = read_adjudication(Path(out), limit=0)
    if adjudication is None:
        raise RunError(f"{out} has no gold yet: run `unitize adjudicate {out}` first (the humans' majority vote; "
                       "estimate compares each candidate with that gold)")
    folder, summary = Path(out) / FOLDER, adjudication["summary"]
    try:
        table = pq.read_table(folder / UNITS)
    except (OSError, ValueError) as exc:
        raise RunError(f"{folder} cannot be read ({exc}); run `unitize adjudicate {out}` again") from None
    voters = summary.get("voters")
    if roles is not None:
        voted = set(roles.candidates) if voters == "all" else set(roles.candidates) & set(voters or [])
        if voted:
            raise RunError(f"the gold in {folder} was made with candidate(s) {', '.join(sorted(voted))} voting; run "
                           f"`unitize adjudicate {out}` (the humans vote by default) so that the gold is the humans'")
    return Gold(table, str(summary.get("setting")))


@dataclass(frozen=True)
class Golden:
    """The gold of one (group, layer)'s units: its value names, per unit the index of its gold among them (-1: none
    decided) and whether a human coded it."""

    names: list[str]
    code: np.ndarray
    coded: np.ndarray


def gold_codes(gold: Any, cells: Cells) -> Golden:
    """The gold of the units of ``cells`` (:class:`Golden`)."""
    mask = pc.equal(gold.column("group"), cells.group)
    if not cells.items:
        mask = pc.and_(mask, pc.equal(gold.column("layer"), cells.layer))
    rows = gold.filter(mask)
    code = np.full(cells.row_doc.shape[0], -1, np.int64)
    coded = np.zeros(cells.row_doc.shape[0], bool)
    if rows.num_rows == 0 or code.size == 0:
        return Golden([], code, coded)
    where = pc.cast(rows.column("item" if cells.items else "doc_id"), pa.string())
    docs = pc.fill_null(pc.index_in(where, value_set=pa.array(cells.docs, pa.string())), -1).to_numpy().astype(np.int64)
    units = np.zeros(rows.num_rows, np.int64) if cells.items else rows.column("unit").to_numpy().astype(np.int64)
    span = int(cells.row_unit.max()) + 1
    keys = cells.row_doc.astype(np.int64) * span + cells.row_unit.astype(np.int64)
    wanted = docs * span + units
    pos, hit = look_up(keys, wanted)
    found = (docs >= 0) & (units < span) & hit
    values = pc.cast(rows.column("gold"), pa.string())
    names = sorted(v for v in pc.unique(values).to_pylist() if v is not None)
    gold_index = pc.fill_null(pc.index_in(values, value_set=pa.array(names, pa.string())), -1).to_numpy().astype(np.int64)
    humans = rows.column("coders").to_numpy() > 0
    code[pos[found]] = gold_index[found]
    coded[pos[found]] = humans[found]
    return Golden(names, code, coded)


def human_observations(gold: Any, items: bool) -> dict[tuple[str | None, str | None], int]:
    """Per key of the estimates (items: (group, None); spans: (None, layer)): the observations a human coded."""
    coded = gold.filter(pc.greater(gold.column("coders"), 0))
    if items:
        counts = coded.group_by(["group", "item"]).aggregate([]).group_by(["group"]).aggregate([([], "count_all")])
        return {(g, None): n for g, n in zip(counts.column("group").to_pylist(), counts.column("count_all").to_pylist())}
    counts = coded.group_by(["group", "layer", "doc_id"]).aggregate([]).group_by(["layer"]).aggregate([([], "count_all")])
    return {(None, layer): n for layer, n in zip(counts.column("layer").to_pylist(), counts.column("count_all").to_pylist())}


def only(cells: Cells, names: list[str]) -> Cells | None:
    """``cells`` with the cells of the annotators ``names`` alone (in that order); None when it has none of them."""
    at = {a: k for k, a in enumerate(cells.annotators)}
    present = [n for n in names if n in at]
    if not present:
        return None
    new = np.full(len(cells.annotators), -1, np.int64)
    new[[at[n] for n in present]] = np.arange(len(present))
    mapped = new[cells.cell_annotator]
    keep = mapped >= 0
    return replace(cells, annotators=present, cell_row=cells.cell_row[keep], cell_annotator=mapped[keep], cell_code=cells.cell_code[keep])


@dataclass
class Observed:
    """One layer's observations of one candidate: labels, ``Y``/``Ŷ`` on the labeled ones, ``Ŷ`` on the unlabeled."""

    y: list[np.ndarray] = field(default_factory=list)  # pieces (observations × their labels), columns by name below
    yhat: list[np.ndarray] = field(default_factory=list)
    unlabeled: list[np.ndarray] = field(default_factory=list)
    names: list[list[str]] = field(default_factory=list)  # each piece's column names
    undecided: int = 0

    def arrays(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """(labels, Y, Ŷ, Ŷ unlabeled) over every piece, a column per label (0 where a piece lacks the label)."""
        labels = sorted({n for names in self.names for n in names})
        at = {n: k for k, n in enumerate(labels)}

        def stack(pieces: list[np.ndarray]) -> np.ndarray:
            out = [np.zeros((p.shape[0], len(labels))) for p in pieces]
            for o, p, names in zip(out, pieces, self.names):
                o[:, [at[n] for n in names]] = p
            return np.concatenate(out) if out else np.zeros((0, len(labels)))

        return labels, stack(self.y), stack(self.yhat), stack(self.unlabeled)


def _per_doc(doc: np.ndarray, code: np.ndarray, names: list[str], col: dict[str, int], n_docs: int) -> np.ndarray:
    """Documents × the columns ``col``: how many units of each document hold each value (``code`` into ``names``)."""
    width = max(len(names), 1)
    counts = np.bincount(doc * width + code, minlength=n_docs * width).reshape(n_docs, width)
    out = np.zeros((n_docs, len(col)))
    for k, name in enumerate(names):
        if name in col:
            out[:, col[name]] += counts[:, k]
    return out


def observe(cells: Cells, golden: Golden, into: Observed) -> None:
    """Add one (group, layer) of a candidate (``cells`` holds its values alone) to ``into``."""
    n_docs = len(cells.docs)
    gold_names, gold_code, human = golden.names, golden.code, golden.coded
    empty = cells.name(cells.empty) if cells.empty is not None else None
    cand_names = [cells.name(k) for k in range(len(cells.values))]
    names = sorted({n for n in (*cand_names, *gold_names) if n != empty})
    col = {n: k for k, n in enumerate(names)}
    doc_of_cell = cells.row_doc[cells.cell_row].astype(np.int64)
    cand_units = np.bincount(doc_of_cell, minlength=n_docs)
    cand = _per_doc(doc_of_cell, cells.cell_code, cand_names, col, n_docs)
    decided = gold_code >= 0
    gold_units = np.bincount(cells.row_doc[decided], minlength=n_docs)
    truth = _per_doc(cells.row_doc[decided].astype(np.int64), gold_code[decided], gold_names, col, n_docs)
    humans = np.bincount(cells.row_doc[human], minlength=n_docs) > 0
    has_candidate = cand_units > 0
    labeled = has_candidate & (gold_units > 0)
    unlabeled = has_candidate & ~humans
    into.undecided += int((has_candidate & humans & (gold_units == 0)).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        share = cand / np.maximum(cand_units, 1)[:, None]
        gold_share = truth / np.maximum(gold_units, 1)[:, None]
    into.names.append(names)
    into.y.append(gold_share[labeled])
    into.yhat.append(share[labeled])
    into.unlabeled.append(share[unlabeled])
