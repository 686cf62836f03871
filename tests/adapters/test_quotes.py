"""The quotes reader: quotes located exact → normalized → fuzzy, every quote's outcome reported and counted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from unitize.adapters import AdapterError
from unitize.adapters.locate import AMBIGUOUS, EXACT, FUZZY, NORMALIZED, NOT_FOUND, Locator, normalize
from unitize.config import Settings
from unitize.run import convert, read_corpus

TEXT = "Barack  Obama met the \u201cSenate\u201d in Washington. Obama left. Obama returned."


def test_normalize_maps_every_character_back() -> None:
    norm, where = normalize("A \u201cB\u201d\u2014 \t C")
    assert norm == 'a "b"- c'
    assert where == [0, 1, 2, 3, 4, 5, 6, 9]


def test_exact_occurrence_hint_and_left_to_right() -> None:
    loc = Locator(TEXT)
    loc.expect(["Obama", "Obama"])
    assert loc.locate("Obama", occurrence=3) == loc.locate("Obama", occurrence=3)  # a given occurrence may repeat
    assert (loc.locate("Obama", occurrence=2).begin, loc.locate("Obama", hint=60).begin) == (46, 58)
    first, second = Locator(TEXT), None
    first.expect(["Obama", "Obama", "Obama"])  # quoted as often as it occurs: each place once, not ambiguous
    found = [first.locate("Obama") for _ in range(3)]
    assert [(f.outcome, f.begin, f.end) for f in found] == [(EXACT, 8, 13), (EXACT, 46, 51), (EXACT, 58, 63)]
    second = Locator(TEXT)
    second.expect(["Obama"])  # once, three places: placed on the first, and said to be ambiguous
    assert (second.locate("Obama").outcome, second.locate("Obama", occurrence=4).outcome) == (AMBIGUOUS, NOT_FOUND)


def test_normalized_then_fuzzy_with_score() -> None:
    loc = Locator(TEXT, threshold=80)
    got = loc.locate("barack obama")
    assert (got.outcome, TEXT[got.begin:got.end]) == (NORMALIZED, "Barack  Obama")
    got = loc.locate('"senate"')
    assert (got.outcome, TEXT[got.begin:got.end]) == (NORMALIZED, "\u201cSenate\u201d")
    got = loc.locate("Washingtn")
    assert (got.outcome, TEXT[got.begin:got.end], got.score) == (FUZZY, "Washington", 88.89)
    assert Locator(TEXT, threshold=95).locate("Washingtn").outcome == NOT_FOUND
    assert Locator(TEXT, matching=EXACT).locate("barack obama").outcome == NOT_FOUND
    assert Locator(TEXT, matching=NORMALIZED).locate("Washingtn").outcome == NOT_FOUND


def _write(folder: Path, name: str, records: list[dict]) -> None:
    (folder / name).write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")


def test_every_quote_is_reported_and_counted(tmp_path: Path) -> None:
    q = tmp_path / "quotes"
    q.mkdir()
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "d2.txt").write_text("Paris is in France.", encoding="utf-8")
    _write(q, "gpt-run1.jsonl", [
        {"doc": "d1", "text": TEXT, "spans": [{"quote": "Barack Obama", "label": "PER"}, {"quote": "Washingtn", "label": "LOC"},
                                              "Obama", {"quote": "Berlin", "label": "LOC"}, {"start": 22, "end": 30, "label": "ORG"}]},
        {"doc": "d2", "spans": [{"quote": "Paris", "label": "LOC"}]},
        "not a record",
    ])
    s = Settings(format="quotes", input={"annotations": q, "texts": tmp_path / "texts", "threshold": 80.0}, base=tmp_path,
                 pairs=(("char", "interval"),), modes=("labels",))
    corpus = read_corpus(s)
    codes = [(f.code, f.record) for f in corpus.findings]
    assert codes == [("record-malformed", "line 3"), ("quote-normalized", "line 1/1"), ("quote-fuzzy", "line 1/2"),
                     ("quote-ambiguous", "line 1/3"), ("quote-not-found", "line 1/4"), ("quote-exact", "line 2/1")]
    placed = [(s.label, corpus.documents[s.doc_id].text[s.begin:s.end]) for s in corpus.spans if s.valid]
    assert placed == [("PER", "Barack  Obama"), ("LOC", "Washington"), (None, "Obama"), ("ORG", "\u201cSenate\u201d"), ("LOC", "Paris")]
    _, manifest = convert(replace(s, out=tmp_path / "out"))
    assert manifest["accounting"]["quotes"] == {"exact": 1, "normalized": 1, "fuzzy": 1, "ambiguous": 1, "not-found": 1}
    assert manifest["accounting"]["by_unit"]["char"]["excluded"] == {"quote-not-found": 1}


def test_bad_options_and_missing_texts_are_clear(tmp_path: Path) -> None:
    _write(tmp_path, "a.jsonl", [{"doc": "d1", "spans": ["x"]}])
    base = {"annotations": tmp_path / "a.jsonl"}
    with pytest.raises(AdapterError, match="hold no 'text': set \\[input\\] texts"):
        read_corpus(Settings(format="quotes", input=base, base=tmp_path))
    with pytest.raises(AdapterError, match="matching must be one of exact, normalized, fuzzy"):
        read_corpus(Settings(format="quotes", input={**base, "matching": "loose"}, base=tmp_path))
