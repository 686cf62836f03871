"""Arrays moved to a mapped scratch file (unitize.runtime.mapped) are the arrays they were: same types, same values,
read-only, nothing left in TMPDIR; a run with its texts, token extents and findings mapped writes the same files."""

from __future__ import annotations

import csv
import json
import mmap
import pickle
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import unitize.adapters.span_rows as span_rows
from unitize.config import Settings
from unitize.model.documents import TextTable
from unitize.run import read_corpus, unitize, write_output
from unitize.runtime import mapped as mapped_module
from unitize.runtime.mapped import Appended, Pages, let_go_all, mapped, mapped_strings
from unitize.runtime.memory import give_back


@pytest.fixture(autouse=True)
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR of the test's own: what a mapping leaves there is seen."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return folder


def test_arrays_come_back_the_same_from_their_mapping(scratch: Path) -> None:
    texts = pa.array(["naïve", None, "", "x" * 70_000, "👍"] * 50, pa.large_string())
    sliced = pa.array([1.5, None, 2.5, 3.5]).slice(1, 2)  # an offset array, with a null
    ints = np.arange(100_003, dtype=np.int32) * 7
    wide = np.array([2**40, -1, 0], dtype=np.int64)
    digest = np.frombuffer(bytes(range(256)) * 3, dtype=np.uint8)
    given = [texts, ints, sliced, wide, digest, np.zeros(0, np.int64)]
    out, pages = mapped(given, at_least=0)
    assert isinstance(pages.mapping, mmap.mmap) and list(scratch.iterdir()) == []  # the file went as soon as it was mapped
    assert out[0].type == pa.large_string() and out[0].equals(texts)
    assert out[2].to_pylist() == [None, 2.5] and out[2].type == pa.float64()
    for got, want in zip([out[1], out[3], out[4]], [ints, wide, digest]):
        assert got.dtype == want.dtype and got.tolist() == want.tolist() and not got.flags.writeable
    assert out[5].dtype == np.int64 and out[5].size == 0
    for a in (out[1], out[3]):
        assert a.ctypes.data % 8 == 0  # aligned for its dtype
    let_go_all()  # pages dropped: read again from the file
    give_back()
    assert out[0].equals(texts) and out[1].tolist() == ints.tolist()
    with pytest.raises(ValueError):
        out[1][0] = 1


def test_small_arrays_stay_on_the_heap() -> None:
    ints = np.arange(10)
    out, pages = mapped([ints, pa.array(["a"])])
    assert out[0] is ints and pages.mapping is None
    pages.let_go()  # nothing to let go
    assert mapped([], at_least=0)[0] == [] and mapped([], at_least=0)[1].mapping is None
    empty = np.zeros(0, np.int64)
    assert mapped([empty], at_least=0)[0][0] is empty  # nothing to map (an empty file cannot be)


def test_an_array_appended_a_chunk_at_a_time_goes_to_its_file_once_large(scratch: Path) -> None:
    """Chunks added to an :class:`Appended` are the concatenation of them: on the heap while small, else written to a
    scratch file as they come (gone from TMPDIR at once) and mapped back, read-only."""
    chunks = [np.arange(n, dtype=np.int64) * 3 + n for n in (5, 0, 1000, 7)]
    small = Appended(np.int32)
    for c in chunks:
        small.add(c)
    on_heap, pages = small.array()
    assert pages.mapping is None and on_heap.dtype == np.int32 and on_heap.tolist() == np.concatenate(chunks).tolist()
    large = Appended(np.int32, at_least=1000)  # the third chunk takes it past 1,000 bytes: a file from there on
    for c in chunks:
        large.add(c)
        assert list(scratch.iterdir()) == []
    held, pages = large.array()
    assert isinstance(pages.mapping, mmap.mmap) and isinstance(held.base.obj, mmap.mmap) and not held.flags.writeable
    assert held.dtype == np.int32 and held.tolist() == np.concatenate(chunks).tolist()
    nothing = Appended(np.int64, at_least=0)
    nothing.add(np.zeros(0, np.int64))
    empty, pages = nothing.array()
    assert empty.dtype == np.int64 and empty.size == 0 and pages.mapping is None and list(scratch.iterdir()) == []
    assert Appended(np.int16).array()[0].dtype == np.int16


def test_strings_appended_a_chunk_at_a_time_are_the_strings(scratch: Path) -> None:
    """mapped_strings: string chunks (plain, large, sliced, with nulls, empty) as one large_string array equal to
    their concatenation; past the bound, its text and offsets in mappings (TMPDIR empty), let go and read again."""
    chunks = [pa.array(["naïve", None, "👍"]), pa.array([], pa.string()), pa.array(["dropped", "x" * 3000, "", None, "ç"], pa.large_string()).slice(1),
              pa.array([None, None]), pa.array(["a"])]
    expected = [v for c in chunks for v in c.to_pylist()]
    on_heap, pages = mapped_strings(chunks)
    assert on_heap.type == pa.large_string() and on_heap.to_pylist() == expected and pages.mapping is None
    held, pages = mapped_strings(iter(chunks), at_least=100)
    held.validate(full=True)
    assert held.to_pylist() == expected and held.null_count == 4 and isinstance(pages.mapping, mmap.mmap) and len(pages.also) == 1
    assert list(scratch.iterdir()) == []
    pages.let_go()
    assert held.take(pa.array([2, 0, 6])).to_pylist() == ["👍", "naïve", "ç"]
    none, _ = mapped_strings([pa.array(["", ""])], at_least=0)
    assert none.to_pylist() == ["", ""] and mapped_strings([])[0].to_pylist() == []


