"""Hostile inputs cost what their size does (issue 31): each beside a benign input of the same size, in one run.

    python bench/hostile.py                      # every case, this checkout's unitize
    python bench/hostile.py --pythonpath OTHER   # another checkout's unitize (e.g. a git worktree of main)
    python bench/hostile.py --cases quotes-long  # one case

Each case runs the CLI as a fresh process under ``/usr/bin/time -v`` (wall seconds, peak RSS), the hostile input
and its benign twin one after the other, and prints the ratio hostile/benign. A run past ``--timeout`` seconds is
stopped (its whole process group) and reported as such. The bounds the issue sets: no hostile input past 600 MiB
or a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(cmd: list[str], env: dict[str, str], timeout: float, cwd: Path) -> tuple[int | None, float, int | None]:
    """(exit code or None when stopped, wall seconds, peak RSS in MiB) of one command, run in ``cwd`` (not the
    checkout: ``python -m`` puts the working directory first on the path, before ``PYTHONPATH``)."""
    started = time.perf_counter()
    proc = subprocess.Popen(["/usr/bin/time", "-v", *cmd], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=cwd)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.perf_counter() - started, None
    wall = time.perf_counter() - started
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    code = re.search(r"Exit status: (\d+)", err)
    return int(code.group(1)) if code else proc.returncode, wall, int(peak.group(1)) // 1024 if peak else None


def _text(size: int) -> str:
    random.seed(2)
    words = "the of and a to in is was he for it with as his on be at by this had not are but from".split()
    return " ".join(random.choice(words) for _ in range(size // 3))[:size]


def _quotes(folder: Path, name: str, quotes: list[str], text: str) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text(json.dumps({"doc": "d", "annotator": "m", "text": text, "spans": [{"text": q, "label": "X"} for q in quotes]}) + "\n",
                    encoding="utf-8")
    return path


def cases(folder: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Case name -> (hostile command, benign command), the unitize arguments of each."""
    text = _text(1_000_000)
    random.seed(3)
    absent = "".join(random.choice("abcdefghij ") for _ in range(100_000))
    present = text[500_000:500_000 + 100_000]
    out: dict[str, tuple[list[str], list[str]]] = {
        "quotes-long": (["validate", "--format", "quotes", "--annotations", str(_quotes(folder, "long", [absent], text)), "-q"],
                        ["validate", "--format", "quotes", "--annotations", str(_quotes(folder, "long-ok", [present], text)), "-q"]),
        "quotes-many": (["validate", "--format", "quotes", "--annotations", str(_quotes(folder, "many", ["the"] * 10_000, text)), "-q"],
                        ["validate", "--format", "quotes", "--annotations",
                         str(_quotes(folder, "many-ok", [text[i:i + 40] for i in range(0, 400_000, 40)], text)), "-q"]),
    }
    bomb, plain = folder / "bomb" / "bomb.spacy", folder / "plain" / "plain.spacy"
    bomb.parent.mkdir()
    plain.parent.mkdir()
    bomb.write_bytes(zlib.compress(b"\0" * 3_000_000_000, 9))
    plain.write_bytes(os.urandom(len(bomb.read_bytes())))  # the same size on disk, not a DocBin: read and reported at once
    out["spacy-bomb"] = (["validate", "--format", "spacy", "--annotations", str(bomb), "-q"],
                         ["validate", "--format", "spacy", "--annotations", str(plain), "-q"])
    study = ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"
    converted = folder / "brat-out"
    subprocess.run([sys.executable, "-m", "unitize", "convert", str(study), "--out", str(converted), "-q"], check=True, cwd=folder,
                   env=dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "")))
    out["candidate-range"] = (["agree", str(converted), "--candidates", "x1..100000000", "--metric", "alpha", "--dest", str(folder / "a1"), "-q"],
                              ["agree", str(converted), "--candidates", "ana", "--metric", "alpha", "--dest", str(folder / "a2"), "-q"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to run unitize with")
    parser.add_argument("--pythonpath", default=str(ROOT), help="the checkout whose unitize runs (default this one)")
    parser.add_argument("--cases", default=None, help="comma-separated case names (default all)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds before a run is stopped")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=args.pythonpath)
    os.environ["PYTHONPATH"] = args.pythonpath
    with tempfile.TemporaryDirectory(prefix="unitize-bench-hostile-") as scratch:
        table = cases(Path(scratch))
        chosen = args.cases.split(",") if args.cases else list(table)
        print(f"{'case':<16} {'hostile':>26} {'benign':>26} {'wall ratio':>10}")
        for name in chosen:
            hostile, benign = table[name]
            figures = [measure([args.python, "-m", "unitize", *cmd], env, args.timeout, Path(scratch)) for cmd in (hostile, benign)]
            shown = [f"exit {c} {w:6.1f} s {m or 0:5d} MiB" if c is not None else f"stopped after {w:.0f} s" for c, w, m in figures]
            ratio = figures[0][1] / figures[1][1] if figures[1][1] else float("nan")
            print(f"{name:<16} {shown[0]:>26} {shown[1]:>26} {ratio:>10.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
