"""Whose votes make the gold (--voters): with [roles], the humans', so that a model's runs never vote."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize.adjudicate import adjudicate
from unitize.cli import main

MODELS = ROOT / "unitize" / "examples" / "models-mini" / "study.toml"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("voters") / "out"
    assert main(["convert", str(MODELS), "--out", str(out), "-q"]) == 0
    return out


def gold(out: Path) -> list[tuple]:
    table = pq.read_table(out / "adjudication" / "units.parquet", columns=["doc_id", "unit", "gold", "coders", "confidence"])
    return sorted(zip(*(table[c].to_pylist() for c in table.column_names)))


def test_with_roles_the_gold_is_the_humans_gold(models: Path) -> None:
    result = adjudicate(models)  # [roles]: humans ana, ben, chen; candidates gpt-run1..2
    assert result.summary["voters"] == ["ana", "ben", "chen"]
    by_default = gold(models)
    assert max(row[3] for row in by_default) == 3  # three coders at most: the candidates never vote
    adjudicate(models, voters=["ana", "ben", "chen"])
    assert gold(models) == by_default
    everyone = adjudicate(models, voters="all")
    assert everyone.summary["voters"] == "all" and max(row[3] for row in gold(models)) == 5
    assert gold(models) != by_default
    assert json.loads((models / "adjudication" / "summary.json").read_text(encoding="utf-8"))["voters"] == "all"


def test_without_candidates_every_annotator_votes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    assert adjudicate(out).summary["voters"] == "all"


def test_voters_must_be_annotators(models: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["adjudicate", str(models), "--voters", "ana,nobody"]) == 2
    err = capsys.readouterr().err
    assert "--voters: not annotators of" in err and ": nobody;" in err and "gpt-run1" in err


def test_each_candidate_is_scored_against_the_humans_gold(models: Path) -> None:
    """candidates.csv beside the review queue: each run against the gold, equal to a count of our own — the units where the
    run's value is the gold's, and its segments matched exactly (extent and label) with the gold spans."""
    result = adjudicate(models)
    rows = {r["candidate"]: r for r in result.candidates}
    assert set(rows) == {"gpt-run1", "gpt-run2"}
    units = pq.read_table(models / "adjudication" / "units.parquet").to_pylist()
    matrix = {(r["doc_id"], r["unit"]): r for r in pq.read_table(next((models / "labels").rglob("*.parquet"))).to_pylist()}
    gold_spans = {(r["doc_id"], r["label"], r["unit_begin"], r["unit_end"]) for r in pq.read_table(models / "adjudication" / "spans.parquet").to_pylist()}
    segments = pq.read_table(models / "segments" / "word.parquet").to_pylist()
    for run in ("gpt-run1", "gpt-run2"):
        agreeing = sum(1 for u in units if matrix[(u["doc_id"], u["unit"])][run] == u["gold"])
        own = {(s["doc_id"], s["label"], s["unit_begin"], s["unit_end"]) for s in segments if s["annotator"] == run}
        matched = len(own & gold_spans)
        assert (rows[run]["units"], rows[run]["agreeing"]) == (len(units), agreeing)
        assert (rows[run]["gold_spans"], rows[run]["candidate_spans"], rows[run]["matched_spans"]) == (len(gold_spans), len(own), matched)
        assert rows[run]["span_f1"] == pytest.approx(2 * matched / (len(gold_spans) + len(own)))
    assert (rows["gpt-run1"]["agreeing"], rows["gpt-run1"]["matched_spans"]) == (103, 26)  # the figures on screen
    text = (models / "adjudication" / "candidates.csv").read_text(encoding="utf-8").splitlines()
    assert text[0] == "setting,candidate,units,agreeing,unit_accuracy,gold_spans,candidate_spans,matched_spans,span_f1" and len(text) == 3
    assert adjudicate(models, voters="all").candidates == []  # every annotator voted: no candidate
    assert not (models / "adjudication" / "candidates.csv").exists()


def test_a_candidates_spans_are_runs_of_one_value_in_one_document() -> None:
    import numpy as np

    from unitize.adjudicate.candidates import span_rows

    a, o, b = 0, 1, 2  # value codes; -1: no value
    units = {(0, 0): a, (0, 1): a, (0, 2): o, (0, 3): a, (0, 4): b, (0, 6): b, (1, 0): b, (1, 1): b, (1, 2): -1}
    shuffled = list(units.items())[::-1]  # the rows in any order
    doc, unit, code = (np.array(x, np.int64) for x in ([k[0] for k, _ in shuffled], [k[1] for k, _ in shuffled], [v for _, v in shuffled]))
    found = {tuple(r) for r in span_rows(doc, unit, code, o).tolist()}
    assert found == {(0, a, 0, 2), (0, a, 3, 4), (0, b, 4, 5), (0, b, 6, 7), (1, b, 0, 2)}
    assert {tuple(r) for r in span_rows(doc, unit, code, None).tolist()} == found | {(0, o, 2, 3)}
    assert span_rows(doc[:0], unit[:0], code[:0], o).shape == (0, 4)


def test_candidates_of_a_combined_setting_are_scored_on_its_stored_values_in_pieces_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bit-mask (combined) setting of one layer scores the candidates as its separate setting does: the gold and the
    candidates' cells compared as stored (``1``), not one as stored and the other as named (``Entity``: no unit agreed,
    no span matched). Read an item of cells at a time, the rows are the same."""
    from unitize.dataset import pieces as pieces_module

    out = tmp_path / "out"
    assert main(["convert", str(MODELS), "--out", str(out), "--units", "word", "--modes", "separate,combined", "--layout", "long", "-q"]) == 0
    figures = {}
    for setting in ("word-interval", "word-interval-combined"):
        rows = adjudicate(out, setting=setting).candidates
        figures[setting] = [(r["candidate"], r["units"], r["agreeing"], r["gold_spans"], r["candidate_spans"], r["matched_spans"]) for r in rows]
        monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1)
        assert adjudicate(out, setting=setting).candidates == rows
        monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1 << 19)
    assert figures["word-interval"] == figures["word-interval-combined"] == [("gpt-run1", 109, 105, 29, 28, 27), ("gpt-run2", 109, 106, 29, 27, 26)]


def test_many_voters_are_named_a_few_on_screen(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A crowd of voters (ToxicSpans: 3,579) is not a screenful of names: the first ten and how many more."""
    from unitize.cli.adjudicate import SHOWN_VOTERS

    root = tmp_path / "crowd"
    (root / "annotations").mkdir(parents=True)
    names = [f"w{k:02d}" for k in range(14)] + ["model"]
    for name in names:
        (root / "annotations" / f"{name}.csv").write_text("ID,label\ni1,A\ni2,B\n", encoding="utf-8")
    (root / "study.toml").write_text('[input]\nformat = "labels"\nshape = "per-annotator"\nannotations = "annotations"\n'
                                     'item = "ID"\nlabels = ["label"]\n\n[roles]\ncandidates = ["model"]\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["convert", str(root / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out)]) == 0
    shown = next(line for line in capsys.readouterr().out.splitlines() if "voters:" in line)
    assert shown.startswith("  voters: " + ", ".join(names[:SHOWN_VOTERS]) + " and 4 more (")