def test_mapped_arrays_and_their_pages_pickle_as_copies() -> None:
    (ints, texts), pages = mapped([np.arange(5, dtype=np.int64), pa.array(["a", "b"])], at_least=0)
    back = pickle.loads(pickle.dumps((ints, texts, pages)))
    assert back[0].tolist() == [0, 1, 2, 3, 4] and back[1].to_pylist() == ["a", "b"]
    assert isinstance(back[2], Pages) and back[2].mapping is None


def test_a_mapping_lives_as_long_as_its_arrays() -> None:
    (ints,), pages = mapped([np.arange(1000, dtype=np.int64)], at_least=0)
    mapping = pages.mapping
    assert mapping in mapped_module._live
    del pages, mapping
    assert len(mapped_module._live) >= 1 and ints.sum() == 499500  # the array keeps its mapping
    live = len(mapped_module._live)
    del ints
    assert len(mapped_module._live) == live - 1


def test_a_mapped_text_table_is_the_table_on_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    ids, values = [f"d{i}" for i in range(40)], [("é" * i) + "\n" for i in range(40)]
    heap = TextTable(pa.array(ids), pa.array(values), "t.csv")
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 0)
    table = TextTable(pa.array(ids), pa.array(values), "t.csv")
    assert heap._pages.mapping is None and table._pages.mapping is not None  # the texts
    assert [p.mapping is None for p in heap._pages.also] == [True, True, True]  # their offsets, sizes, digests
    assert [p.mapping is None for p in table._pages.also] == [False, False, False]
    assert dict(table.items()) == dict(heap.items())
    rows = np.array([3, 0, 39])
    assert table.lengths(rows).tolist() == [4, 1, 40] and table.texts(rows) == [values[3], values[0], values[39]]
    f, g = table.fields(rows), heap.fields(rows)
    assert {k: v if isinstance(v, list) else v.to_pylist() for k, v in f.items()} == {k: v if isinstance(v, list) else v.to_pylist() for k, v in g.items()}


def crowd_tables(root: Path, texts: int = 60, annotators: int = 12, seed: int = 5) -> Settings:
    """A small crowd span study (a roster, three annotators a text) with word units."""
    rng = random.Random(seed)
    words = ["the", "comment", "is", "rude", "and", "dümb", "ok", "👍"]
    with (root / "texts.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["doc_id", "text"])
        body = {f"t{i:03d}": " ".join(rng.choice(words) for _ in range(rng.randrange(3, 25))) for i in range(texts)}
        w.writerows(body.items())
    roster, spans, key = [["key", "doc_id", "annotator"]], [["key", "label", "begin", "end"]], 0
    for doc, text in body.items():
        for who in rng.sample(range(annotators), 3):
            key += 1
            roster.append([key, doc, f"w{who}"])
            for _ in range(rng.randrange(0, 3)):
                b = rng.randrange(0, len(text))
                spans.append([key, "toxic", b, min(len(text), b + rng.randrange(1, 12))])
    for name, rows in (("roster.csv", roster), ("spans.csv", spans)):
        with (root / name).open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(rows)
    return Settings(format="span-table", input={"annotations": root / "spans.csv", "texts": root / "texts.csv", "roster": "roster.csv"},
                    pairs=(("char", "interval"), ("word", "interval")), tokenizer="whitespace", base=root, out=root / "out")


def written(result, out: Path) -> dict[str, bytes]:
    write_output(result, out)
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    manifest = json.loads(files.pop("manifest.json"))
    manifest.pop("run")
    files["manifest.json"] = json.dumps(manifest, sort_keys=True).replace(str(out), "OUT").encode()
    return files


def test_a_run_with_its_arrays_mapped_writes_the_same_files(tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = crowd_tables(tmp_path)
    monkeypatch.setattr(span_rows, "BATCH_SPANS", 20)  # several batches, each in a forked process
    on_heap = unitize(read_corpus(settings, stream=True), settings)
    assert on_heap.corpus.documents._pages.mapping is None
    heap_files = written(on_heap, tmp_path / "heap")
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 0)
    result = unitize(read_corpus(settings, stream=True), settings)
    assert result.corpus.documents._pages.mapping is not None  # the texts
    starts = result.spaces["word"].starts
    assert starts is not None and not starts.flags.writeable and isinstance(starts.base.obj, mmap.mmap)  # the token extents
    assert len(result.findings) > 0 and all(isinstance(b, memoryview) for r in result.findings.runs for b in r.blocks)
    from unitize.model.assigned import Assigned

    assert isinstance(result.universe["all"], Assigned) and result.universe == on_heap.universe  # the crowd group as columns
    files = written(result, tmp_path / "mapped")
    assert sorted(files) == sorted(heap_files) and [n for n in files if files[n] != heap_files[n]] == []
    assert len(result.findings.runs) > 2 and list(scratch.iterdir()) == []
