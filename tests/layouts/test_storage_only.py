"""A layout is storage only: every bundled example converted with each layout gives the same agreement.

What a unit's value is, and whether an annotator absent from a document is missing there or not
assigned it, comes from the study (``[unitize] assignment``, a roster, the annotator count) —
never from how the matrix is stored. Before, crowd-mini (a roster, layout long) failed with
``--layout wide``: the missing-annotator rule was tied to the long layout.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize import layouts
from unitize.agree import agree
from unitize.config import load_toml, override
from unitize.dataset import OutputData
from unitize.run import convert

EXAMPLES = sorted(p.parent.name for p in (ROOT / "unitize" / "examples").glob("*/study.toml"))


def _results(out: Path, folder: str = "agreement") -> dict[tuple, dict]:
    """Every results row by its identity (the item dataset's name aside), NaN comparable; with roles
    (models-mini) every roles.csv row too: each pair of humans, candidate and human, and runs."""
    rows = {}
    for r in pq.read_table(out / folder / "results.parquet").to_pylist():
        key = tuple(str(r[c]) for c in ("group", "layer", "metric", "pair", "label", "doc", "annotator"))
        setting = r.pop("setting")
        kind = "items" if r["unit"] == "item" else setting
        rows[(kind, *key)] = {k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
    roles = out / folder / "roles.csv"
    if roles.is_file():
        with open(roles, encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                rows[("roles", *(r[c] for c in ("setting", "group", "layer", "metric", "comparison", "family", "annotator_a", "annotator_b")))] = r
    return rows


def _convert(name: str, layout: str, out: Path) -> Path:
    settings = load_toml(ROOT / "unitize" / "examples" / name / "study.toml")
    if settings.format == "labels":
        settings = override(settings, items={**settings.items, "layouts": [layout]})
    else:
        settings = override(settings, layout=layout)
    convert(override(settings, out=out))
    agree(out)
    return out


def _layouts(name: str) -> list[str]:
    items = load_toml(ROOT / "unitize" / "examples" / name / "study.toml").format == "labels"
    return list(layouts.names(items=items))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_layout_gives_the_same_agreement(name: str, tmp_path: Path) -> None:
    names = _layouts(name)
    assert names[0] == "wide" and len(names) >= 2
    outs = {layout: _convert(name, layout, tmp_path / layout) for layout in names}
    for layout, out in outs.items():  # each output really is stored in its layout
        assert {s.layout.name for s in OutputData(out).settings} == {layout}
    first = _results(outs["wide"])
    assert len(first) > 10 and any(r["value"] != "NaN" for r in first.values())
    for layout in names[1:]:
        other = _results(outs[layout])
        differ = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
        assert not differ, f"{name}: {layout} differs from wide on {len(differ)} rows, e.g. {differ[:3]}"
    for layout, out in outs.items():  # coding metrics alone (a sparse group is read without its documents): the same rows
        agree(out, metrics=["alpha", "fleiss", "cohen"], dest=out / "coding")
        alone = _results(out, "coding")
        assert alone and all(first[k] == row for k, row in alone.items() if k[0] != "roles"), f"{name}: {layout}, coding metrics alone"


def test_the_roster_says_who_was_assigned_not_the_layout(tmp_path: Path) -> None:
    """crowd-mini: four workers, three per comment, on a roster: each comment's fourth worker is not
    assigned it — null in a wide matrix, no row in a long one, no finding, no document excluded."""
    wide = _convert("crowd-mini", "wide", tmp_path / "wide")
    data = OutputData(wide)
    universe = pq.read_table(wide / "universe.parquet").to_pylist()
    assert len(universe) == 5 and all(len(r["annotators"]) == 3 for r in universe)
    assert (wide / "report.jsonl").read_text(encoding="utf-8") == ""
    table = pq.read_table(data.setting("char-interval").parts[0]).to_pylist()
    for r in universe:
        rows = [t for t in table if t["doc_id"] == r["doc_id"]]
        absent = set(data.setting("char-interval").annotators) - set(r["annotators"])
        assert len(absent) == 1 and all(t[a] is None for t in rows for a in absent)
        assert all(t[a] is not None for t in rows for a in r["annotators"])


def test_assignment_all_applies_rats_rule_whatever_the_layout(tmp_path: Path) -> None:
    """``assignment = "all"`` on the crowd example: every comment lacks one worker, so RAT's rule
    excludes every one of them — with the long layout as with the wide one (nothing is kept)."""
    from unitize.errors import RunError

    settings = load_toml(ROOT / "unitize" / "examples" / "crowd-mini" / "study.toml")
    for layout in ("long", "wide"):
        with pytest.raises(RunError, match="annotator-missing"):
            convert(override(settings, layout=layout, assignment="all", out=tmp_path / layout))
