"""A subset run (--settings, --groups, fewer metrics) adds to agreement/ of the same output; it never erases it."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq

from tests.conftest import EXAMPLE
from unitize.agree import OUTPUT_KEY
from unitize.cli import main


def _cells(path):
    t = pq.read_table(path)
    return sorted(set(zip(t["setting"].to_pylist(), t["group"].to_pylist(), t["metric"].to_pylist(), strict=True)))


def test_a_subset_run_replaces_its_own_rows_and_keeps_every_other(out, tmp_path, capsys):
    work = tmp_path / "out"
    shutil.copytree(out, work)
    shutil.rmtree(work / "agreement", ignore_errors=True)
    assert main(["agree", str(work), "-q"]) == 0
    full_csv = (work / "agreement" / "results.csv").read_bytes()
    full_cells = _cells(work / "agreement" / "results.parquet")
    full_summary = (work / "agreement" / "summary.md").read_text()
    settings = sorted({s for s, _, _ in full_cells})
    assert len(settings) == 8 and len(full_cells) == 8 * 4 * 5  # 8 settings (separate, combined), 4 connectives, 5 default metrics

    # the same numbers measured again for one setting: the file is the full run's, byte for byte (the diagnostics
    # that compare its interval and boundary settings too)
    assert main(["agree", str(work), "--settings", "word-interval"]) == 0
    printed = capsys.readouterr().out
    assert (work / "agreement" / "results.csv").read_bytes() == full_csv
    kept = [line for line in printed.splitlines() if "earlier results of this output kept" in line]
    total = pq.read_table(work / "agreement" / "results.parquet").num_rows
    assert len(kept) == 1 and kept[0].split()[1] == str(total - _rows_of(work, "word-interval"))
    # one group, one metric: only those rows are new; every (setting, group, metric) is still there
    assert main(["agree", str(work), "--settings", "char-boundary", "--groups", "ve", "--metric", "percent", "-q"]) == 0
    cells = _cells(work / "agreement" / "results.parquet")
    assert cells == sorted(set(full_cells) | {("char-boundary", "ve", "percent")})
    assert (work / "agreement" / "summary.md").read_text() == full_summary  # every setting's alpha-u, as the full run had


def _rows_of(work, setting):
    t = pq.read_table(work / "agreement" / "results.parquet")
    return sum(1 for s in t["setting"].to_pylist() if s == setting)


def test_after_a_new_convert_a_subset_run_starts_afresh(tmp_path):
    work = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(work), "-q"]) == 0
    assert main(["agree", str(work), "-q"]) == 0
    before = pq.read_table(work / "agreement" / "results.parquet")
    assert before.schema.metadata[OUTPUT_KEY]
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(work), "--units", "word", "--approaches", "interval", "-q"]) == 0
    assert main(["agree", str(work), "--settings", "word-interval", "-q"]) == 0
    after = pq.read_table(work / "agreement" / "results.parquet")
    assert set(after["setting"].to_pylist()) == {"word-interval"}  # the earlier rows measured another output
    assert after.schema.metadata[OUTPUT_KEY] != before.schema.metadata[OUTPUT_KEY]
