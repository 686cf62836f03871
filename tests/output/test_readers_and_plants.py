"""Readers see one output, the lock cannot be redirected, planted stagings are never merged, killed
exports and reports leave nothing behind, and a rerun keeps the user's files (issue 24 items 1, 2, 4, 8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLE, ROOT
from tests.output.test_directory import assert_complete, convert, tree
from unitize.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock, SIGKILL and symbolic links are POSIX")


def spawn(argv: list[str], pause: str, seconds: float = 60) -> subprocess.Popen:
    """``unitize ARGV`` in a child process that stops at ``pause`` for ``seconds``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNITIZE_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(UNITIZE_TEST_PAUSE_AT=pause, UNITIZE_TEST_PAUSE_SECONDS=str(seconds))
    proc = subprocess.Popen([sys.executable, "-m", "unitize", *argv], env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert line.startswith(f"unitize: paused at {pause}"), (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stderr.close()


def finish(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def results(folder: Path) -> list[dict]:
    return pq.read_table(folder / "results.parquet").to_pylist()


# --- item 1: a reader holds a shared lock; convert never replaces the directory under it ---------


def test_a_reader_writing_elsewhere_keeps_convert_out_until_it_is_done(tmp_path, capsys):
    out, dest = tmp_path / "out", tmp_path / "agr"
    assert convert(out) == 0
    before = assert_complete(out)
    reader = spawn(["agree", str(out), "--dest", str(dest), "--metric", "alpha-u", "-q"], "claimed", seconds=2)
    assert convert(out, "--units", "word") == 2  # refused at once, the directory untouched
    assert "another unitize command is reading" in capsys.readouterr().err
    assert main(["export", str(out), "--to", "rat", "--dest", str(tmp_path / "rat")]) == 0  # readers share the lock
    finish(reader)
    assert assert_complete(out)["outputs"] == before["outputs"]
    assert main(["agree", str(out), "--dest", str(tmp_path / "again"), "--metric", "alpha-u", "-q"]) == 0
    assert results(dest) == results(tmp_path / "again")  # the numbers of the one output there was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "agr", "out", "rat"]  # no lock file left


@pytest.mark.parametrize("reader", [["export", "--to", "rat"], ["report", "-q"]])
def test_every_reader_writing_elsewhere_keeps_convert_out(tmp_path, capsys, reader):
    out, dest = tmp_path / "out", tmp_path / "dest"
    assert convert(out) == 0
    proc = spawn([reader[0], str(out), "--dest", str(dest), *reader[1:]], "claimed", seconds=2)
    assert convert(out, "--units", "word") == 2
    assert "another unitize command is reading" in capsys.readouterr().err
    finish(proc)
    assert assert_complete(out)["settings"]["pairs"] == [["char", "interval"]]
    assert main([reader[0], str(out), "--dest", str(tmp_path / "again"), *reader[1:]]) == 0
    assert tree(dest) == tree(tmp_path / "again")  # the files of the one output there was


def test_a_reader_writing_elsewhere_waits_for_no_writer(tmp_path, capsys):
    out = tmp_path / "out"
    assert convert(out) == 0
    writer = spawn(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--tokenizer", "regex", "--units", "word",
                    "--approaches", "interval", "-q"],
                   "claimed", seconds=2)
    busy = f"another unitize run is writing to {out} (pid {writer.pid})"
    assert main(["agree", str(out), "--dest", str(tmp_path / "agr"), "-q"]) == 2
    assert busy in capsys.readouterr().err
    assert main(["export", str(out), "--to", "rat", "--dest", str(tmp_path / "rat")]) == 2
    assert busy in capsys.readouterr().err
    assert main(["report", str(out), "--dest", str(tmp_path / "rep"), "-q"]) == 2
    assert busy in capsys.readouterr().err
    assert not (tmp_path / "agr").exists() and not (tmp_path / "rat").exists() and not (tmp_path / "rep").exists()
    finish(writer)
    assert assert_complete(out)["settings"]["pairs"] == [["word", "interval"]]


# --- item 2: the lock file and the stagings cannot be redirected or planted ------------------------


@pytest.mark.parametrize("plant", ["symlink", "dangling", "hardlink", "fifo"])
def test_a_planted_lock_file_is_refused_and_nothing_outside_is_written(tmp_path, capsys, plant):
    out, victim = tmp_path / "out", tmp_path / "elsewhere" / "precious.txt"
    assert convert(out) == 0
    victim.parent.mkdir()
    if plant != "dangling":
        victim.write_text("the user's", encoding="utf-8")
    lock = tmp_path / ".out.unitize-lock"
    {"symlink": lambda: lock.symlink_to(victim), "dangling": lambda: lock.symlink_to(victim),
     "hardlink": lambda: os.link(victim, lock), "fifo": lambda: os.mkfifo(lock)}[plant]()
    for argv in (["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--tokenizer", "regex", "-q"],
                 ["agree", str(out), "-q"], ["agree", str(out), "--dest", str(tmp_path / "agr"), "-q"],
                 ["export", str(out), "--to", "rat"], ["report", str(out), "-q"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "is not a lock file unitize made" in err and f"Remove {lock}" in err, err
    if plant == "dangling":
        assert not victim.exists()
    elif plant != "fifo":
        assert victim.read_text(encoding="utf-8") == "the user's"
    assert_complete(out)


def test_a_planted_staging_is_reported_and_never_merged(tmp_path, capsys):
    out = tmp_path / "out"
    assert convert(out) == 0
    planted = tmp_path / ".out.unitize-staging-1"
    planted.mkdir()
    (planted / "manifest.json").write_text((out / "manifest.json").read_text(encoding="utf-8"), encoding="utf-8")
    (planted / "evil.sh").write_text("rm -rf ~", encoding="utf-8")
    old = tmp_path / ".out.unitize-old-2-0123456789abcdef"  # a stamp, but not the one in a lock file
    old.mkdir()
    (old / "manifest.json").write_text("{}", encoding="utf-8")
    assert convert(out, "--units", "word") == 0
    err = capsys.readouterr().err
    assert f"warning: {planted} is named like a staging folder" in err and "nothing in it was used" in err
    assert f"warning: {old} is named like" in err
    assert not (out / "evil.sh").exists() and (planted / "evil.sh").is_file() and old.is_dir()
    assert assert_complete(out)["settings"]["pairs"] == [["word", "interval"]]
    # even with the output directory gone, a planted set-aside folder is never put in its place
    import shutil

    shutil.rmtree(out)
    assert main(["info", str(out)]) == 2
    assert main(["agree", str(out), "--dest", str(tmp_path / "agr"), "-q"]) == 2
    assert not out.exists()


# --- item 4: what a killed export or report leaves inside the directory is removed -----------------


@pytest.mark.parametrize("command", [["export", "--to", "rat"], ["report", "-q"]])
def test_a_killed_export_or_report_leaves_nothing_after_the_next_command(tmp_path, command):
    out = tmp_path / "out"
    assert convert(out) == 0
    name, args = command[0], command[1:]
    proc = spawn([name, str(out), *args], "staged")
    kill(proc)
    assert list(out.rglob(".*")), "the killed command left its staging folder"
    assert main([name, str(out), *args]) == 0  # the next claim of the directory removes it
    assert not [p for p in out.rglob(".*")], sorted(out.rglob(".*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    proc = spawn([name, str(out), *args], "staged")
    kill(proc)
    assert convert(out, "--units", "word") == 0  # a convert removes it too, and does not carry it over
    assert not [p for p in out.rglob(".*")]


def test_a_killed_export_elsewhere_is_cleaned_up_by_the_next_export_there(tmp_path):
    out, dest = tmp_path / "out", tmp_path / "rat"
    assert convert(out) == 0
    kill(spawn(["export", str(out), "--to", "rat", "--dest", str(dest)], "staged"))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".rat.unitize-export-")]
    assert main(["export", str(out), "--to", "rat", "--dest", str(dest)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "rat"]


def test_a_symlinked_export_folder_is_replaced_without_a_dangling_link(tmp_path):
    out = tmp_path / "out"
    assert convert(out) == 0
    assert main(["export", str(out), "--to", "rat", "--dest", str(tmp_path / "elsewhere")]) == 0
    before = tree(tmp_path / "elsewhere")
    (out / "exports").mkdir()
    (out / "exports" / "rat").symlink_to(tmp_path / "elsewhere")
    assert main(["export", str(out), "--to", "rat"]) == 0
    assert not (out / "exports" / "rat").is_symlink() and (out / "exports" / "rat" / "index.csv").is_file()
    assert sorted(p.name for p in (out / "exports").iterdir()) == ["rat"]
    assert tree(tmp_path / "elsewhere") == before  # the target untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "out"]  # no lock file beside it either


# --- item 8: a rerun keeps the user's files inside agreement/, exports/ and report/ ----------------


def test_a_rerun_keeps_the_users_files_in_the_derived_folders(tmp_path):
    out = tmp_path / "out"
    assert convert(out) == 0
    assert main(["agree", str(out), "--metric", "alpha-u", "-q"]) == 0
    assert main(["export", str(out), "--to", "rat"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    mine = {
        "agreement/my-notes.md": "notes",
        "agreement/plots/my-figure.png": "a figure of mine",
        "exports/my-own-analysis.R": "library(irr)",
        "exports/rat/README.txt": "what these files are",
        "exports/mine/table.csv": "a,b",
        "report/annotations.txt": "see document 3",
        "my-top-level.txt": "kept before too",
    }
    for relative, text in mine.items():
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_text(text, encoding="utf-8")
    assert main(["export", str(out), "--to", "rat"]) == 0  # an export rerun replaces its folder, not the user's file in it
    assert main(["report", str(out), "-q"]) == 0
    assert (out / "exports" / "rat" / "README.txt").read_text(encoding="utf-8") == "what these files are"
    assert (out / "report" / "annotations.txt").read_text(encoding="utf-8") == "see document 3"
    assert convert(out, "--units", "word") == 0
    for relative, text in mine.items():
        assert (out / relative).read_text(encoding="utf-8") == text, relative
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert not [p for p in left if p.startswith(("agreement/", "exports/", "report/")) and p not in mine], left
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["settings"]["pairs"] == [["word", "interval"]]


def test_the_alt_test_and_plan_files_are_unitizes_the_users_beside_them_are_not(tmp_path):
    from unitize.output.derived import user_files

    for relative in ("agreement/results.parquet", "agreement/roles.csv", "agreement/alt_test.csv", "agreement/alt_test_humans.csv",
                     "agreement/my-notes.md", "plan/plan.csv", "plan/plan.png", "plan/plan.svg", "plan/ppi.csv", "plan/budget.xlsx",
                     "estimate/estimates.csv", "estimate/stability.csv", "estimate/stability_curve.csv", "estimate/unstable.csv",
                     "estimate/prompts.csv", "estimate/prompt_spread.csv", "estimate/why.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x", encoding="utf-8")
    assert user_files(tmp_path / "agreement", "agreement") == ["my-notes.md"]  # a rerun leaves the earlier alt-test out
    assert user_files(tmp_path / "plan", "plan") == ["budget.xlsx"]
    assert user_files(tmp_path / "estimate", "estimate") == ["why.md"]
