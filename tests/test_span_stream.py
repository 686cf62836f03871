"""A span corpus streamed a batch of whole groups at a time (DATT) gives the outputs of the corpus read whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unitize.adapters.datt as datt
from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.config import load_toml, override
from unitize.run import read_corpus, unitize, write_output
from unitize.spans import run as span_run
from unitize.units import spaces

VARIANTS = {
    "default": [],
    "every-mode": ["unitize.modes=['separate','combined','labels']", "unitize.keep_missing=true", "unitize.keep_mismatched=true"],
    "named-annotators": ["input.annotators=['cem','ayse']", "unitize.layers=['Arg1','Arg2','Conn']"],
    "one-layer-long": ["unitize.layers=['Arg2']", "unitize.layout='long'", "unitize.discontinuous='drop'"],
}


def written(settings, out: Path, *, stream: bool) -> dict[str, bytes]:
    """Every output file's bytes (the manifest without its run section and output path)."""
    settings = override(settings, out=out)
    result = unitize(read_corpus(settings, stream=stream), settings)
    write_output(result, out)
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    manifest = json.loads(files.pop("manifest.json"))
    manifest.pop("run")
    files["manifest.json"] = json.dumps(manifest, sort_keys=True).replace(str(out), "OUT").encode()
    return files


@pytest.mark.parametrize("variant", VARIANTS)
def test_streamed_outputs_are_the_whole_corpus_outputs(variant, tmp_path, monkeypatch):
    settings = load_toml(EXAMPLE / "study.toml", VARIANTS[variant])
    whole = written(settings, tmp_path / "whole", stream=False)
    monkeypatch.setattr(datt, "BATCH_FILES", 1)  # every connective its own batch
    streamed = written(settings, tmp_path / "streamed", stream=True)
    assert sorted(streamed) == sorted(whole)
    assert [name for name in whole if whole[name] != streamed[name]] == []


def test_a_streamed_read_holds_no_span(monkeypatch):
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    settings = load_toml(EXAMPLE / "study.toml")
    corpus = read_corpus(settings, stream=True)
    assert corpus.spans == [] and corpus.submissions == []
    assert sorted(corpus.documents) == ["00001927", "00001971", "00002009"]
    assert corpus.stream is not None and corpus.stream.annotators == ["ayse", "burak", "cem"]
    batches = [read() for read in corpus.stream.batches]
    assert [sorted({s.group for s in b.submissions}) for b in batches] == [["ama"], ["icin"], ["ki"], ["ve"]]
    assert sum(len(b.spans) for b in batches) == len(read_corpus(settings).spans)


def test_grouping_by_sense_reads_whole(monkeypatch):
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    settings = override(load_toml(EXAMPLE / "study.toml"), input={"group_by": "type"})
    corpus = read_corpus(settings, stream=True)
    assert corpus.stream is None and corpus.spans  # relations regrouped across files: no batch of whole groups


