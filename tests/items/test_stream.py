"""Item matrices built a bucket of items at a time are the matrices built at once, to the byte."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import CORPORA, ROOT, needs_shared
from unitize.config import ConfigError, load_toml
from unitize.items import ItemOptions, build, parse_options
from unitize.items import run as item_run
from unitize.items import stream as item_stream
from unitize.layouts import LONG, WIDE
from unitize.model import ItemLabel
from unitize.output import parts
from unitize.run import convert
from unitize.runtime import spool
from unitize.schema import setting_path

ANNOTATORS = ["a", "b", "c"]
OPTIONS = {
    "plain": {},
    "complete": {"complete": True},
    "conditional": {"groups": {"h": {"applies_when": {"level": "g", "value": "p"}, "reach": "any"}}},
    "every": {"groups": {"h": {"applies_when": {"level": "g", "value": ["p", "q+p"]}, "reach": "every"}}},
    "split": {"groups": {"g": {"multi": "split", "separator": ";"}}},
    "ordinal": {"groups": {"g": {"level": "ordinal", "values": ["q", "p", "q+p"]}}},
}

_records = st.lists(
    st.tuples(st.sampled_from(["g", "h"]), st.sampled_from(["1", "2", "03", "10", "x", "y7"]), st.sampled_from(["a", "b", "c", "d"]),
              st.sampled_from([None, "p", "q", "p;q", "zz"])),
    max_size=60,
)


def _everything(result, annotators) -> tuple:
    wide = [WIDE.item_table(m.name, m.cells(), annotators, WIDE.items_schema(annotators, {})) for m in result.groups]
    long = [LONG.item_table(m.name, m.cells(), annotators, LONG.items_schema(annotators, {})) for m in result.groups]
    return (
        [(m.name, m.split_of, m.numbers, m.order, m.n_items, m.n_cells) for m in result.groups],
        wide,
        long,
        sorted(json.dumps(f.as_dict(), sort_keys=True) for f in result.findings),
        result.accounting,
        result.items_by_group,
    )


@hsettings(max_examples=120, deadline=None)
@given(_records, st.sampled_from(sorted(OPTIONS)), st.integers(1, 9), st.sampled_from([0, 3, None]))
def test_any_bucket_size_gives_the_matrices_of_one_bucket(records, which, bucket, memory_rows):
    labels = [ItemLabel(g, i, a, v, "f.csv", n) for n, (g, i, a, v) in enumerate(records, 2)]
    options = parse_options(OPTIONS[which])
    try:
        whole = build(labels, ANNOTATORS, options)
    except ConfigError:  # [items.groups] names a group these records lack: refused before any bucket
        with pytest.raises(ConfigError):
            build(labels, ANNOTATORS, options, bucket_records=bucket, memory_rows=memory_rows)
        assume(False)
    cut = build(labels, ANNOTATORS, options, bucket_records=bucket, memory_rows=memory_rows)
    one, other = _everything(whole, ANNOTATORS), _everything(cut, ANNOTATORS)
    assert one[0] == other[0] and one[3:] == other[3:]
    for a, b in zip(one[1] + one[2], other[1] + other[2]):
        assert a.equals(b), (a.to_pylist(), b.to_pylist())


def test_buckets_hold_whole_items_in_natural_order():
    labels = [ItemLabel("g", item, who, "p", "f.csv", n) for n, (item, who) in enumerate(
        [(i, a) for i in ("10", "9", "x", "010", "2", "b", "a") for a in ("a", "b")], 2)]
    result = build(labels, ["a", "b"], ItemOptions(), bucket_records=2)
    (m,) = result.groups
    assert len(m.chunk_items) > 1  # it did cut
    assert m.items == ["2", "9", "010", "10", "a", "b", "x"]  # numbers by value, then as written
    assert sum(m.chunk_items) == 7 and sum(m.chunk_cells) == 14


def _convert(study: Path, out: Path, **settings_changes) -> dict:
    settings = dataclasses.replace(load_toml(study), out=out, **settings_changes)
    _, manifest = convert(settings)
    return manifest


def _same_output(one: Path, other: Path) -> None:
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(other) for p in other.rglob("*") if p.is_file())
    for relative in files:
        if relative.name == "manifest.json":
            a, b = (json.loads((root / relative).read_text()) for root in (one, other))
            for manifest in (a, b):  # when it ran, and where to
                manifest.pop("run")
                manifest["settings"].pop("out")
            assert a == b
        else:
            assert filecmp.cmp(one / relative, other / relative, shallow=False), relative


def _streamed(monkeypatch, bucket: int, memory_rows: int, part_rows: int | None = None) -> None:
    monkeypatch.setattr(item_stream, "BUCKET_RECORDS", bucket)
    monkeypatch.setattr(spool, "MEMORY_ROWS", memory_rows)
    if part_rows is not None:
        monkeypatch.setattr(item_run, "item_slices", lambda datasets: parts.item_slices(datasets, limit=part_rows))


@pytest.mark.parametrize("part_rows", [None, 7])
def test_a_streamed_run_writes_the_bytes_of_a_one_bucket_run(tmp_path, monkeypatch, part_rows):
    study = tmp_path / "labels-mini"
    shutil.copytree(ROOT / "unitize" / "examples" / "labels-mini", study)
    text = (study / "study.toml").read_text().replace('multi = "set"', 'multi = "split"')  # split groups too
    (study / "study.toml").write_text(text)
    with monkeypatch.context() as m:
        if part_rows is not None:
            m.setattr(item_run, "item_slices", lambda datasets: parts.item_slices(datasets, limit=part_rows))
        one = _convert(study / "study.toml", tmp_path / "one")
    with monkeypatch.context() as m:
        _streamed(m, bucket=3, memory_rows=2, part_rows=part_rows)
        other = _convert(study / "study.toml", tmp_path / "other")
    assert one["accounting"] == other["accounting"] and one["accounting"]["labels"]["read"] > 3 * 10
    assert list(one["summary"]["items"]) == ["offensive", "severity", "target", "target_group", "topics"]  # upper levels first
    _same_output(tmp_path / "one", tmp_path / "other")


@needs_shared
def test_toxicspans_labels_streamed_write_the_same_bytes(tmp_path, monkeypatch):
    from unitize.config import Settings

    def settings(out: str) -> Settings:
        return Settings(format="labels", out=tmp_path / out, base=tmp_path, input={
            "annotations": CORPORA / "toxic-spans" / "annotations.csv", "item": "comment_id", "annotator": "worker",
            "labels": ["all toxic", "not toxic"]})

    _, one = convert(settings("one"))
    with monkeypatch.context() as m:
        _streamed(m, bucket=5_000, memory_rows=4_096, part_rows=20_000)
        _, other = convert(settings("other"))
    assert one["accounting"]["labels"] == {"read": 118_430, "duplicate": 2, "labelled": 118_428}
    assert one["summary"]["items"] == other["summary"]["items"] == {
        g: {"items": 16_100, "complete": 0, "kept": 16_100} for g in ("all toxic", "not toxic")}
    files = sorted(p.name for p in (tmp_path / "other" / setting_path("items-long")).iterdir())
    assert files == [f"part-{k:05d}.parquet" for k in range(6)]  # 118,428 rows in parts of 20,000
    with monkeypatch.context() as m:
        m.setattr(item_run, "item_slices", lambda datasets: parts.item_slices(datasets, limit=20_000))
        _, one = convert(settings("one"))
    _same_output(tmp_path / "one", tmp_path / "other")


def test_the_table_of_a_group_is_its_rows(tmp_path):
    labels = [ItemLabel("g", i, a, v, "f.csv", n) for n, (i, a, v) in enumerate([("1", "a", "p"), ("1", "b", None), ("2", "c", "q")], 2)]
    (m,) = build(labels, ANNOTATORS, ItemOptions()).groups
    assert m.items == ["1", "2"] and m.rows(ANNOTATORS) == [{"a": "p", "b": None}, {"c": "q"}]
    table = WIDE.item_table("g", m.cells(), ANNOTATORS, WIDE.items_schema(ANNOTATORS, {}))
    assert table.to_pylist() == [{"group": "g", "item": "1", "a": "p", "b": None, "c": None},
                                 {"group": "g", "item": "2", "a": None, "b": None, "c": "q"}]
    assert isinstance(table.column("a").type, pa.DictionaryType)
