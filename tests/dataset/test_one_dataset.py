"""Every matrix folder of an output directory is one dataset (output format 3): ``units/`` (0/1 and bit-mask
unit matrices, the wide item matrix), ``labels/`` (labels mode: label strings) and ``long/`` (the long item
matrix) each hold settings of one schema, so pandas, pyarrow.dataset, polars, Dask and DuckDB read a folder
whole, with a ``setting`` column from the Hive folders and every setting's rows; format 2 (every setting in
``units/``) still reads."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize.agree import measure
from unitize.cli import main
from unitize.dataset.directory import OutputData
from unitize.errors import DataError
from unitize.schema import DATASETS, FORMAT_VERSION, dataset_folder

EXAMPLES = ROOT / "unitize" / "examples"

#: (example, convert flags, the folders it must write)
RUNS = {
    "brat-mini": ("brat-mini", (), {"units", "labels"}),
    "tdb-mini-modes": ("tdb-mini", ("--modes", "separate,combined,labels"), {"units", "labels"}),
    "tdb-mini-sparse": ("tdb-mini", ("--modes", "separate,combined,labels", "--layout", "sparse"), {"units", "labels"}),
    "tdb-mini-long": ("tdb-mini", ("--modes", "separate,labels", "--layout", "long"), {"units", "labels"}),
    "labels-mini": ("labels-mini", (), {"units", "long"}),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def run(request, tmp_path_factory) -> Path:
    example, flags, _ = RUNS[request.param]
    out = tmp_path_factory.mktemp(request.param) / "out"
    assert main(["convert", str(EXAMPLES / example / "study.toml"), "--out", str(out), "--quiet", *flags]) == 0
    return out


def expected_rows(out: Path) -> dict[str, Counter[str]]:
    """Per folder, the rows of each setting as the manifest lists them (every part's rows)."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format_version"] == FORMAT_VERSION == 3
    rows: dict[str, Counter[str]] = {}
    for o in manifest["outputs"]:
        folder, _, rest = o["path"].partition("/")
        if folder in DATASETS:
            setting = rest.split("/")[0].removeprefix("setting=")
            assert dataset_folder(setting) == folder
            rows.setdefault(folder, Counter())[setting] += o["rows"]
    for folder, counts in rows.items():  # the summary counts the same rows per setting
        assert {s: manifest["summary"]["unit_rows"][s] for s in counts} == dict(counts)
    return rows


def counts(values) -> Counter[str]:
    return Counter(str(v) for v in values)


def test_every_reader_reads_every_folder_whole(run):
    rows = expected_rows(run)
    example = next(k for k, (_, _, folders) in RUNS.items() if run.parent.name.startswith(k))
    assert set(rows) == RUNS[example][2]
    assert not {p.name for p in run.iterdir()} & (set(DATASETS) - set(rows))  # no empty folder written
    for folder, want in rows.items():
        path = run / folder
        schemas = {pq.read_schema(p).remove_metadata() for p in path.glob("setting=*/part-*.parquet")}
        assert len(schemas) == 1, f"{folder}/ holds {len(schemas)} schemas"

        import pandas as pd

        assert counts(pd.read_parquet(path)["setting"]) == want

        table = ds.dataset(path, partitioning="hive").to_table()
        assert counts(table.column("setting").to_pylist()) == want

        import duckdb

        got = duckdb.sql(f"SELECT setting, count(*) FROM read_parquet('{path.as_posix()}/*/*.parquet', hive_partitioning = true) "
                         "GROUP BY setting").fetchall()
        assert Counter({s: n for s, n in got}) == want


def test_polars_reads_every_folder_whole(run):
    pl = pytest.importorskip("polars", reason="polars is not installed (pip install -e '.[test]')")
    for folder, want in expected_rows(run).items():
        frame = pl.scan_parquet(run / folder / "**" / "*.parquet", hive_partitioning=True).collect()
        assert counts(frame["setting"].to_list()) == want


def test_dask_reads_every_folder_whole(run):
    dd = pytest.importorskip("dask.dataframe", reason="dask is not installed (pip install -e '.[dask]')")
    for folder, want in expected_rows(run).items():
        assert counts(dd.read_parquet(run / folder).compute()["setting"]) == want


def test_the_value_columns_keep_their_types(run):
    """Nothing is recoded: 0/1 and bit masks stay uint8, labels stay dictionary strings, in every layout."""
    for folder in expected_rows(run):
        schema = pq.read_schema(next((run / folder).glob("setting=*/part-*.parquet")))
        meta = json.loads(schema.metadata[b"unitize"])
        value = "value" if "value" in schema.names else meta["annotators"][0]
        if folder == "units" and meta.get("kind", "units") == "units":
            assert schema.field(value).type == pa.uint8()
        else:
            assert schema.field(value).type == pa.dictionary(pa.int32(), pa.string())


def test_format_2_with_label_settings_in_units_still_reads(run, tmp_path):
    """A format-2 directory (every setting in units/) reads as before: the same settings, the same agreement."""
    old = tmp_path / "old"
    shutil.copytree(run, old)
    for folder in DATASETS[1:]:
        if (old / folder).is_dir():
            for setting in (old / folder).iterdir():
                setting.rename(old / "units" / setting.name)
            (old / folder).rmdir()
    manifest = json.loads((old / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = 2
    (old / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    new, before = OutputData(run), OutputData(old)
    assert [s.name for s in before.settings] == [s.name for s in new.settings]
    assert all(s.path.parent.parent.name == "units" for s in before.settings)
    assert measure(old, ["alpha"]).to_pylist() == measure(run, ["alpha"]).to_pylist()


def test_a_setting_in_two_folders_is_refused(run, tmp_path):
    copy = tmp_path / "twice"
    shutil.copytree(run, copy)
    first = OutputData(copy).settings[0]
    elsewhere = next(f for f in DATASETS if f != first.path.parent.parent.name)
    shutil.copytree(first.path.parent, copy / elsewhere / first.path.parent.name)
    with pytest.raises(DataError, match="in two folders"):
        OutputData(copy)


def test_a_newer_format_is_refused_naming_the_upgrade(run, tmp_path):
    copy = tmp_path / "newer"
    shutil.copytree(run, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = FORMAT_VERSION + 1
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DataError, match="upgrade unitize"):
        OutputData(copy)
