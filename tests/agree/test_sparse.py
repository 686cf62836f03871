"""`unitize agree` on the sparse layout counts the implicit units instead of building them, with
results identical — every float — to the wide layout of the same corpus."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, ROOT, ted_turkish_pair
from unitize.agree import columns
from unitize.cli import main
from unitize.dataset import directory as data
from unitize.dataset.directory import OutputData
from unitize.layouts.sparse import Stored
from unitize.metrics import stats

EXAMPLES = ROOT / "unitize" / "examples"
TED = CORPORA / "ted-mdb"
CODING = "alpha,fleiss,cohen,cohen-mean,scott,ac1,ac2,percent,cochran-q"
MODES = {"tdb-mini": ["--modes", "separate,combined"], "crowd-mini": ["--modes", "separate,labels", "--keep-missing"]}


def convert(study: Path | None, out: Path, *args: str) -> Path:
    assert main(["convert", *([str(study)] if study else []), "--out", str(out), "--quiet", *args]) == 0
    return out


def agree(out: Path, dest: Path, *args: str) -> list[dict]:
    assert main(["agree", str(out), "--dest", str(dest), "-q", *args]) == 0
    rows = pq.read_table(dest / "results.parquet").to_pylist()
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]


@pytest.fixture
def no_densify(monkeypatch):
    """Building a sparse group's dense rows fails: what runs under it counts the implicit units."""
    def refuse(*args, **kwargs):
        raise AssertionError("a sparse group was densified")
    monkeypatch.setattr(data, "dense_group", refuse)


def pair(example: str, tmp_path: Path) -> tuple[Path, Path]:
    study = EXAMPLES / example / "study.toml"
    modes = MODES.get(example, ["--modes", "separate,labels"])
    wide = convert(study, tmp_path / "wide", "--layout", "wide", *modes)
    sparse = convert(study, tmp_path / "sparse", "--layout", "sparse", *modes, "--partition-units", "400")
    return wide, sparse


RUNS = [
    ["--metric", CODING],
    ["--metric", CODING, "--ci", "0.95", "--bootstrap", "200", "--seed", "1"],
    ["--metric", CODING, "--ci", "0.95", "--bootstrap", "200", "--seed", "1", "--by-doc", "--by-annotator", "--by-label"],
    [],  # the default metrics (alpha-U from the segments and the counted continuum)
    ["--metric", "u-alpha,|u-alpha,cu-alpha,ku-alpha,span-f1,span-f1-overlap,unit-f1", "--by-doc", "--by-label"],
]


@pytest.mark.parametrize("example", ["tdb-mini", "brat-mini", "crowd-mini", "inception-mini", "bio-mini"])
def test_every_coding_metric_equals_the_wide_layout_without_densifying(example, tmp_path, request):
    wide, sparse = pair(example, tmp_path)
    expected = [agree(wide, tmp_path / f"w{i}", *args) for i, args in enumerate(RUNS)]
    request.getfixturevalue("no_densify")
    for i, args in enumerate(RUNS):
        got = agree(sparse, tmp_path / f"s{i}", *args)
        assert got == expected[i], args
    assert any(r["ci_low"] is not None for r in expected[1])
    assert any(r["doc"] for r in expected[2]) and any(r["annotator"] for r in expected[2])
    if example != "tdb-mini":
        assert any(r["label"] for r in expected[2])  # label settings: per-label rows, from the label path


def test_a_matrix_of_a_stored_group_is_built_dense(tmp_path):
    """What needs unit rows (a matrix, the report, exports) still gets the dense rows of a sparse group."""
    wide, sparse = pair("brat-mini", tmp_path)
    dw, ds = OutputData(wide), OutputData(sparse)
    for setting in ds.settings:
        for (g, stored, layers, codes), (g2, table, layers2, codes2) in zip(
                ds.group_tables(setting, implicit=True), dw.group_tables(dw.setting(setting.name))):
            assert isinstance(stored, Stored) and (g, layers) == (g2, layers2)
            for i in range(len(layers)):
                a, b = columns.layer_table(stored, codes, i), columns.layer_table(table, codes2, i)
                assert a.select(b.column_names).to_pydict() == b.to_pydict()


def _cells_of(out: Path, by_doc: bool = True) -> dict:
    d = OutputData(out)
    found = {}
    for setting in d.settings:
        for group, table, layers, codes in d.group_tables(setting, implicit=True):
            docs, g = columns.cells(setting, table, codes, len(layers), by_doc)
            found[setting.name, group] = (layers, docs, g)
    return found


def _same(a, b) -> None:
    (la, da, ga), (lb, db, gb) = a, b
    assert (la, da) == (lb, db)
    assert np.array_equal(ga.units, gb.units) and np.array_equal(ga.presence, gb.presence)
    assert ga.categories == gb.categories
    assert all(x.equals(y) for x, y in zip(ga.stats, gb.stats, strict=True))
    for xs, ys in zip(ga.doc_stats, gb.doc_stats, strict=True):
        assert all(x.equals(y) for x, y in zip(xs, ys, strict=True))


@pytest.mark.parametrize("profiles", [stats.PROFILES, 1])  # 1: cell by cell, all_zero added to from_codes
def test_the_statistics_of_a_stored_group_are_the_dense_rows_statistics(profiles, tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "PROFILES", profiles)
    for example in ("tdb-mini", "crowd-mini"):
        wide, sparse = pair(example, tmp_path / example)
        w, s = _cells_of(wide), _cells_of(sparse)
        assert w.keys() == s.keys()
        for key in w:
            _same(w[key], s[key])


def test_implicit_counts_are_the_units_less_the_stored_rows(tmp_path):
    _, sparse = pair("tdb-mini", tmp_path)
    d = OutputData(sparse)
    for setting in d.settings:
        stored_rows = implicit = 0
        for _, stored, layers, codes in d.group_tables(setting, implicit=True):
            stored_rows += stored.table.num_rows
            implicit += int(stored.implicit(codes, stored.documents()).sum())
        meta = d.manifest["summary"]
        assert stored_rows == meta["unit_rows"][setting.name]
        assert stored_rows + implicit == meta["dense_rows"][setting.name]


@pytest.mark.parametrize("code", [0, 2])
def test_all_zero_is_the_reduction_of_units_coded_alike(code):
    rng = np.random.default_rng(5)
    domain = np.array([0.0, 1.0, 3.0])
    cols = [rng.integers(-1, 3, 40).astype(np.int16) for _ in range(3)]
    names = ("a", "b", "c")
    more = [np.concatenate([c, np.full(7, code, np.int16)]) for c in cols]
    assert stats.from_codes(more, domain, names).equals(stats.from_codes(cols, domain, names) + stats.all_zero(7, domain, names, code))


@pytest.mark.skipif(not TED.is_dir(), reason="../shared/corpora is not beside the repository")
def test_ted_mdb_turkish_sparse_equals_wide_with_bootstrap(tmp_path, request):
    common = ted_turkish_pair(tmp_path) + ["--modes", "separate,labels"]
    wide = convert(None, tmp_path / "wide", *common, "--layout", "wide")
    sparse = convert(None, tmp_path / "sparse", *common, "--layout", "sparse", "--partition-units", "20000")
    args = ["--metric", CODING, "--ci", "0.95", "--bootstrap", "200", "--seed", "1", "--by-doc", "--by-annotator", "--by-label"]
    expected = agree(wide, tmp_path / "w", *args)
    request.getfixturevalue("no_densify")
    assert agree(sparse, tmp_path / "s", *args) == expected
    assert any(r["metric"] == "alpha" and r["value"] != "nan" and r["ci_low"] is not None for r in expected)
