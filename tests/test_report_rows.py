"""Findings packed as report rows: the same rows, order, counts and lines as the sorted list of Finding objects."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from unitize.model import Finding
from unitize.model import report_rows
from unitize.model.findings import count_by_severity, finding, sort_key, top_codes
from unitize.model.report_rows import Findings, Packed, report_line

CODES = ["segments-merged", "word-snapped", "offset-invalid", "annotator-missing", "text-mismatch"]


def made(rng: random.Random, n: int) -> list[Finding]:
    """``n`` findings with few distinct values, so keys tie often (records compared naturally: r2 < r10)."""
    return [finding(rng.choice(CODES), f"message {rng.randrange(3)} ‘ü’", rng.choice(["kept", "left out"]),
                    file=rng.choice([None, "a.csv", "b.csv"]), record=rng.choice([None, "r2", "r10", "r10/Arg1"]),
                    doc=rng.choice([None, "d1", "d2"]), group="all", annotator=rng.choice([None, "w1", "w2"]),
                    layer=rng.choice([None, "span"]), unit=rng.choice([None, "char", "word"]))
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("block", [1, 3, 4096])
def test_runs_merge_into_the_order_of_one_sorted_list(monkeypatch, seed, block):
    monkeypatch.setattr(report_rows, "BLOCK", block)
    rng = random.Random(seed)
    parts = [made(rng, rng.randrange(0, 40)) for _ in range(rng.randrange(1, 5))]
    whole = sorted([f for p in parts for f in p], key=sort_key)  # stable: ties in the order of the parts
    packed = Findings([Packed.of(p) for p in parts])
    assert list(packed) == whole
    assert list(packed.lines()) == [json.dumps(f.as_dict(), ensure_ascii=False) for f in whole]
    assert len(packed) == len(whole) and bool(packed) == bool(whole)
    assert packed.by_severity() == count_by_severity(whole)
    assert packed.by_code() == {code: sum(f.code == code for f in whole) for code in sorted({f.code for f in whole})}
    assert packed.errors() == [f for f in whole if f.severity == "error"]
    assert packed.top_codes() == top_codes(whole)
    assert packed == whole and packed == Findings.of(whole)


def test_a_line_is_the_report_row_and_decodes_to_the_same_finding():
    f = finding("segments-merged", 'two "quoted" segments\nmerged', "one segment", file="ä.csv", record="7+9", unit="word")
    assert report_line(f) == json.dumps(f.as_dict(), ensure_ascii=False)
    assert list(Findings.of([f])) == [f]
    assert list(Findings.of([f]).lines()) == [
        '{"code": "segments-merged", "severity": "info", "file": "ä.csv", "record": "7+9", "doc": null, "group": null, '
        '"annotator": null, "layer": null, "unit": "word", "message": "two \\"quoted\\" segments\\nmerged", '
        '"action": "one segment"}']


def test_no_findings():
    empty = Findings([Packed.of([]), Packed.of([])])
    assert empty.runs == [] and not empty and len(empty) == 0 and empty == []
    assert list(empty.lines()) == [] and empty.top_codes() == [] and empty.errors() == []
    assert empty.by_severity() == {"error": 0, "warning": 0, "info": 0} and empty.by_code() == {}


@pytest.mark.parametrize("seed", range(4))
def test_findings_with_their_blocks_mapped_are_the_same_findings(monkeypatch, seed):
    from unitize.runtime import mapped as mapped_module

    monkeypatch.setattr(report_rows, "BLOCK", 3)
    rng = random.Random(seed)
    parts = [made(rng, rng.randrange(0, 30)) for _ in range(4)]
    on_heap = Findings([Packed.of(p) for p in parts])
    assert Findings([Packed.of(p) for p in parts]).mapped().runs[0].blocks[0].__class__ is bytes  # small: stays
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 0)
    held = Findings([Packed.of(p) for p in parts]).mapped()
    assert all(isinstance(b, memoryview) for r in held.runs for b in r.blocks)
    assert list(held.lines()) == list(on_heap.lines()) and held == on_heap and held.by_code() == on_heap.by_code()
    back = pickle.loads(pickle.dumps(held))  # sent as bytes
    assert all(isinstance(b, bytes) for r in back.runs for b in r.blocks) and list(back.lines()) == list(on_heap.lines())
    assert Findings([]).mapped().runs == []


@pytest.mark.parametrize("limit", [0, 1 << 30])
def test_runs_spooled_as_they_come_are_the_same_findings(monkeypatch, limit):
    """The batches' runs, their blocks spooled as each comes (to a mapped scratch file once large, else kept on the
    heap), are the same findings; mapping the run's findings afterwards leaves the spooled runs where they lie."""
    from unitize.model.report_rows import RunSpool
    from unitize.runtime import mapped as mapped_module

    monkeypatch.setattr(report_rows, "BLOCK", 3)
    monkeypatch.setattr(mapped_module, "MAP_BYTES", limit)
    rng = random.Random(7)
    parts = [made(rng, n) for n in (10, 0, 7, 25)]
    on_heap = Findings([Packed.of(p) for p in parts])
    runs, spool = [Packed.of(p) for p in parts], RunSpool()
    for run in runs:
        spool.add(run)
        assert run.blocks == []
    spool.done()
    assert [len(r.blocks) for r in runs] == [4, 0, 3, 9] and all(isinstance(b, memoryview) for r in runs for b in r.blocks)
    header, spooled = Packed.of(made(rng, 5)), [list(r.blocks) for r in runs]
    Findings([header, *runs]).mapped()
    assert isinstance(header.blocks[0], memoryview if limit == 0 else bytes)
    assert all(a is b for r, was in zip(runs, spooled) for a, b in zip(r.blocks, was, strict=True))  # not moved again
    assert list(Findings(runs).lines()) == list(on_heap.lines()) and Findings(runs) == on_heap
