"""Agreement of large groups read in batches (unitize.agree.batches, unitize.dataset.batches): the same results as one pass over the
whole group — crowd spans and item labels, with tiny batches and parts, locally and cut into tasks by parts."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest

import unitize
from tests.conftest import ROOT
from unitize.agree import batches, tasks
from unitize.agree.measure import measure
from unitize.cli import main
from unitize.dataset.batches import batches as read_batches
from unitize.dataset.directory import OutputData
from unitize.layouts import long as long_layout
from unitize.runtime.executors import Executor

EXAMPLES = ROOT / "unitize" / "examples"
METRICS_NO_GAMMA = ["alpha-u", "alpha", "fleiss", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent", "cochran-q", "u-alpha"]


class PickledTasks(Executor):
    """A parallel executor that runs here, every task and result through pickle (as a pool or Dask would)."""

    name, workers = "pickled", 2

    @property
    def parallel(self) -> bool:
        return True

    def map(self, fn, items):
        return [pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(x))))) for x in items]


def rows(out: Path, executor=None, **kwargs) -> list[dict]:
    table = measure(out, METRICS_NO_GAMMA, executor=executor, by_doc=True, by_label=True, by_annotator=True, **kwargs)
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in table.to_pylist()]


def convert(study: Path, out: Path, *args: str) -> Path:
    assert main(["convert", str(study), "--out", str(out), "--quiet", *args]) == 0
    return out


@pytest.fixture(params=["tdb-mini", "crowd-mini"])
def long_output(request, tmp_path) -> Path:
    """A long-layout span output in several work partitions (tdb-mini: groups, Arg1 and Arg2; labels mode too)."""
    study = EXAMPLES / request.param / "study.toml"
    extra = ["--modes", "separate,labels"] if request.param == "tdb-mini" else []
    return convert(study, tmp_path / "out", "--layout", "long", "--partition-units", "300" if request.param == "tdb-mini" else "40", *extra)


@pytest.mark.parametrize("dense_cells", [0, long_layout.DENSE_CELLS])  # 0: every group is crowd data
def test_long_groups_in_batches_equal_the_whole_group(long_output, dense_cells, monkeypatch):
    monkeypatch.setattr(long_layout, "DENSE_CELLS", dense_cells)
    whole = rows(long_output)
    monkeypatch.setattr(batches, "BATCH_ROWS", 7)
    data = OutputData(long_output)
    setting = data.settings[0]
    assert any(len(list(read_batches(data, setting, g, None, batches.BATCH_ROWS))) > 1 for g in data.groups(setting))
    assert rows(long_output) == whole
    assert rows(long_output, executor=PickledTasks()) == whole  # groups cut by parts, statistics reduced


def test_split_tasks_are_planned_by_parts_and_reduced(long_output, monkeypatch):
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 0)
    monkeypatch.setattr(batches, "BATCH_ROWS", 7)
    data = OutputData(long_output)
    jobs = tasks.plan(data, data.settings, None, 2)
    split = [j for j in jobs if j[2] is not None]
    assert split and all(len(j[1]) == 1 for j in split)
    for name, groups, parts in split:  # the runs of parts of a group: in order, disjoint, covering the parts holding it
        mine = [j[2] for j in split if j[:2] == (name, groups)]
        assert all(a[1] <= b[0] for a, b in zip(mine, mine[1:]))
        holding = [k for k, _ in data._row_groups(data.setting(name)).get(groups[0], [])]
        assert all(any(lo <= k < hi for lo, hi in mine) for k in holding)


def test_batches_never_split_a_key(long_output):
    data = OutputData(long_output)
    setting = data.settings[0]
    for group in data.groups(setting):
        seen: set = set()
        for table in read_batches(data, setting, group, None, 5):
            keys = set(zip(table.column("layer").to_pylist(), table.column("doc_id").to_pylist()))
            assert not keys & seen
            seen |= keys
        assert sum(t.num_rows for t in read_batches(data, setting, group, None, 5)) == data._read_group(setting, group).num_rows


@pytest.mark.parametrize("dense_cells", [0, long_layout.DENSE_CELLS])
def test_item_groups_in_batches_equal_the_whole_group(tmp_path, monkeypatch, dense_cells):
    import unitize.items.run as item_run
    import unitize.output.parts as parts

    monkeypatch.setattr(item_run, "item_slices", lambda datasets: parts.item_slices(datasets, limit=7))  # items cut across parts
    study = EXAMPLES / "labels-mini" / "study.toml"
    settings = unitize.override(unitize.load_settings(study), items={**unitize.load_settings(study).items, "layouts": ["wide", "long"]})
    unitize.write_output(unitize.unitize(unitize.read_corpus(settings), settings), tmp_path / "out")
    out = tmp_path / "out"
    assert len(OutputData(out).setting("items-long").parts) > 2
    monkeypatch.setattr(long_layout, "DENSE_CELLS", dense_cells)
    whole = rows(out)
    monkeypatch.setattr(batches, "BATCH_ROWS", 4)
    assert rows(out) == whole
    assert rows(out, executor=PickledTasks()) == whole


def test_batch_parts_add_up_to_the_group(long_output):
    """The statistics of a group's runs of parts add up to those of the whole group."""
    data = OutputData(long_output)
    setting = data.settings[0]
    group = data.groups(setting)[0]
    whole = batches.group_part(data, setting, group, None, True)
    n = len(setting.parts)
    split = [batches.group_part(data, setting, group, None, True, (k, k + 1)) for k in range(n)]
    total: dict = {}
    for found in split:
        for layer, part in found.items():
            total[layer] = total[layer] + part if layer in total else part
    assert sorted(total) == sorted(whole)
    for layer in whole:
        assert total[layer].stats.equals(whole[layer].stats)
        assert total[layer].raters == whole[layer].raters and total[layer].docs == whole[layer].docs
