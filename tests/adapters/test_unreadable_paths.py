"""Every path a reader cannot open is a finding: an annotator folder without permission never
vanishes in silence, and one bad file never stops the other annotators' files (issue 24 item 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from unitize.cli import main

BRAT = EXAMPLE.parent / "brat-mini"
FAST = ["--tokenizer", "regex", "--units", "char", "--approaches", "interval", "--modes", "separate", "-q"]
#: an unprivileged user for the child process (nobody)
NOBODY = 65534


def brat_copy(root: Path) -> Path:
    shutil.copytree(BRAT, root / "brat")
    return root / "brat"


def findings(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]


def refuse_listing(monkeypatch, folder: Path) -> None:
    """The operating system refuses to list ``folder`` (as for a folder of mode 000 and a user who is not root)."""
    scandir = os.scandir

    def guarded(path=".", *args, **kwargs):
        if os.fspath(path) == str(folder):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", guarded)


def test_an_unreadable_annotator_folder_is_a_finding_not_a_missing_annotator(tmp_path, monkeypatch, capsys):
    study = brat_copy(tmp_path)
    refuse_listing(monkeypatch, study / "annotations" / "ben")
    out = tmp_path / "out"
    assert main(["convert", str(study / "study.toml"), "--out", str(out), *FAST]) == 0
    unreadable = [f for f in findings(out) if f["code"] == "file-unreadable"]
    assert [(f["file"], f["severity"]) for f in unreadable] == [("annotations/ben/", "error")], unreadable
    assert "cannot read the folder: Permission denied" in unreadable[0]["message"]
    assert main(["convert", str(study / "study.toml"), "--out", str(tmp_path / "strict"), "--strict", *FAST]) == 3
    assert not (tmp_path / "strict").exists()
    assert "file-unreadable" in capsys.readouterr().err


def test_an_unreadable_texts_folder_and_pdtb_annotator_folder_are_findings(tmp_path, monkeypatch):
    from unitize.adapters import get_adapter

    texts, ann = tmp_path / "raw", tmp_path / "ann"
    for who in ("ayse", "burak"):
        (ann / who).mkdir(parents=True)
        (ann / who / "d1").write_text("Explicit|||||||||||0..2||||||||||||||||||||||||\n", encoding="utf-8")
    (texts / "sub").mkdir(parents=True)
    (texts / "d1").write_text("ab cd\n", encoding="utf-8")
    refuse_listing(monkeypatch, ann / "burak")
    corpus = get_adapter("pdtb3").read(annotators={"ayse": ann / "ayse", "burak": ann / "burak"}, texts=texts, base=tmp_path)
    assert [(f.code, f.file, f.annotator) for f in corpus.findings if f.code == "file-unreadable"] == [("file-unreadable", "ann/burak/", "burak")]
    monkeypatch.undo()
    refuse_listing(monkeypatch, texts / "sub")
    corpus = get_adapter("pdtb3").read(annotators={"ayse": ann / "ayse"}, texts=texts, base=tmp_path)
    assert [(f.code, f.file) for f in corpus.findings if f.code == "file-unreadable"] == [("file-unreadable", "raw/sub/")]


def _as_nobody_available() -> str | None:
    """Why a child process cannot run unitize as an unprivileged user here (None: it can)."""
    if os.geteuid() != 0:
        return None  # not root: a mode-000 folder is unreadable to this very process
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "running as root without setpriv: cannot drop privileges to make a mode-000 folder unreadable"
    probe = subprocess.run([setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c",
                            "import pyarrow, unitize"], cwd="/", env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    if probe.returncode != 0:
        return f"the unprivileged user cannot run unitize here ({probe.stderr.decode(errors='replace').strip()[-200:]})"
    return None


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_mode_000_annotator_folder_for_a_user_who_is_not_root():
    why = _as_nobody_available()
    if why:
        pytest.skip(why)
    root = Path(tempfile.mkdtemp(prefix="unitize-mode000-"))
    try:
        root.chmod(0o777)
        study = brat_copy(root)
        for path in [study, *study.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o666)
        (study / "annotations" / "chen").chmod(0o000)
        out = root / "out"
        argv = [sys.executable, "-m", "unitize", "convert", str(study / "study.toml"), "--out", str(out), *FAST]
        if os.geteuid() == 0:
            argv = [shutil.which("setpriv"), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
        done = subprocess.run(argv, cwd=root, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        unreadable = [(f["file"], f["message"]) for f in findings(out) if f["code"] == "file-unreadable"]
        assert unreadable == [("annotations/chen/", "cannot read the folder: Permission denied")], unreadable
        done = subprocess.run([*argv, "--strict"], cwd=root, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
        assert done.returncode == 3, done.stderr
    finally:
        (root / "brat" / "annotations" / "chen").chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
