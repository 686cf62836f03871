"""Without ../shared the run says so, at the start and with a count at the end; export --quiet prints nothing."""

from __future__ import annotations

from types import SimpleNamespace

from tests import conftest
from unitize.cli import main


class Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped}
        self.lines: list[str] = []

    def write_line(self, line, **markup):
        self.lines.append(line)


def test_the_header_and_the_summary_say_when_the_real_data_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "CORPORA", tmp_path / "nowhere")
    assert "NOT FOUND" in conftest.pytest_report_header(None)
    reasons = ["../shared/corpora is not beside the repository (real-data tests skipped)", "no irrCAC",
               "../shared/DESIGN.md is not beside the repository", "../shared/corpora has no sample of quotes"]
    reporter = Reporter([SimpleNamespace(longrepr=("x.py", 1, f"Skipped: {r}")) for r in reasons])
    conftest.pytest_terminal_summary(reporter, 0, None)
    assert reporter.lines == [f"2 tests on real data skipped: {tmp_path / 'nowhere'} is not beside the repository"]
    monkeypatch.setattr(conftest, "CORPORA", tmp_path)
    assert conftest.pytest_report_header(None) == f"real data: {tmp_path}"
    quiet = Reporter([])
    conftest.pytest_terminal_summary(quiet, 0, None)
    assert quiet.lines == []


def test_export_quiet_prints_nothing_and_writes_the_export(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["convert", str(conftest.EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["export", str(out), "--to", "long-csv", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert (out / "exports" / "long-csv" / "index.csv").is_file()
