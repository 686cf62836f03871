"""Every path a reader cannot open is a finding: an annotator folder without permission never
vanishes in silence, and one bad file never stops the other annotators' files (issue 24 item 3)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from unitize.adapters import get_adapter
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


@contextlib.contextmanager
def mode_000(make: Callable[[Path], Path], locked: str) -> Iterator[Path]:
    """The folder ``make`` builds in a fresh temporary one, open to every user but its sub-folder ``locked``
    (mode 000); the test is skipped when no unprivileged process can read it here (:func:`_as_nobody_available`)."""
    why = _as_nobody_available()
    if why:
        pytest.skip(why)
    root = Path(tempfile.mkdtemp(prefix="unitize-mode000-"))
    shut: Path | None = None
    try:
        root.chmod(0o777)
        top = make(root)
        for path in [top, *top.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o666)
        shut = top / locked
        shut.chmod(0o000)
        yield top
    finally:
        if shut is not None:
            shut.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)


def unprivileged(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run in ``cwd`` with unitize's source (as the unprivileged user when this process is root, whom no mode stops)."""
    if os.geteuid() == 0:
        argv = [str(shutil.which("setpriv")), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    return subprocess.run(argv, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_mode_000_annotator_folder_for_a_user_who_is_not_root():
    with mode_000(brat_copy, "annotations/chen") as study:
        out = study.parent / "out"
        argv = [sys.executable, "-m", "unitize", "convert", str(study / "study.toml"), "--out", str(out), *FAST]
        done = unprivileged(argv, study.parent)
        assert done.returncode == 0, done.stderr
        unreadable = [(f["file"], f["message"]) for f in findings(out) if f["code"] == "file-unreadable"]
        assert unreadable == [("annotations/chen/", "cannot read the folder: Permission denied")], unreadable
        done = unprivileged([*argv, "--strict"], study.parent)
        assert done.returncode == 3, done.stderr


def _spacy_file(path: Path, doc_id: str) -> None:
    from spacy.tokens import Doc, DocBin, Span

    from unitize.adapters.spacy_docbin import USER_DATA, blank_vocab

    doc = Doc(blank_vocab(), words=["Ana", "met", "Bob"])
    doc.spans["NER"] = [Span(doc, 0, 1, label="PER")]
    doc.user_data[USER_DATA] = {"doc_id": doc_id, "annotator": "ayse"}
    path.write_bytes(DocBin(store_user_data=True, docs=[doc]).to_bytes())


def _huggingface_file(path: Path, doc_id: str) -> None:
    spans = [{"id": 1, "layer": "NER", "label": "PER", "start": 0, "end": 3}]
    path.write_text(json.dumps({"id": doc_id, "text": "Ana met Bob", "annotations": [{"annotator": "ayse", "spans": spans}]}) + "\n", encoding="utf-8")


#: the formats whose readers once walked folders with their own rglob -> (writes a file of one document, its file name)
OWN_WALKERS = {"spacy": (_spacy_file, "docs.spacy"), "huggingface": (_huggingface_file, "train.jsonl")}
#: what each of them reads of the good file: (annotator, document, layer, begin, end, label) and the findings (code, file)
GOOD = [("ayse", "d1", "NER", 0, 3, "PER")]
LOCKED = [("file-unreadable", "data/locked/")]
#: a child process reads the input and prints what it read (see GOOD, LOCKED)
READ = """
import json, sys
from pathlib import Path
from unitize.adapters import get_adapter
corpus = get_adapter(sys.argv[1]).read(annotations=Path(sys.argv[2]), base=Path(sys.argv[3]))
print(json.dumps({"spans": [[s.annotator, s.doc_id, s.layer, s.begin, s.end, s.label] for s in corpus.spans],
                  "findings": [[f.code, f.file] for f in corpus.findings]}))
"""


def good_and_locked(root: Path, fmt: str) -> Path:
    """``root/data``: a good file of ``fmt`` (document d1), and a sub-folder ``locked/`` with another (document d2)."""
    write, name = OWN_WALKERS[fmt]
    data = root / "data"
    (data / "locked").mkdir(parents=True)
    write(data / name, "d1")
    write(data / "locked" / name, "d2")
    return data


@pytest.mark.parametrize("fmt", sorted(OWN_WALKERS))
def test_an_unreadable_sub_folder_of_a_spacy_or_huggingface_input_is_a_finding(tmp_path, monkeypatch, fmt):
    data = good_and_locked(tmp_path, fmt)
    refuse_listing(monkeypatch, data / "locked")
    corpus = get_adapter(fmt).read(annotations=data, base=tmp_path)
    assert [(s.annotator, s.doc_id, s.layer, s.begin, s.end, s.label) for s in corpus.spans] == GOOD
    assert [(f.code, f.file) for f in corpus.findings] == LOCKED


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("fmt", sorted(OWN_WALKERS))
def test_a_mode_000_sub_folder_of_a_spacy_or_huggingface_input_for_a_user_who_is_not_root(fmt):
    with mode_000(lambda root: good_and_locked(root, fmt), "locked") as data:
        done = unprivileged([sys.executable, "-c", READ, fmt, str(data), str(data.parent)], data.parent)
        assert done.returncode == 0, done.stderr
        read = json.loads(done.stdout)
        assert [tuple(s) for s in read["spans"]] == GOOD
        assert [tuple(f) for f in read["findings"]] == LOCKED
