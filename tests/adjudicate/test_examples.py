"""``unitize adjudicate --method majority`` on every bundled example equals a per-unit vote computed here,
independently, from the wide matrix; and every layout gives the same adjudication."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize.adjudicate import adjudicate
from unitize.cli import main

EXAMPLES = ROOT / "unitize" / "examples"
NAMES = ["tdb-mini", "brat-mini", "inception-mini", "bio-mini", "crowd-mini", "labels-mini"]


def convert(name: str, out: Path, layout: str) -> Path:
    flag = ["--layouts", "wide" if layout == "sparse" else layout] if name == "labels-mini" else ["--layout", layout]
    assert main(["convert", str(EXAMPLES / name / "study.toml"), "--out", str(out), "-q", *flag]) == 0
    return out


def vote(values: list[str | None], empty: str, items: bool, multi: bool) -> str | None:
    """Majority by hand: a label when more than half of those with a value gave it (a value's labels: ``+``-split)."""
    given = [v for v in values if v is not None]
    if not given:
        return None
    if items and not multi:
        label, n = Counter(given).most_common(1)[0]
        return label if 2 * n > len(given) else None
    held = Counter(label for v in given for label in (set(v.split("+")) - {empty, "0"}))
    won = sorted(label for label, n in held.items() if 2 * n > len(given))
    if items:
        return "+".join(won) or None
    if empty == "0":
        return "1" if won else "0"
    return "+".join(won) or empty


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("examples")
    return {name: convert(name, root / name, "wide") for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_majority_equals_a_vote_from_the_wide_matrix(name: str, wide: dict[str, Path]) -> None:
    out = wide[name]
    result = adjudicate(out, "majority")
    matrix = pq.read_table(out / "units" / f"setting={result.setting}")
    meta_annotators = [c for c in matrix.column_names if c not in ("group", "doc_id", "layer", "unit", "begin", "end", "item")]
    items = "item" in matrix.column_names
    keys = ["group", "item"] if items else ["group", "doc_id", "layer", "unit"]
    empty = "O" if result.setting.endswith("-labels") else "0"
    multi = {"topics"} if items else set()
    expected = {}
    for row in matrix.to_pylist():
        values = [row[a] if row[a] is None else str(row[a]) for a in meta_annotators]
        values = [None if v == "#n/a" else v for v in values]
        expected[tuple(row[k] for k in keys)] = vote(values, empty, items, row["group"] in multi)
    got = {tuple(r[k] for k in keys): r["gold"] for r in pq.read_table(out / "adjudication" / "units.parquet").to_pylist()}
    assert got == expected
    assert result.summary["units"] == matrix.num_rows and len(got) == matrix.num_rows


def test_the_examples_gold_in_numbers(wide: dict[str, Path]) -> None:
    found = {name: adjudicate(wide[name], "majority").summary for name in NAMES}
    shown = {name: (s["setting"], s["gold_spans"], s["review_regions"]) for name, s in found.items()}
    assert found["bio-mini"]["tied"] == 5 and found["tdb-mini"]["units"] == 2768
    assert shown == {
        "tdb-mini": ("word-interval", 33, 19),
        "brat-mini": ("word-interval-labels", 13, 7),
        "inception-mini": ("word-interval-labels", 9, 5),
        "bio-mini": ("word-interval-labels", 6, 3),  # two annotators: every difference is an even split
        "crowd-mini": ("word-interval", 5, 6),
        "labels-mini": ("items", 0, 12),
    }


@pytest.mark.parametrize("name", ["tdb-mini", "brat-mini", "crowd-mini"])
def test_every_layout_gives_the_same_adjudication(name: str, tmp_path: Path) -> None:
    seen = {}
    for layout in ("wide", "sparse", "long"):
        out = convert(name, tmp_path / layout, layout)
        result = adjudicate(out, "majority")
        units = pq.read_table(out / "adjudication" / "units.parquet").sort_by([("group", "ascending"), ("layer", "ascending"),
                                                                               ("doc_id", "ascending"), ("unit", "ascending")])
        review = [{k: v for k, v in r.items() if k != "setting"} for r in result.review]
        seen[layout] = (result.setting, units.to_pylist(), result.spans, review)
    assert seen["wide"] == seen["sparse"] == seen["long"]


def test_the_tables_follow_the_contract(wide: dict[str, Path]) -> None:
    import json

    spec = json.loads((ROOT / "schemas" / "adjudication.arrow.json").read_text(encoding="utf-8"))["tables"]
    for name, tables in (("brat-mini", ("units", "spans")), ("labels-mini", ("items",))):
        adjudicate(wide[name], "majority")
        for table in tables:
            schema = pq.read_schema(wide[name] / "adjudication" / spec[table]["file"])
            assert schema.names == [f["name"] for f in spec[table]["fields"]]
