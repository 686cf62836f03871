"""``unitize convert`` killed with SIGKILL at every step of writing and committing: the output
directory is always the complete previous output or the complete new one, the user's files
stay, nothing is staged inside it, and the next run recovers (issue 16 items 12-14)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from tests.output.test_directory import assert_complete
from unitize.cli import main
from unitize.output import sha256_file

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")

STUDY = EXAMPLE / "study.toml"
#: the exchange of directory entries unavailable: the swap takes two renames
NO_EXCHANGE = "import sys, runpy, unitize.output.swap as s; s._exchange = lambda a, b: False; runpy.run_module('unitize', run_name='__main__')"


def start(out: Path, units: str, pause: str | None = None, *, seconds: float = 60, no_exchange: bool = False) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNITIZE_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if pause:
        env.update(UNITIZE_TEST_PAUSE_AT=pause, UNITIZE_TEST_PAUSE_SECONDS=str(seconds))
    head = [sys.executable, "-c", NO_EXCHANGE] if no_exchange else [sys.executable, "-m", "unitize"]
    argv = ["convert", str(STUDY), "--out", str(out), "--units", units, "--approaches", "interval", "--tokenizer", "regex", "-q"]
    return subprocess.Popen(head + argv, env=env, stderr=subprocess.PIPE, text=True)


def wait_paused(proc: subprocess.Popen, point: str) -> None:
    line = proc.stderr.readline()
    assert line.startswith(f"unitize: paused at {point}"), (line, proc.stderr.read() if proc.poll() is not None else "")


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stderr.close()


def finish(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def units_of(out: Path) -> str:
    """Which run the complete output directory is: its unit (every file checked against the manifest)."""
    return assert_complete(out)["settings"]["pairs"][0][0]


def test_killed_anywhere_the_directory_is_the_previous_or_the_new_output(tmp_path):
    out = tmp_path / "out"
    finish(start(out, "char"))
    (out / "mine").mkdir()
    (out / "mine" / "notes.txt").write_text("the user's", encoding="utf-8")
    current = "char"
    # (pause point, is the new output in place when killed there)
    for point, swapped in [
        ("written:units/setting=word-interval/part-00000.parquet", False),
        ("written:report.jsonl", False),
        ("commit:linked", False),
        ("commit:swapped", True),
        ("commit:carried", True),
    ]:
        new = "word" if current == "char" else "char"
        proc = start(out, new, point)
        wait_paused(proc, point)
        kill(proc)
        assert units_of(out) == (new if swapped else current), point
        assert not list(out.glob(".unitize-staging*"))
        assert (out / "mine" / "notes.txt").read_text(encoding="utf-8") == "the user's", point
        current = new if swapped else current
    rng = random.Random(16)
    for _ in range(3):  # and at moments nobody chose
        new = "word" if current == "char" else "char"
        proc = start(out, new)
        time.sleep(rng.uniform(0.2, 1.0))
        kill(proc)
        current = units_of(out)
        assert current in ("char", "word")
        assert (out / "mine" / "notes.txt").read_text(encoding="utf-8") == "the user's"
    finish(start(out, "char"))  # the next run recovers: no leftovers beside, no lock file
    assert units_of(out) == "char"
    assert (out / "mine" / "notes.txt").read_text(encoding="utf-8") == "the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_killed_between_the_two_renames_the_next_run_puts_an_output_back(tmp_path):
    out = tmp_path / "out"
    finish(start(out, "char"))
    (out / "notes.txt").write_text("the user's", encoding="utf-8")
    proc = start(out, "word", "commit:set-aside", no_exchange=True)
    wait_paused(proc, "commit:set-aside")
    kill(proc)
    assert not out.exists()  # the previous output is set aside (hidden) and the new one not yet in place
    assert main(["info", str(out), "--json"]) == 2  # a reader is told plainly
    finish(start(out, "word", no_exchange=True))
    assert units_of(out) == "word"
    assert (out / "notes.txt").read_text(encoding="utf-8") == "the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    # and the recovery alone (here by `unitize agree`, which locks the directory to write agreement/)
    proc = start(out, "char", "commit:set-aside", no_exchange=True)
    wait_paused(proc, "commit:set-aside")
    kill(proc)
    assert main(["agree", str(out), "--metric", "alpha-u", "-q"]) == 0
    assert units_of(out) == "word" and (out / "agreement" / "results.csv").is_file()


def test_a_second_run_into_the_same_directory_exits_at_once(tmp_path, capsys):
    out = tmp_path / "out"
    first = start(out, "char", "claimed", seconds=3)
    wait_paused(first, "claimed")
    busy = f"another unitize run is writing to {out} (pid {first.pid}); wait for it or choose another --out"
    t0 = time.time()
    assert main(["convert", str(STUDY), "--out", str(out), "--tokenizer", "regex", "-q"]) == 2
    assert busy in capsys.readouterr().err
    assert time.time() - t0 < 2  # at once, before reading any input
    assert main(["agree", str(out), "-q"]) == 2
    assert busy in capsys.readouterr().err
    assert main(["export", str(out), "--to", "rat"]) == 2
    assert busy in capsys.readouterr().err
    finish(first)
    assert units_of(out) == "char"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert all(sha256_file(out / o["path"]) == o["sha256"] for o in manifest["outputs"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
