"""A crowd group adjudicated a piece of whole documents at a time (unitize.dataset.pieces.layer_pieces) is the
adjudication of the group read whole: units.parquet (the same row groups), spans.parquet, the review queue and
the summary byte for byte, the figures below."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.dataset.test_pieces import crowd, labels_mini, tdb_long, tdb_sparse, tree  # noqa: F401  (module-scoped fixtures, converted once here)
from unitize.adjudicate import adjudicate
from unitize.dataset import pieces as pieces_module
from unitize.output import directory


def adjudicated(out: Path, setting: str, method: str, min_share: float | None) -> dict[str, bytes]:
    """OUT/adjudication's files after adjudicating (summary.json without its seconds, which vary)."""
    adjudicate(out, method, setting=setting, min_share=min_share)
    files = tree(out / "adjudication")
    summary = json.loads(files["summary.json"])
    assert summary.pop("seconds") >= 0
    files["summary.json"] = json.dumps(summary).encode()
    return files


FIGURES = ("units", "coded", "resolved", "tied", "review_units", "gold_spans", "review_regions")


@pytest.mark.parametrize(("name", "setting", "method", "limit", "figures"), [
    ("tdb_long", "word-interval", "majority", 7, (2768, 2768, 2768, 0, 124, 33, 19)),  # a piece a document, across parts
    ("tdb_long", "word-interval-labels", "majority", 7, (2768, 2768, 2768, 0, 174, 34, 18)),  # one label per unit (was 183, 35)
    ("tdb_sparse", "word-interval", "majority", 7, (2768, 2768, 2768, 0, 124, 33, 19)),  # sparse: a run of documents a piece
    ("tdb_sparse", "char-interval-labels", "majority", 100, (18392, 18392, 18392, 0, 1180, 35, 19)),  # runs of documents
    ("crowd", "word-interval-labels", "majority", 7, (58, 58, 58, 0, 24, 5, 6)),  # one group: a piece a comment
    ("crowd", "word-interval-labels", "majority", 100, (58, 58, 58, 0, 24, 5, 6)),  # two, two and one comments
    ("crowd", "char-interval", "threshold", 100, (248, 248, 248, 0, 107, 5, 6)),
    ("crowd", "char-interval-labels", "unanimous", 7, (248, 248, 248, 0, 114, 1, 6)),
    ("labels_mini", "items-long", "majority", 7, (50, 46, 46, 0, 12, 0, 12)),  # item groups of a long table: whole items a piece
    ("labels_mini", "items-long", "unanimous", 1, (50, 46, 36, 0, 12, 0, 12)),  # an item a piece
])
def test_adjudicated_in_pieces_is_the_whole_group_byte_for_byte(
        name: str, setting: str, method: str, limit: int, figures: tuple[int, ...], request: pytest.FixtureRequest,
        monkeypatch) -> None:
    out = request.getfixturevalue(name)
    min_share = 0.6 if method == "threshold" else None
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 16)  # row groups cut inside pieces and across them
    whole = adjudicated(out, setting, method, min_share)
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", limit)
    pieces = adjudicated(out, setting, method, min_share)
    assert pieces.keys() == whole.keys() == {"units.parquet", "review.csv", "review.jsonl", "summary.json"} | (
        set() if setting.startswith("items") else {"spans.parquet"})
    assert all(pieces[k] == whole[k] for k in whole)
    summary = json.loads(whole["summary.json"])
    assert tuple(summary[k] for k in FIGURES) == figures
    meta = pq.ParquetFile(out / "adjudication" / "units.parquet").metadata
    assert meta.num_rows == figures[0] and meta.num_row_groups > figures[0] // 16


def test_some_voters_of_a_crowd_group_read_in_pieces(crowd: Path, monkeypatch) -> None:  # noqa: F811
    """--voters naming some annotators of a long table read in pieces (a group's layers read from their ``layer`` column
    alone once failed: the annotator filter needs its column): the pieces' gold is the whole group's."""
    from unitize.dataset.directory import OutputData

    voters = sorted(OutputData(crowd).setting("word-interval-labels").annotators)[:-1]
    whole = adjudicate(crowd, setting="word-interval-labels", voters=voters)
    before = (crowd / "adjudication" / "units.parquet").read_bytes()
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    pieces = adjudicate(crowd, setting="word-interval-labels", voters=voters)
    assert (crowd / "adjudication" / "units.parquet").read_bytes() == before
    assert pieces.summary["voters"] == whole.summary["voters"] == voters and pieces.summary["units"] == whole.summary["units"] > 0
