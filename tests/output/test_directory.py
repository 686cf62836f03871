"""The output directory: checked and locked before any work, only unitize's own replaced,
staged outside it, swapped in whole, the user's files kept (issue 16 items 10-14)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.output import OutputDir, sha256_file
from unitize.output.lock import stamp

STUDY = EXAMPLE / "study.toml"
FAST = ["--tokenizer", "regex", "--units", "char", "--approaches", "interval", "-q"]


def convert(out: Path, *extra: str) -> int:
    """``convert`` with the fast flags; a ``--units`` in ``extra`` takes the place of theirs (a list flag given twice joins)."""
    fast = FAST if "--units" not in extra else [f for i, f in enumerate(FAST) if "--units" not in FAST[max(i - 1, 0):i + 1]]
    return main(["convert", str(STUDY), "--out", str(out), *fast, *extra])


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_complete(out: Path) -> dict:
    """Every file the manifest lists is there with its hash, and no other Parquet file of unitize's."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["outputs"]:
        assert sha256_file(out / entry["path"]) == entry["sha256"], entry["path"]
    listed = {e["path"] for e in manifest["outputs"]}
    assert {p for p in tree(out) if p.endswith(".parquet") and not p.startswith("agreement/")} == {
        p for p in listed if p.endswith(".parquet")
    }
    return manifest


@pytest.fixture
def no_input(monkeypatch):
    """Reading any input is an internal error (exit 1): the checks must come first."""

    def read(*a, **k):
        raise AssertionError("the input was read before the output directory was checked")

    monkeypatch.setattr("unitize.run.pipeline.read_corpus", read)


# --- item 11: only unitize's own output directory is replaced ----------------------------


