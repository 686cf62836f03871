"""Names are data (issue 31), the commands' side: files a user put beside unitize's are kept, destinations are
checked before any work, hostile inputs cost what their size does, and scratch files do not outlive a killed run."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize.adapters import get_adapter
from unitize.adapters.locate import FUZZY_MAX_CHARS, Locator
from unitize.dataset.roles import parse_candidates
from unitize.cli import main, os_error_message
from unitize.runtime.spool import SCRATCH_KINDS, scratch_prefix, sweep

EXAMPLES = ROOT / "unitize" / "examples"


@pytest.fixture(scope="module")
def brat_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("brat") / "out"
    assert main(["convert", str(EXAMPLES / "brat-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    return out


def test_force_replaces_only_the_files_the_previous_manifest_lists(tmp_path: Path) -> None:
    out = tmp_path / "conv"
    study = str(EXAMPLES / "brat-mini" / "study.toml")
    assert main(["convert-format", study, "--to", "brat", "--out", str(out), "-q"]) == 0
    listed = {o["path"] for o in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["outputs"]}
    (out / "annotations" / "annotation.conf").write_text("[entities]\nPER\n", encoding="utf-8")
    (out / "annotations" / "ana" / "hand.ann").write_text("T1\tPER 0 1\tx\n", encoding="utf-8")
    (out / "annotations" / "ana" / "festival.ann").write_text("stale\n", encoding="utf-8")  # unitize's own: replaced
    assert main(["convert-format", study, "--to", "brat", "--out", str(out), "-q", "--force"]) == 0
    assert (out / "annotations" / "annotation.conf").read_text(encoding="utf-8") == "[entities]\nPER\n"
    assert (out / "annotations" / "ana" / "hand.ann").read_text(encoding="utf-8") == "T1\tPER 0 1\tx\n"
    assert (out / "annotations" / "ana" / "festival.ann").read_text(encoding="utf-8") != "stale\n"
    assert {o["path"] for o in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["outputs"]} == listed


def test_gold_destinations_are_checked_before_any_work(brat_out: Path, tmp_path: Path, capsys) -> None:
    assert main(["adjudicate", str(brat_out), "--dest", str(tmp_path / "g"), "-q"]) == 2
    assert "--dest goes with --to FORMAT" in capsys.readouterr().err
    for inside in (brat_out, brat_out / "adjudication", brat_out / "units" / "gold"):
        assert main(["adjudicate", str(brat_out), "--to", "brat", "--dest", str(inside), "-q"]) == 2
        assert "inside" in capsys.readouterr().err and not (brat_out / "units" / "gold").exists()
    gold = tmp_path / "gold"
    assert main(["adjudicate", str(brat_out), "--to", "brat", "--dest", str(gold), "-q"]) == 0
    (gold / "annotations" / "annotation.conf").write_text("[entities]\n", encoding="utf-8")
    assert main(["adjudicate", str(brat_out), "--to", "brat", "--dest", str(gold), "-q"]) == 2
    assert f"holds a gold written earlier from {brat_out}" in capsys.readouterr().err
    assert main(["adjudicate", str(brat_out), "--to", "brat", "--dest", str(gold), "-q", "--force"]) == 0
    assert (gold / "annotations" / "annotation.conf").read_text(encoding="utf-8") == "[entities]\n"


@pytest.mark.parametrize("command", [["export", "--to", "long-csv"], ["report"], ["agree", "--metric", "alpha"]])
def test_every_dest_gets_its_missing_parent_folders(brat_out: Path, tmp_path: Path, command: list[str]) -> None:
    dest = tmp_path / "a" / "b" / "c"
    assert main([command[0], str(brat_out), *command[1:], "--dest", str(dest), "-q"]) == 0
    assert dest.is_dir() and any(dest.iterdir())


def test_a_spacy_file_that_inflates_past_the_bound_is_reported_not_read(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.spacy"
    bomb.write_bytes(zlib.compress(b"\0" * 20_000_000, 9))  # 20 MB of zeros in about 20 kB
    corpus = get_adapter("spacy").read(annotations=bomb, base=tmp_path, annotator="a", annotators=None, max_unzipped_mb=5)
    assert [(f.code, f.file) for f in corpus.findings] == [("file-unreadable", "bomb.spacy")]
    assert "inflates past max_unzipped_mb = 5" in corpus.findings[0].message


def test_every_error_of_a_damaged_docbin_is_a_finding(tmp_path: Path) -> None:
    import spacy
    from spacy.tokens import DocBin, Span

    nlp = spacy.blank("en")
    doc = nlp("one two three four")
    doc.spans["ent"] = [Span(doc, 0, 2, "X")]
    good = DocBin(store_user_data=True, docs=[doc]).to_bytes()
    raw = bytearray(zlib.decompress(good))
    damaged = 0
    for k in range(0, len(raw), max(1, len(raw) // 200)):  # one byte changed at a time, across the whole file
        mutated = bytearray(raw)
        mutated[k] ^= 0xFF
        path = tmp_path / f"m{k}.spacy"
        path.write_bytes(zlib.compress(bytes(mutated)))
        corpus = get_adapter("spacy").read(annotations=path, base=tmp_path, annotator="a", annotators=None, max_unzipped_mb=512)
        damaged += any(f.code == "file-unreadable" for f in corpus.findings)
    assert damaged > 0  # read or reported, never raised


def test_a_candidate_range_is_checked_before_it_is_spelled_out(brat_out: Path, capsys) -> None:
    assert main(["agree", str(brat_out), "--candidates", "x1..100000000", "-q"]) == 2
    assert "names 100,000,000 runs, more than the 3 annotators" in capsys.readouterr().err
    assert parse_candidates(["gpt1..3", "gpt1..3"]) == {"gpt": ["gpt1", "gpt2", "gpt3"]}


def test_the_quote_locator_finds_each_quote_once_and_bounds_fuzzy_work(monkeypatch) -> None:
    import unitize.adapters.locate as locate

    text = "the cat and the dog and the bird. " * 2000
    calls: list[str] = []
    real = locate._places
    monkeypatch.setattr(locate, "_places", lambda t, q: calls.append(q) or real(t, q))
    locator = Locator(text)
    quotes = ["the"] * 5000
    locator.expect(quotes)
    placed = [locator.locate(q) for q in quotes]
    assert calls == ["the"] and [p.begin for p in placed[:3]] == [0, 12, 24] and len({p.begin for p in placed}) == 5000
    long = "zq" * FUZZY_MAX_CHARS
    found = locator.locate(long)
    assert found.outcome == "not-found" and "not aligned fuzzily" in found.note
    assert locator.locate("the", hint=44).begin == 46  # the nearest place, by bisection
    tie = locator.locate("the", hint=40)  # 34 and 46 are as near: the first, and it says so
    assert (tie.begin, tie.outcome) == (34, "ambiguous")


def test_scratch_files_of_a_killed_process_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    (tmp_path / f"unitize-spool-{pid}-abc.arrow").write_bytes(b"x")
    (tmp_path / f"unitize-segments-{pid}-xyz").mkdir()
    (tmp_path / f"unitize-report-{pid}-pages").mkdir()  # a killed report's pages (report.pages.DocPages)
    (tmp_path / f"unitize-report-{pid}-pages" / "pages").write_bytes(b"[1]")
    (tmp_path / f"unitize-mapped-{pid}-abc.bin").write_bytes(b"x")  # killed between mapping and removing (runtime.mapped)
    (tmp_path / f"unitize-spool-{os.getpid()}-mine.arrow").write_bytes(b"x")
    (tmp_path / "unitize-spool-notapid.arrow").write_bytes(b"x")
    assert sorted(sweep(str(tmp_path))) == [f"unitize-mapped-{pid}-abc.bin", f"unitize-report-{pid}-pages", f"unitize-segments-{pid}-xyz",
                                            f"unitize-spool-{pid}-abc.arrow"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"unitize-spool-{os.getpid()}-mine.arrow", "unitize-spool-notapid.arrow"]
    assert {scratch_prefix(kind).split("-")[1] for kind in SCRATCH_KINDS} == {"spool", "segments", "gold", "report", "mapped"}
    with pytest.raises(ValueError, match="the sweep would not remove it"):
        scratch_prefix("elsewhere")


def test_a_full_disk_names_the_folders_and_what_to_do() -> None:
    message = os_error_message(OSError(errno.ENOSPC, "No space left on device", "/tmp/x.arrow"))
    assert message.startswith("No space left on device: /tmp/x.arrow") and "TMPDIR" in message and "free space" in message
    assert "TMPDIR" in os_error_message(OSError("IOError: No space left on device"))


def test_webanno_labels_ending_in_a_backslash_read_back(tmp_path: Path) -> None:
    lines = ["#FORMAT=WebAnno TSV 3.3", "#T_SP=webanno.custom.Span|value", "", "", "#Text=a b c",
             "1-1\t0-1\ta\tC:\\\\[1]|x\\\\", "1-2\t2-3\tb\tC:\\\\[1]", "1-3\t4-5\tc\t_", ""]
    folder = tmp_path / "annotation" / "doc.txt"
    folder.mkdir(parents=True)
    (folder / "ann.tsv").write_text("\n".join(lines), encoding="utf-8")
    corpus = get_adapter("webanno-tsv").read(annotations=tmp_path, base=tmp_path, annotator="annotator", encoding="utf-8",
                                             feature=None, annotators=None, max_unzipped_mb=512)
    assert sorted((s.label, s.begin, s.end) for s in corpus.spans) == [("C:\\", 0, 3), ("x\\", 0, 1)]


def test_a_dest_outside_out_is_locked(brat_out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "agreement-elsewhere"
    script = (f"import time; from unitize.output import claim_output; from pathlib import Path\n"
              f"with claim_output(Path({str(dest)!r}), follow=False):\n    print('held', flush=True); time.sleep(30)\n")
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        err = io.StringIO()
        sys.stderr, saved = err, sys.stderr
        try:
            assert main(["agree", str(brat_out), "--metric", "alpha", "--dest", str(dest), "-q"]) == 2
        finally:
            sys.stderr = saved
        assert "another unitize run is writing to" in err.getvalue()
    finally:
        holder.kill()
        holder.wait()


def test_a_rerun_of_convert_keeps_your_files_inside_its_folders(tmp_path: Path) -> None:
    out = tmp_path / "out"
    study = str(EXAMPLES / "brat-mini" / "study.toml")
    assert main(["convert", study, "--out", str(out), "-q"]) == 0
    (out / "units" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (out / "segments" / "mine.md").write_text("mine\n", encoding="utf-8")
    listed = {o["path"] for o in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["outputs"]}
    assert main(["convert", study, "--out", str(out), "-q", "--units", "word"]) == 0  # fewer settings: the char ones go
    assert (out / "units" / "notes.txt").read_text(encoding="utf-8") == "mine\n" and (out / "segments" / "mine.md").is_file()
    assert not any((out / p).exists() for p in listed if "char" in p)
    assert main(["agree", str(out), "--metric", "alpha", "-q"]) == 0


def test_brat_gets_annotation_and_visual_conf_and_a_rerun_keeps_your_edits(tmp_path: Path) -> None:
    out = tmp_path / "conv"
    study = str(EXAMPLES / "brat-mini" / "study.toml")
    assert main(["convert-format", study, "--to", "brat", "--out", str(out), "-q"]) == 0
    conf = (out / "annotations" / "annotation.conf").read_text(encoding="utf-8")
    sections = [line for line in conf.splitlines() if line.startswith("[")]
    assert sections == ["[entities]", "[relations]", "[events]", "[attributes]"]  # the four brat reads
    entities = conf.split("[entities]")[1].split("[relations]")[0].split()
    labels = sorted({line.split("\t")[1].split()[0] for p in (out / "annotations").rglob("*.ann")
                     for line in p.read_text(encoding="utf-8").splitlines() if line.startswith("T")})
    assert entities == labels
    visual = (out / "annotations" / "visual.conf").read_text(encoding="utf-8")
    colours = [line.split("bgColor:")[1] for line in visual.splitlines() if line.split("\t")[0] in labels]
    assert len(colours) == len(labels) == len(set(colours))
    edited = conf.replace("[entities]\n", "[entities]\n# mine\n")
    (out / "annotations" / "annotation.conf").write_text(edited, encoding="utf-8")
    assert main(["convert-format", study, "--to", "brat", "--out", str(out), "-q", "--force"]) == 0
    assert (out / "annotations" / "annotation.conf").read_text(encoding="utf-8") == edited  # your edit kept
    assert (out / "annotations" / "visual.conf").read_text(encoding="utf-8") == visual  # unedited: written anew
    back = main(["convert", str(out / "study.toml"), "--out", str(tmp_path / "back"), "-q"])
    assert back == 0
