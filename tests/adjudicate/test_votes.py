"""Votes, decisions, confidence and ties on small studies whose gold is known by hand."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.adjudicate.conftest import brat_out
from unitize.adjudicate import adjudicate

TEXT = "Ann met Bob in Rome today"  # words: Ann 0, met 1, Bob 2, in 3, Rome 4, today 5


def gold_column(out: Path) -> list[str | None]:
    t = pq.read_table(out / "adjudication" / "units.parquet")
    return t.column("gold").to_pylist()


def test_majority_on_labels_votes_each_label_in_its_own_layer(tmp_path: Path) -> None:
    # "Rome": A stacks LOC and ORG, B says ORG, C says LOC: LOC 2/3 and ORG 2/3 -> a stacked gold (INCEpTION #5226)
    out = brat_out(tmp_path, TEXT, {
        "A": "T1\tPER 0 3\tAnn\nT2\tLOC 15 19\tRome\nT3\tORG 15 19\tRome\n",
        "B": "T1\tPER 0 3\tAnn\nT2\tORG 15 19\tRome\n",
        "C": "T1\tPER 0 7\tAnn met\nT2\tLOC 15 19\tRome\n",
    })
    result = adjudicate(out, "majority", setting="word-interval-labels")
    assert gold_column(out) == ["PER", "O", "O", "O", "LOC+ORG", "O"]
    t = pq.read_table(out / "adjudication" / "units.parquet").to_pydict()
    assert t["votes"] == [3, 2, 3, 3, 1, 3]  # annotators who gave exactly the gold value
    assert t["coders"] == [3] * 6
    assert t["confidence"] == pytest.approx([1, 2 / 3, 1, 1, 2 / 3, 1])
    assert t["tied"] == [False] * 6
    assert [(s.label, s.begin, s.end, s.unit_begin, s.unit_end) for s in result.spans] == [
        ("PER", 0, 3, 0, 1), ("LOC", 15, 19, 4, 5), ("ORG", 15, 19, 4, 5)]
    assert [(r["text"], r["gold"], r["why"]) for r in result.review] == [("met", ["O"], ["low confidence"]),
                                                                         ("Rome", ["LOC+ORG"], ["low confidence"])]


def test_threshold_and_unanimous(tmp_path: Path) -> None:
    out = brat_out(tmp_path, TEXT, {
        "A": "T1\tPER 0 7\tAnn met\n",
        "B": "T1\tPER 0 3\tAnn\n",
        "C": "T1\tLOC 0 3\tAnn\n",
    })
    adjudicate(out, "threshold", setting="word-interval-labels", min_share=1 / 3)
    assert gold_column(out) == ["LOC+PER", "PER", "O", "O", "O", "O"]
    adjudicate(out, "unanimous", setting="word-interval-labels")
    assert gold_column(out) == ["O"] * 6
    adjudicate(out, "unanimous", setting="word-interval")  # 0/1: everyone marked "Ann"
    assert gold_column(out) == ["1", "0", "0", "0", "0", "0"]


def test_an_even_split_is_tied_and_goes_to_review(tmp_path: Path) -> None:
    out = brat_out(tmp_path, TEXT, {"A": "T1\tPER 8 11\tBob\n", "B": "T1\tPER 8 11\tBob\n", "C": "", "D": ""})
    result = adjudicate(out, "majority", setting="word-interval")
    t = pq.read_table(out / "adjudication" / "units.parquet").to_pydict()
    assert t["gold"] == ["0"] * 6 and t["tied"] == [False, False, True, False, False, False]
    assert t["confidence"] == pytest.approx([1, 1, 0.5, 1, 1, 1])
    (row,) = result.review
    assert (row["text"], row["tied"], row["why"], row["marked_by"], row["not_marked_by"]) == ("Bob", True, ["tied", "low confidence"],
                                                                                          ["A", "B"], ["C", "D"])
    assert result.spans == []


def test_an_annotator_without_the_document_casts_no_vote(tmp_path: Path) -> None:
    (tmp_path / "proj" / "C").mkdir(parents=True)
    (tmp_path / "proj" / "C" / "other.txt").write_text("x y", encoding="utf-8")
    (tmp_path / "proj" / "C" / "other.ann").write_text("", encoding="utf-8")
    out = brat_out(tmp_path, TEXT, {"A": "T1\tPER 0 3\tAnn\n", "B": "T1\tPER 0 3\tAnn\n"}, modes="separate",
                  extra=("--keep-missing",))
    adjudicate(out, "majority")
    t = pq.read_table(out / "adjudication" / "units.parquet").to_pydict()
    d = [i for i, doc in enumerate(t["doc_id"]) if doc == "d"]
    assert [t["coders"][i] for i in d] == [2] * 6 and [t["gold"][i] for i in d] == ["1", "0", "0", "0", "0", "0"]


# up to 20: the label sets counted by their bits; 21 to 63: sorted as one integer; 64 and 70: too many labels for one integer's bits
@pytest.mark.parametrize("labels", [0, 1, 3, 20, 21, 63, 64, 70])
def test_the_distinct_label_sets_of_a_gold_are_numpys_unique_rows(labels: int) -> None:
    import numpy as np

    from unitize.adjudicate.votes import distinct_rows
    from unitize.model.codes import dictionary

    rng = np.random.default_rng(labels)
    for units in (0, 1, 50, 2_000):
        chosen = rng.random((units, labels)) < (0.9 if labels > 60 else 0.4)
        chosen[: units // 2] = chosen[units // 2: units // 2 * 2]  # rows repeated
        rows, inverse = distinct_rows(chosen)
        expected = np.unique(chosen, axis=0)
        assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, expected.tolist())) and len(rows) == len(expected)
        assert inverse.shape == (units,) and (rows[inverse] == chosen).all()
    column = dictionary(np.array([2, 0, 1, 0]), ["a", "b", "c"], np.array([True, False, True, True]))
    assert column.to_pylist() == ["c", None, "b", "a"] and column.cast("string").to_pylist() == ["c", None, "b", "a"]
