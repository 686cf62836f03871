"""agree's results a record batch at a time: the rows of a ``--by-doc`` run go to a scratch file past a bound and
``results.parquet``, ``results.csv``, the screen and ``--json`` are written from them a batch at a time, with the same
rows (and, under a row group, the same bytes) as the table held whole."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

pytest.importorskip("krippendorff")

from unitize import agree as agree_module  # noqa: E402
from unitize.agree import agree, gathered, measure, results_file  # noqa: E402
from unitize.cli import main  # noqa: E402
from unitize.metrics import whole_row  # noqa: E402
from unitize.output import neutral_table  # noqa: E402

METRICS = ["alpha", "cohen", "alpha-u"]


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 50 rows, past 100 rows on disk, row groups of 128 rows: the example's by-doc run crosses each."""
    monkeypatch.setattr(gathered, "BATCH_ROWS", 50)
    monkeypatch.setattr(gathered, "MEMORY_ROWS", 100)
    monkeypatch.setattr(results_file, "ROW_GROUP_ROWS", 128)


def test_gathered_rows_spooled_come_back_as_added_with_the_diagnostics(out, small_batches):
    whole = measure(out, METRICS, by_doc=True).to_pylist()  # with the defaults: one batch in memory
    results = agree_module.measure_rows(out, METRICS, by_doc=True)
    batches = list(results.to_batches())
    assert len(batches) > 3 and results.num_rows == len(whole) > 400
    assert json.dumps([r for b in batches for r in b.to_pylist()]) == json.dumps(whole)  # NaN as NaN
    assert json.dumps(results.whole.to_pylist()) == json.dumps([r for r in whole if whole_row(r)])
    diagnosed = [r for r in results.whole.to_pylist() if r["diagnostics"] and "only-disagreement" in r["diagnostics"]]
    assert diagnosed  # the across-approaches diagnostics are in the whole rows too
    assert json.dumps(list(results.to_batches())[0].to_pylist()) == json.dumps(batches[0].to_pylist())  # read again


def test_gathered_spool_moves_to_disk_past_its_bound(small_batches):
    from unitize.schema import results_schema

    schema = results_schema()
    g = gathered.Gathered(schema)
    row = {name: None for name in schema.names}
    for k in range(7):
        g.add([{**row, "setting": "s", "group": f"g{k}", "metric": "alpha", "value": float(k), "doc": f"d{k}"}] * 30)
    results = g.results()
    assert g.spool.on_disk and results.num_rows == 210 and results.whole.num_rows == 0
    assert [r["value"] for b in results.to_batches() for r in b.to_pylist()] == [float(k) for k in range(7) for _ in range(30)]


def test_agree_writes_the_rows_of_the_table_held_whole(out, tmp_path, small_batches):
    expected = measure(out, METRICS, by_doc=True)
    result = agree(out, metrics=METRICS, by_doc=True, dest=tmp_path / "a")
    written = pq.ParquetFile(tmp_path / "a" / "results.parquet")
    groups = [written.metadata.row_group(i).num_rows for i in range(written.metadata.num_row_groups)]
    assert len(groups) > 2 and all(128 <= n < 128 + 150 for n in groups[:-1])  # a row group ends at a batch's end
    assert json.dumps(written.read().to_pylist()) == json.dumps(expected.to_pylist())
    csv = io.BytesIO()
    pacsv.write_csv(neutral_table(expected), csv)
    assert (tmp_path / "a" / "results.csv").read_bytes() == csv.getvalue()  # the bytes of the CSV written whole
    assert json.dumps(result.results.to_pylist()) == json.dumps(expected.to_pylist())  # the API's table, read whole
    summary = (tmp_path / "a" / "summary.csv").read_text()
    assert summary == (agree(out, metrics=METRICS, dest=tmp_path / "b").dest / "summary.csv").read_text()


def test_small_results_file_is_the_table_written_whole(out, tmp_path):
    """Under a row group the file has the bytes ``pq.write_table`` gives (one row group)."""
    agree(out, metrics=["alpha"], dest=tmp_path / "a")
    table = pq.read_table(tmp_path / "a" / "results.parquet")
    again = io.BytesIO()
    pq.write_table(table, again, compression="zstd", compression_level=1)
    assert (tmp_path / "a" / "results.parquet").read_bytes() == again.getvalue()


def test_cli_json_and_screen_from_batches(out, tmp_path, capsys, small_batches):
    expected = measure(out, METRICS, by_doc=True).to_pylist()
    assert main(["agree", str(out), "--metric", ",".join(METRICS), "--by-doc", "--dest", str(tmp_path / "j"), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(expected)
    assert [json.loads(line)["value"] for line in lines] == [None if v != v else v for v in (r["value"] for r in expected)]
    assert main(["agree", str(out), "--metric", ",".join(METRICS), "--by-doc", "--dest", str(tmp_path / "s")]) == 0
    printed = capsys.readouterr().out
    nans = sum(1 for r in expected if r["value"] != r["value"])
    assert f"{len(expected)} results ({nans} NaN, with reasons) written to {tmp_path / 's'}" in printed


def test_notes_read_every_batch():
    from unitize.agree.gathered import Results
    from unitize.cli.agree import notes
    from unitize.schema import results_schema

    schema = results_schema()
    row = {name: None for name in schema.names}
    nan = [{**row, "metric": "alpha", "value": float("nan"), "reason": "one annotator"}] * 3
    table = pa.Table.from_pylist(nan + [{**row, "metric": "alpha", "value": float("nan"), "reason": "no units"}], schema=schema)
    chunked = Results(schema, 4, lambda: iter(table.to_batches(max_chunksize=1)), table.slice(0, 0))
    assert notes(chunked) == ["warning: every result is NaN. Why: one annotator (3×); no units (1×)"]
    mixed = pa.Table.from_pylist([*nan, {**row, "metric": "alpha", "value": 0.5,
                                         "params": json.dumps({"messages": {"x": 2}})}], schema=schema)
    assert notes(Results.of(mixed)) == ["note: pygamma-agreement logged 'x' 2 times (captured; see the gamma rows' params)"]


def test_settings_of_one_unit_measured_in_step_give_each_ones_own_rows(out, small_batches):
    """With span metrics, the settings of one unit type are measured group by group together (a group's segments read
    and placed once for them all), a later setting's rows gathered apart and put after the earlier's: the same rows,
    in the same order, as each setting measured alone — across the spool's bounds, with the diagnostics."""
    from unitize.agree.measure import _in_step
    from unitize.dataset import OutputData

    metrics = ["alpha", "alpha-u", "span-f1"]
    data = OutputData(out)
    runs = _in_step(data.settings, agree_module.registry.resolve(metrics))
    assert [[s.unit for s in run] for run in runs] == [["char"] * 4, ["word"] * 4]  # interval, boundary; separate, combined
    together = measure(out, metrics, by_doc=True)
    alone = [measure(out, metrics, by_doc=True, settings=[s.name]).to_pylist() for s in data.settings]
    assert together.num_rows > 400
    strip = [{k: v for k, v in r.items() if k != "diagnostics"} for part in alone for r in part]
    assert json.dumps([{k: v for k, v in r.items() if k != "diagnostics"} for r in together.to_pylist()]) == json.dumps(strip)
    # the across-approaches diagnostics compare the settings' rows: they need both, as the full run has them
    assert any(r["diagnostics"] for r in together.to_pylist())
