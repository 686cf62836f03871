"""What a phase of a run freed goes back to the system (``runtime.memory.give_back``): glibc keeps freed holes in its
heap (only its top is returned on ``free``); ``malloc_trim`` returns them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from unitize.runtime import memory


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's (Linux)")
def test_freed_holes_in_the_heap_go_back_to_the_system():
    assert memory._malloc_trim() is not None
    memory.give_back()
    blocks = [np.ones(12_000, np.int64) for _ in range(3_000)]  # 96 KB each: the heap, not mmap; about 275 MiB
    kept = blocks[::10]  # every tenth kept: the heap's top stays in use, the rest are holes free() cannot return
    del blocks
    before = _rss_mib()
    memory.give_back()
    after = _rss_mib()
    assert before - after > 150, (before, after)
    assert len(kept) == 300


def test_a_run_gives_back_between_its_phases_and_after_each_partition_written_here(tmp_path, monkeypatch):
    """Writing in this process: before the partitions are made and once they are, after each partition (a writing
    thread's arena keeps what it freed, and grows with the partitions it wrote) and after the last; an executor
    writing elsewhere: its partitions are its own business."""
    from pathlib import Path

    import unitize
    from unitize.output import write

    calls = []
    monkeypatch.setattr(write, "give_back", lambda: calls.append(1))
    study = Path(__file__).resolve().parents[1] / "unitize" / "examples" / "tdb-mini" / "study.toml"
    settings = unitize.override(unitize.load_settings(study), partition_units=600)
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    parts = len(result.part_tasks(tmp_path / "staging"))
    assert parts == 3
    unitize.write_output(result, tmp_path / "here")
    assert len(calls) == parts + 3

    class Elsewhere:
        parallel = True

        def map(self, fn, items):
            return [fn(item) for item in items]

    calls.clear()
    unitize.write_output(result, tmp_path / "elsewhere", executor=Elsewhere())
    assert len(calls) == 3


def test_a_span_table_read_gives_back_after_each_table_and_in_the_rosters_steps(tmp_path, monkeypatch):
    """The roster's key sort, its name columns and its pairs' sort are given back before the assignments are made (at
    200,000 texts they were 270 MiB over what the roster holds), each table's transients before the next is read (and
    each piece of the spans'), and the document ids' hash once every document named is known."""
    import csv

    from unitize.adapters import span_table

    rows = {"texts.csv": [["doc_id", "text"], ["d1", "a b"]], "roster.csv": [["key", "doc_id", "annotator"], [1, "d1", "r1"]],
            "spans.csv": [["key", "label", "begin", "end"], [1, "x", 0, 1]]}
    for name, table in rows.items():
        with (tmp_path / name).open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(table)
    calls = []
    monkeypatch.setattr(span_table, "give_back", lambda: calls.append(1))
    read = dict(annotations=tmp_path / "spans.csv", texts=tmp_path / "texts.csv", layer="span", spreadsheet_safe=False, base=tmp_path)
    corpus = span_table.read(**read, roster="roster.csv")
    assert len(calls) == 8 and [(s.doc_id, s.annotator, s.begin, s.end) for s in corpus.spans] == [("d1", "r1", 0, 1)]
    calls.clear()
    (tmp_path / "spans.csv").write_text("doc_id,annotator,label,begin,end\nd1,r1,x,0,1\n", encoding="utf-8")
    assert len(span_table.read(**read).spans) == 1 and len(calls) == 4  # no roster: texts, a spans piece, spans, ids