def test_a_long_run_tokenizes_and_resolves_in_forked_processes(tmp_path):
    """Past OWN_PROCESS_CHARS (here 0) spaCy runs in a forked process, and every batch in a process of its
    own: the run's process never imports spaCy, and the outputs are those of a whole read in one process."""
    settings = load_toml(EXAMPLE / "study.toml")
    whole = written(settings, tmp_path / "whole", stream=False)
    script = (
        "import sys, json\n"
        "import unitize.units.spaces, unitize.adapters.datt\n"
        "unitize.units.spaces.OWN_PROCESS_CHARS = 0\n"
        "unitize.adapters.datt.BATCH_FILES = 1\n"
        "from unitize.cli import main\n"
        f"code = main(['convert', {str(EXAMPLE / 'study.toml')!r}, '--out', {str(tmp_path / 'forked')!r}, '-q'])\n"
        "print(json.dumps([code, 'spacy' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(done.stdout.splitlines()[-1]) == [0, False], done.stderr
    out = tmp_path / "forked"
    forked = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    manifest = json.loads(forked.pop("manifest.json"))
    manifest.pop("run")
    forked["manifest.json"] = json.dumps(manifest, sort_keys=True).replace(str(out), "OUT").encode()
    assert [name for name in whole if whole[name] != forked.get(name)] == []


def test_a_bad_tokenizer_in_the_forked_process_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(spaces, "OWN_PROCESS_CHARS", 0)
    assert main(["convert", str(EXAMPLE / "study.toml"), "--tokenizer", "spacy:zz", "--out", "unused", "-q"]) == 2
    assert "spaCy has no language 'zz'" in capsys.readouterr().err


def _killed(*args):
    os._exit(9)  # as the kernel's OOM killer would end it


def test_a_batch_process_that_dies_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    monkeypatch.setattr(span_run, "_batch_part", _killed)
    code = main(["convert", str(EXAMPLE / "study.toml"), "--out", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "a process reading a batch of groups ended abruptly" in err and "workers = 1" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_batches_share_the_runs_document_dictionary():
    """A batch's segments table goes to its scratch file without the documents' dictionary (every document of the
    run: 2 M of them at the 10x crowd run, 30 MB a batch) and comes back with the run's one array; joining leaves a
    column whose chunks share one dictionary as it is and unifies the others (as Arrow would)."""
    import pyarrow as pa

    from unitize.schema import segments_schema
    from unitize.spans import spill
    from unitize.units.joined import _unified

    docs = pa.array(["d0", "d1", "d2", "d3"])
    row = {"unit_type": "word", "group": "g", "doc_id": "d0", "layer": "Arg1", "annotator": "a", "label": None, "unit_begin": 0,
           "unit_end": 1, "begin": 0, "end": 1, "extended": False, "snapped": False, "merged": 1, "records": ["r"]}
    plain = pa.Table.from_pylist([row, row], schema=segments_schema())
    i = plain.schema.get_field_index("doc_id")

    def with_doc_column(column: pa.Array) -> pa.Table:
        return pa.Table.from_arrays([column if k == i else c for k, c in enumerate(plain.columns)], schema=segments_schema())

    table = with_doc_column(pa.DictionaryArray.from_arrays(pa.array([1, 3], pa.int32()), docs))
    spilled = spill.without_docs(table)
    assert spilled.schema.field("doc_id").type == pa.int32() and spilled.column("doc_id").to_pylist() == [1, 3]
    back = spill.with_docs(spilled, docs)
    assert back.equals(table) and back.schema.equals(segments_schema(), check_metadata=True)
    joined = _unified(pa.concat_tables([back, spill.with_docs(spilled, docs)]))
    assert all(c.dictionary.buffers()[2].address == docs.buffers()[2].address for c in joined.column("doc_id").chunks)
    assert joined.column("doc_id").to_pylist() == ["d1", "d3", "d1", "d3"]
    other = with_doc_column(pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["d3", "d1"])))
    mixed = _unified(pa.concat_tables([back, other]))
    assert mixed.column("doc_id").to_pylist() == ["d1", "d3", "d3", "d1"]
    assert mixed.equals(pa.concat_tables([back, other]).unify_dictionaries())
    assert len({c.dictionary.buffers()[2].address for c in mixed.column("doc_id").chunks}) == 1


def test_joining_batches_holds_each_mark_once_and_gives_what_concatenating_and_sorting_gave():
    """The batches' marks are copied into the run's arrays one batch at a time, each batch's let go once copied; the
    run's marks are the batches' renumbered into the run's labels, in (key, u0) order, of the types concatenating gave
    (unit positions in 32 bits where every batch's fit, keys in 64)."""
    from collections import Counter

    import numpy as np
    import pyarrow as pa

    from unitize.units.joined import joined
    from unitize.units.marks import Marks
    from unitize.units.segments import UnitResult
    from unitize.units.unitizers import SegmentKey

    keys = SegmentKey(layers=1, annotators=2, docs=4)
    table = pa.table({"group": ["g"], "layer": ["L"]})

    def batch(docs, annotators, u0, u1, labels):
        key = np.array([keys.encode(0, 0, a, d) for d, a in zip(docs, annotators)], np.int64)
        u0, u1 = np.array(u0, np.int32), np.array(u1, np.int32)
        label_key = key * 2 + np.array(labels)
        marks = Marks(SegmentKey(layers=1, annotators=2, docs=4, labels=2), key, u0, u1, label_key, u0, u1)
        return UnitResult(unit="char", marks=marks, segments=table, findings=[], in_segments=len(docs), excluded=Counter())

    first = batch([0, 1], [1, 0], [7, 2], [9, 3], [0, 0])  # keys 4, 1
    second = batch([2, 3, 2], [0, 1, 0], [5, 1, 0], [6, 2, 0], [0, 0, 0])  # keys 2, 7, 2: one key twice (u0 5, 0)
    result = joined("char", [first, second], [["g"], ["g"]], ["g"], ["L"], [["A"], ["B"]], ["A", "B"])
    marks = result.marks
    assert marks.key.tolist() == [1, 2, 2, 4, 7] and marks.key.dtype == np.int64
    assert marks.u0.tolist() == [2, 0, 5, 7, 1] and marks.u1.tolist() == [3, 0, 6, 9, 2] and marks.u0.dtype == np.int32
    # the second batch's label 0 is the run's "B" (1)
    assert marks.label_key.tolist() == [2, 5, 5, 8, 15] and marks.label_u0.tolist() == [2, 0, 5, 7, 1]
    assert all(getattr(r.marks, name).size == 0 for r in (first, second) for name in ("key", "u0", "u1", "label_key", "label_u0", "label_u1"))
    assert result.in_segments == 5 and result.segments.num_rows == 2


def test_a_batchs_marks_go_to_a_file_and_come_back_mapped(tmp_path: Path) -> None:
    """A forked batch's marks are written to the scratch folder (what is sent back holds no array) and read back as
    read-only arrays lying in mappings, of the same types and values; per-label marks may be empty."""
    import gc

    import numpy as np

    from unitize.spans import spill
    from unitize.units.marks import Marks
    from unitize.units.unitizers import SegmentKey

    keys = SegmentKey(1, 2, 3, 1)
    none = np.zeros(0, np.int64)
    marks = Marks(keys, np.array([0, 4, 5], np.int64), np.array([0, 3, 9], np.int32), np.array([2, 3, 11], np.int32), none, none, none,
                  labelled=False)
    sent = spill.write_marks(tmp_path, 7, "word", marks)
    assert sent.keys == keys and sent.key.size == sent.u0.size == 0 and not sent.labelled
    back = spill.read_marks(tmp_path, 7, "word", sent)
    assert back.key.tolist() == [0, 4, 5] and back.u0.tolist() == [0, 3, 9] and back.u1.tolist() == [2, 3, 11]
    assert (back.key.dtype, back.u0.dtype, back.label_key.size) == (np.int64, np.int32, 0) and not back.u0.flags.writeable
    assert back.keys == keys and not back.labelled
    del marks, sent
    gc.collect()
    assert back.u0.tolist() == [0, 3, 9] and back.key.tolist() == [0, 4, 5]  # each array keeps its mapping open


def test_joined_marks_lie_in_a_mapped_file_once_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAP_BYTES the run's marks are made in a mapped scratch file (the writer reads them a partition at a time),
    sorted there in place, and the result holds the mapping to let its pages go; the values are those of the heap."""
    import mmap
    from collections import Counter

    import numpy as np
    import pyarrow as pa

    import unitize.runtime.mapped as mapped_module
    from unitize.units.joined import joined
    from unitize.units.marks import Marks
    from unitize.units.segments import UnitResult
    from unitize.units.unitizers import SegmentKey

    keys = SegmentKey(layers=1, annotators=2, docs=4, labels=1)

    def run() -> UnitResult:
        def batch(docs, annotators, u0, u1):
            key = np.array([keys.encode(0, 0, a, d) for d, a in zip(docs, annotators)], np.int64)
            none = np.zeros(0, np.int64)
            marks = Marks(keys, key, np.array(u0, np.int32), np.array(u1, np.int32), none, none, none, labelled=False)
            return UnitResult(unit="char", marks=marks, segments=pa.table({"group": ["g"], "layer": ["L"]}), findings=[], in_segments=len(docs),
                              excluded=Counter())

        return joined("char", [batch([0, 1], [1, 0], [7, 2], [9, 3]), batch([2, 3, 2], [0, 1, 0], [5, 1, 0], [6, 2, 0])],
                      [["g"], ["g"]], ["g"], ["L"], [[], []], [])

    heap = run()
    assert heap.mapped == []
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 0)
    on_file = run()
    assert len(on_file.mapped) == 1 and isinstance(on_file.mapped[0], mmap.mmap)
    assert on_file.marks.key.tolist() == heap.marks.key.tolist() == [1, 2, 2, 4, 7]
    assert on_file.marks.u0.tolist() == heap.marks.u0.tolist() == [2, 0, 5, 7, 1] and on_file.marks.u0.dtype == np.int32


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5), st.integers(0, 30), st.integers(0, 4)), max_size=40),
       st.integers(0, 6), st.integers(0, 6))
def test_a_partitions_marks_are_its_documents_in_key_order(rows, d0, d1) -> None:
    """The marks of documents d0 … d1-1 cut from the document-ordered copy (on the heap or in a mapped file) are those
    of a pass over every mark: in key order, keys renumbered over the part, positions shifted to its first unit."""
    import numpy as np

    from unitize.runtime.mapped import scratch
    from unitize.units.marks import Marks
    from unitize.units.unitizers import SegmentKey, UnitSpace

    keys = SegmentKey(layers=1, annotators=3, docs=6, labels=1)
    d0, d1 = min(d0, d1), max(d0, d1)
    marks_rows = sorted((keys.encode(0, 0, a, d), u0, u0 + w) for a, d, u0, w in rows)
    key = np.array([r[0] for r in marks_rows], np.int64)
    u0, u1 = np.array([r[1] for r in marks_rows], np.int32), np.array([r[2] for r in marks_rows], np.int32)
    none = np.zeros(0, np.int64)
    marks = Marks(keys, key, u0, u1, none, none, none, labelled=False)
    n_units = np.full(6, 40, np.int64)
    base = np.concatenate([[0], np.cumsum(n_units)[:-1]])
    space = UnitSpace("char", [f"d{i}" for i in range(6)], n_units, base, base, int(n_units.sum()))
    shift = int(base[d0]) if d0 < 6 else 0
    keep = [(k, a, b) for k, a, b in marks_rows if d0 <= int(keys.documents(np.array([k]))[0]) < d1]
    expected = ([int(keys.renumbered(np.array([k]), d0, d1, False)[0]) for k, _, _ in keep], [a - shift for _, a, _ in keep],
                [b - shift for _, _, b in keep])
    for room in (None, lambda shapes: (scratch(shapes, at_least=0)[0], None)):
        part = marks.part(space, d0, d1, False, marks.by_document(False, room))
        assert (part.key.tolist(), part.u0.tolist(), part.u1.tolist()) == expected


def test_a_batch_process_gives_back_what_each_batch_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked batch process gives back after each batch (the mapped token extents and texts its words were found in:
    over its batches it read them all), and sends back no submission."""
    from types import SimpleNamespace

    calls: list[int] = []
    monkeypatch.setattr(span_run, "give_back", lambda: calls.append(1))
    part = SimpleNamespace(submissions=["s"], results={})
    assert span_run._spilled_part(lambda read: part, tmp_path, (0, lambda: None)) is part
    assert calls == [1] and part.submissions == []
