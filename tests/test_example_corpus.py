"""The shipped example corpus (unitize/examples/tdb-mini): every deliberate phenomenon, end to end."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    target = tmp_path_factory.mktemp("demo") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--modes", "separate,combined", "-q"]) == 0
    return target


def segments(out, unit):
    return pq.read_table(out / "segments" / f"{unit}.parquet").to_pylist()


def test_report(out):
    rows = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert Counter(r["code"] for r in rows) == {
        "annotator-missing": 2,  # 00001927/ama: burak has no file; ayse's and cem's files left out
        "relation-count-mismatch": 3,  # 00001971/ve: ayse 3, burak 3, cem 2
        "segments-merged": 12,  # 00002009/ve: nested and crossing arguments, char and word units
        "text-mismatch": 1,  # 00002009_burak_ama.xml relation 1 Arg1: "Yılar geçti"
        "word-snapped": 1,  # 00001971_cem_icin.xml relation 2 Arg2 ends inside "oturmadığı"
    }
    mismatch = next(r for r in rows if r["code"] == "text-mismatch")
    assert (mismatch["file"], mismatch["record"], mismatch["layer"]) == ("annotations/00002009_burak_ama.xml", "1", "Arg1")
    snapped = next(r for r in rows if r["code"] == "word-snapped")
    assert "932..965" in snapped["message"] and "snapped to 932..969" in snapped["message"]
    counts = next(r for r in rows if r["code"] == "relation-count-mismatch")
    assert "ayse 3, burak 3, cem 2" in counts["message"]


def test_universe_follows_rats_rules(out):
    table = pq.read_table(out / "units" / "setting=word-interval", columns=["group", "doc_id"]).to_pydict()
    pairs = sorted(set(zip(table["group"], table["doc_id"])))
    assert pairs == [
        ("ama", "00002009"),
        ("icin", "00001971"),
        ("ki", "00001927"),
        ("ki", "00001971"),
        ("ve", "00001927"),
        ("ve", "00002009"),
    ]


def test_documents(out):
    docs = pq.read_table(out / "documents.parquet").to_pylist()
    assert [(d["doc_id"], d["chars"], d["newline"], d["encoding"], d["bom"]) for d in docs] == [
        ("00001927", 1548, "lf", "utf-8", False),
        ("00001971", 1630, "crlf", "utf-8", False),
        ("00002009", 1420, "lf", "utf-8", False),
    ]
    assert all(d["tokens"] > 200 and d["tokenizer"] == "spacy:tr" for d in docs)


def test_nested_and_crossing_arguments_merge(out):
    for unit in ("char", "word"):
        ayse = [s for s in segments(out, unit) if (s["annotator"], s["group"], s["doc_id"], s["layer"]) == ("ayse", "ve", "00002009", "Arg1")]
        first = ayse[0]
        # relation 1 [137,349) crosses relation 3 [241,545), which contains relation 2 [399,441)
        assert (first["begin"], first["end"], first["merged"]) == (137, 545, 3)
        assert [r.split("#")[1] for r in first["records"]] == ["1", "2", "3"]


def test_abutting_arguments_stay_apart(out):
    burak = [s for s in segments(out, "word") if (s["annotator"], s["group"], s["doc_id"], s["layer"]) == ("burak", "ve", "00002009", "Arg1")]
    assert [(s["begin"], s["end"], s["unit_begin"], s["unit_end"]) for s in burak[:2]] == [
        (241, 350, 39, 56),
        (351, 545, 56, 82),
    ]
    table = pq.read_table(out / "units" / "setting=word-boundary").to_pydict()
    rows = [i for i in range(len(table["unit"])) if table["group"][i] == "ve" and table["doc_id"][i] == "00002009" and table["layer"][i] == "Arg1"]
    assert [table["burak"][i] for i in rows][38:57] == [0, 1] + [0] * 15 + [1, 1]


def test_shared_argument_in_both_layers(out):
    burak = [s for s in segments(out, "char") if (s["annotator"], s["group"], s["doc_id"]) == ("burak", "ama", "00002009")]
    arg2_rel1 = [s for s in burak if s["layer"] == "Arg2" and s["records"] == ["annotations/00002009_burak_ama.xml#1"]]
    arg1_rel2 = [s for s in burak if s["layer"] == "Arg1" and s["records"] == ["annotations/00002009_burak_ama.xml#2"]]
    assert [(s["begin"], s["end"]) for s in arg2_rel1] == [(565, 758)] == [(s["begin"], s["end"]) for s in arg1_rel2]
    combined = pq.read_table(out / "units" / "setting=char-interval-combined").to_pydict()
    rows = [i for i in range(len(combined["unit"])) if combined["group"][i] == "ama" and combined["doc_id"][i] == "00002009"]
    assert {combined["burak"][i] for i in rows[565:758]} == {3}


def test_discontinuous_argument_is_extended(out):
    cem = [s for s in segments(out, "char") if s["extended"]]
    assert [(s["annotator"], s["group"], s["doc_id"], s["layer"], s["begin"], s["end"]) for s in cem] == [
        ("cem", "ama", "00002009", "Arg2", 565, 758)
    ]


def test_crlf_text_offsets(out):
    raw = (EXAMPLE / "texts" / "00001971.txt").read_bytes().decode("utf-8")
    assert raw.count("\r\n") >= 6
    cem_ki = [s for s in segments(out, "char") if (s["annotator"], s["group"], s["doc_id"], s["layer"]) == ("cem", "ki", "00001971", "Arg2")]
    assert [(s["begin"], s["end"]) for s in cem_ki] == [(1576, 1630)]
    assert raw[1576:1630].endswith("şey.\r\n")


def test_accounting(out):
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for unit, figures in manifest["accounting"]["by_unit"].items():
        assert figures["records"] == figures["in_segments"] + sum(figures["excluded"].values())
        assert figures["excluded"] == {"annotator-missing": 4, "relation-count-mismatch": 16}
    assert manifest["accounting"]["files"] == {
        "read": 23,
        "unreadable": 0,
        "not_matching_pattern": 0,
        "duplicates_skipped": 0,
        "skipped_by_selection": 0,
    }