@pytest.mark.parametrize(
    "manifest",
    [
        '{"name": "my-web-app", "version": "2.1.0", "icons": []}',  # another tool's manifest.json
        "not json at all",
        json.dumps({k: {} for k in ("tool", "settings", "summary", "accounting", "outputs", "inputs")} | {"tool": {"name": "other"}}),
    ],
)
def test_a_directory_with_another_tools_manifest_is_refused_and_kept(tmp_path, capsys, manifest):
    out = tmp_path / "project"
    (out / "units").mkdir(parents=True)
    (out / "manifest.json").write_text(manifest, encoding="utf-8")
    for name in ("units", "exports", "agreement", "segments"):
        (out / name).mkdir(exist_ok=True)
        (out / name / "mine.txt").write_text(f"the user's {name}", encoding="utf-8")
    (out / "report.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree(out)
    assert convert(out) == 2
    err = capsys.readouterr().err
    assert str(out) in err and "not unitize's" in err and "choose a new or empty directory with --out" in err
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no lock or staging left beside it


def test_convert_and_convert_format_do_not_replace_each_others_output(tmp_path, capsys):
    assert convert(tmp_path / "out") == 0
    assert main(["convert-format", str(STUDY), "--to", "pdtb3", "--out", str(tmp_path / "pipe"), "-q"]) == 0
    before = tree(tmp_path / "pipe")
    assert convert(tmp_path / "pipe") == 2
    assert "holds the output of `unitize convert-format`" in capsys.readouterr().err
    assert tree(tmp_path / "pipe") == before
    assert main(["convert-format", str(STUDY), "--to", "pdtb3", "--out", str(tmp_path / "out"), "-q"]) == 2
    assert "holds the output of `unitize convert`" in capsys.readouterr().err
    # an earlier conversion is replaced with --force only (the kind is checked first: --force would not help above)
    assert main(["convert-format", str(STUDY), "--to", "pdtb3", "--out", str(tmp_path / "pipe"), "-q"]) == 2
    assert "pass --force to replace an earlier conversion there" in capsys.readouterr().err and tree(tmp_path / "pipe") == before
    assert main(["convert-format", str(STUDY), "--to", "pdtb3", "--out", str(tmp_path / "pipe"), "-q", "--force"]) == 0


def test_a_rerun_keeps_the_users_files_and_drops_what_describes_the_old_data(tmp_path):
    out = tmp_path / "out"
    assert convert(out) == 0
    (out / "notes.md").write_text("my notes", encoding="utf-8")
    (out / "mine" / "deep").mkdir(parents=True)
    (out / "mine" / "deep" / "table.parquet").write_bytes(b"not ours")
    os.symlink("notes.md", out / "link-to-notes")
    (out / "agreement").mkdir()
    (out / "agreement" / "results.csv").write_text("old", encoding="utf-8")
    (out / "exports" / "rat").mkdir(parents=True)
    assert convert(out, "--units", "word") == 0
    assert (out / "notes.md").read_text(encoding="utf-8") == "my notes"
    assert (out / "mine" / "deep" / "table.parquet").read_bytes() == b"not ours"
    assert os.readlink(out / "link-to-notes") == "notes.md"
    assert not (out / "agreement").exists() and not (out / "exports").exists()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [p for p in (o["path"] for o in manifest["outputs"]) if p.startswith("units/")] == ["units/setting=word-interval/part-00000.parquet"]
    assert not (out / "units" / "setting=char-interval").exists()


# --- items 12 and 13: staged beside the output directory, swapped in whole ---------------


def test_staging_is_outside_the_output_directory_and_the_swap_is_one_step(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert convert(out) == 0
    previous = tree(out)
    seen = {}

    def pause(point: str) -> None:
        if point == "commit:linked":  # everything is written, nothing is swapped yet
            seen["inside"] = tree(out)
            seen["beside"] = sorted(p.name for p in tmp_path.iterdir() if p.name != "out")
            pq.read_table(out / "units")  # a reader of the dataset sees the previous output only
            (out / "added-meanwhile.txt").write_text("x", encoding="utf-8")  # the user writes during the commit

    monkeypatch.setattr("unitize.output.directory.pause", pause)
    assert convert(out, "--units", "word") == 0
    assert seen["inside"] == previous
    assert seen["beside"] == [".out.unitize-lock", f".out.unitize-staging-{stamp()}"]
    assert (out / "added-meanwhile.txt").read_text(encoding="utf-8") == "x"
    assert_complete(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_leftovers_of_killed_runs_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "out"
    assert convert(out) == 0
    # what a killed run leaves: its stamp in the lock file, truncated Parquet in a staging directory
    # named by the stamp (and inside, as older versions staged)
    dead = "999999-0123456789abcdef"
    (tmp_path / ".out.unitize-lock").write_text(dead, encoding="ascii")
    for stale in (out / ".unitize-staging-999999", tmp_path / f".out.unitize-staging-{dead}"):
        (stale / "units" / "setting=char-interval").mkdir(parents=True)
        (stale / "units" / "setting=char-interval" / "part-00000.parquet").write_bytes(b"PAR1\x00\x01")
    assert convert(out) == 0
    assert_complete(out)
    assert not list(out.glob(".unitize-staging*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    pq.read_table(out / "units")


def test_a_failed_run_leaves_the_previous_output_and_nothing_beside_it(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert convert(out) == 0
    before = tree(out)

    from unitize.output.directory import OutputDir

    write_table = OutputDir.write_table

    def full(self, relative, table, written=None):  # the disk fills up while documents.parquet is written
        if relative == "documents.parquet":
            raise OSError(28, "No space left on device")
        return write_table(self, relative, table, written)

    monkeypatch.setattr(OutputDir, "write_table", full)
    assert convert(out, "--units", "word") == 2
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- item 14: one unitize process per output directory ------------------------------------


def test_claims_are_reentrant_within_a_process_and_leave_no_lock_file(tmp_path):
    from unitize.output import claim_output

    out = tmp_path / "out"
    with claim_output(out, kind="run") as claim:
        with claim_output(out, kind="run"):  # re-entrant: convert claims, then writes
            assert (tmp_path / ".out.unitize-lock").read_text() == stamp() and stamp().startswith(f"{os.getpid()}-")
        target = OutputDir(out)
        target.write_json("manifest.json", {})
        target.abort()
        assert claim.path == out.resolve()
    assert not (tmp_path / ".out.unitize-lock").exists()


# --- item 10: checked before any input is read ---------------------------------------------


def test_an_output_path_that_is_a_file_is_refused_before_reading(tmp_path, capsys, no_input):
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    assert convert(tmp_path / "taken") == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert convert(tmp_path / "taken" / "out") == 2
    assert "cannot create" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "thesis.docx").write_text("x", encoding="utf-8")
    assert convert(tmp_path / "full") == 2
    assert "not empty" in capsys.readouterr().err


def unwritable_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "readonly"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:  # root writes anywhere but in sysfs
        os.close(os.open("/sys/unitize-probe", os.O_RDWR | os.O_CREAT))
    except OSError:
        return Path("/sys")
    pytest.skip("no unwritable folder available")


def test_an_unwritable_parent_is_refused_before_reading(tmp_path, capsys, no_input):
    folder = unwritable_folder(tmp_path)
    assert convert(folder / "out") == 2
    err = capsys.readouterr().err
    assert f"cannot write in {folder}" in err and "must be writable" in err


def test_the_installed_package_is_never_an_output_directory(capsys, no_input):
    target = EXAMPLE / "out"
    existed = target.exists()
    try:
        assert main(["convert", str(STUDY), "-q"]) == 2  # [output] dir = "out", beside the shipped study file
        err = capsys.readouterr().err
        assert "inside the installed unitize package" in err and "pass --out DIR" in err
        assert target.exists() == existed
        assert not [p for p in EXAMPLE.iterdir() if p.name.startswith(".out.unitize")]
    finally:
        if not existed and target.exists():
            import shutil

            shutil.rmtree(target)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_forked_workers_do_not_keep_the_lock(tmp_path):
    """Parsing workers are forked while the lock is held; the lock is free when the run lets go."""
    import fcntl

    from unitize.output import claim_output

    started, tell = os.pipe()
    with claim_output(tmp_path / "out", kind="run"):
        child = os.fork()
        if child == 0:  # a worker outliving the run for a moment
            os.write(tell, b"1")
            time.sleep(0.5)
            os._exit(0)
        assert os.read(started, 1) == b"1"  # the child runs (the fork handlers have run in it)
        other = os.open(tmp_path / ".out.unitize-lock", os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if the worker still held it
    finally:
        for fd in (other, started, tell):
            os.close(fd)
        os.waitpid(child, 0)
