"""A warning another package raises while a command runs is shown as Python shows it, not turned into a crash
(warnings.showwarning is called with six arguments: the message, its category, file, line, the stream and the source
line)."""

from __future__ import annotations

import warnings

import pytest

from unitize.cli import _show_warning


def test_a_foreign_warning_is_shown_with_its_file_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    _show_warning(DeprecationWarning("open_binary is deprecated"), DeprecationWarning, "lib.py", 7, None, None)
    assert capsys.readouterr().err == "lib.py:7: DeprecationWarning: open_binary is deprecated\n"


def test_showwarning_as_python_calls_it(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warnings, "showwarning", _show_warning)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        monkeypatch.setattr(warnings, "showwarning", _show_warning)
        warnings.warn_explicit("old API", DeprecationWarning, "lib.py", 9)
    assert "lib.py:9: DeprecationWarning: old API" in capsys.readouterr().err
