"""Names and labels from the data never act on the user's terminal: every command's output is
escaped by one helper (issue 24 item 6: an annotator named ``ESC]0;…BEL ESC[2J`` retitled and
cleared the terminal of whoever ran convert or validate)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.cli.screen import UNSAFE, clean

EVIL = "ch\x1b]0;pwned\x07\x1b[2J\r\u202e\x9b"
SHOWN = "ch\\u001b]0;pwned\\u0007\\u001b[2J\\u000d\\u202e\\u009b"
FAST = ["--tokenizer", "regex", "--units", "char", "--approaches", "interval", "--modes", "separate"]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="control characters in file names")


@pytest.fixture
def evil_study(tmp_path: Path) -> Path:
    study = tmp_path / "brat"
    shutil.copytree(EXAMPLE.parent / "brat-mini", study)
    (study / "annotations" / "chen").rename(study / "annotations" / EVIL)
    ann = study / "annotations" / "ana" / sorted(p.name for p in (study / "annotations" / "ana").glob("*.ann"))[0]
    ann.write_text(ann.read_text(encoding="utf-8") + "T99\tBAD\x1b[2J 0 1\tx\n", encoding="utf-8")  # a label with an escape
    return study


def safe(text: str) -> bool:
    return UNSAFE.search(text.replace("\n", "").replace("\t", "")) is None


def test_clean_escapes_what_a_terminal_acts_on_and_nothing_else():
    assert clean(EVIL) == SHOWN
    assert clean("ayşe\tbüşra\n日本 😀 \\x1b") == "ayşe\tbüşra\n日本 😀 \\x1b"
    assert json.loads(json.dumps(clean(json.dumps(EVIL, ensure_ascii=False)))) == clean(json.dumps(EVIL, ensure_ascii=False))
    assert json.loads(clean(json.dumps(EVIL, ensure_ascii=False))) == EVIL  # a --json line stays JSON, the same string


def test_every_command_escapes_names_and_labels(evil_study, tmp_path, capsys):
    out = tmp_path / "out"
    runs = [
        ["convert", str(evil_study / "study.toml"), "--out", str(out), *FAST],
        ["validate", str(evil_study / "study.toml"), *FAST],
        ["info", str(out)],
        ["agree", str(out), "--by-annotator", "--by-label"],
        ["export", str(out), "--to", "rat"],
        ["report", str(out)],
        ["convert", "--format", "brat", "--annotations", str(evil_study / "annotations" / EVIL), "--out", str(tmp_path / "x"), *FAST],
    ]
    shown = ""
    for argv in runs:
        main(argv)
        captured = capsys.readouterr()
        assert safe(captured.out) and safe(captured.err), (argv, captured)
        shown += captured.out + captured.err
    assert SHOWN in shown  # the name is there, escaped, not dropped
    assert main(["info", str(out), "--json"]) == 0
    annotators = json.loads(capsys.readouterr().out)["summary"]["annotators"]
    assert EVIL in annotators  # JSON on screen still holds the name itself


def test_output_is_restored_after_a_command(capsys):
    before = sys.stdout, sys.stderr
    main(["formats"])
    assert (sys.stdout, sys.stderr) == before
