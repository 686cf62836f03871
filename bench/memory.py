#!/usr/bin/env python3
"""Peak memory of ``convert``, ``agree`` and ``report`` as the corpus grows: does cost follow the work?

For each corpus kind and scale, the corpus is generated once (``bench/make_corpus.py`` for the
TDB preset, with ``--texts`` scaled; ``bench/make_crowd.py --scale`` for crowd labels and spans),
then each command runs as its own process under ``/usr/bin/time -v``; the table reports the
maximum resident set size and the wall time, and, per command, the peak at the largest scale
over the peak at the smallest (1.0 means memory independent of the corpus size). Run by hand
(``make bench`` runs the convert benchmark); results go to ``bench/results/memory.json``.

    python bench/memory.py --kinds tdb --scales 0.125,0.25,0.5,1
    python bench/memory.py --kinds labels,spans --scales 0.25,1 --commands convert,agree
    python bench/memory.py --kinds labels --scales 10 --commands convert      # the 10x crowd run

``adjudicate`` is the majority vote of the default setting, ``export`` is ``--to disagreements``.
The figures are whole-process peaks (the largest single process: with ``--executor processes``
the workers are separate processes and not summed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / ".data"
TDB_TEXTS = 197

#: per corpus kind: how a scale's corpus is made (its folder) and where its study file is
KINDS = ("tdb", "labels", "spans")


def corpus(kind: str, scale: float, python: str) -> Path:
    """The study file of a kind at a scale, generating the corpus the first time."""
    if kind == "tdb":
        folder = DATA / f"mem-tdb-{scale:g}"
        if not (folder / "study.toml").is_file():
            texts = max(1, round(TDB_TEXTS * scale))
            subprocess.run([python, str(BENCH / "make_corpus.py"), "--out", str(folder), "--texts", str(texts), "--force"], check=True)
        return folder / "study.toml"
    folder = DATA / f"mem-crowd-{scale:g}"
    part = "labels" if kind == "labels" else "spans"
    if not (folder / part / "study.toml").is_file():
        subprocess.run([python, str(BENCH / "make_crowd.py"), "--out", str(folder), "--scale", str(scale), "--parts", part], check=True)
    return folder / part / "study.toml"


def measured(command: list[str]) -> dict:
    """Peak RSS (MiB) and wall seconds of one process, from ``/usr/bin/time -v``."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    wall = time.perf_counter() - started
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if done.returncode != 0 or peak is None:
        tail = "\n".join(done.stderr.splitlines()[-15:])
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{tail}")
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([0-9.]+)", done.stderr))
    return {"peak_mib": round(int(peak.group(1)) / 1024, 1), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def run(kind: str, scale: float, commands: list[str], python: str, extra: list[str]) -> dict:
    study = corpus(kind, scale, python)
    out = DATA / f"mem-out-{kind}-{scale:g}"
    if "convert" in commands:
        shutil.rmtree(out, ignore_errors=True)
    elif not (out / "manifest.json").is_file():
        raise SystemExit(f"{out} holds no output: measure convert first (--commands convert,...)")
    unitize = [python, "-m", "unitize"]
    row: dict = {"kind": kind, "scale": scale}
    for name in commands:
        if name == "convert":
            row[name] = measured([*unitize, "convert", str(study), "--out", str(out), "--quiet", *extra])
        elif name == "agree":
            metrics = ["--metric", "alpha,fleiss"] if kind == "labels" else []
            row[name] = measured([*unitize, "agree", str(out), "--quiet", *metrics])
        elif name == "report":
            row[name] = measured([*unitize, "report", str(out), "--quiet"])
        elif name == "adjudicate":
            row[name] = measured([*unitize, "adjudicate", str(out), "--quiet"])
        elif name == "export":
            row[name] = measured([*unitize, "export", str(out), "--to", "disagreements", "--quiet"])
        print(f"{kind:>6} {scale:>6g} {name:>10}: {row[name]['peak_mib']:>8.1f} MiB  {row[name]['wall_s']:>7.2f} s  "
              f"{row[name]['cpu_s']:>7.2f} s CPU", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="tdb,labels,spans", help=f"corpus kinds, of {', '.join(KINDS)}")
    ap.add_argument("--scales", default="0.125,0.25,0.5,1", help="scales (fractions of the TDB preset / of the crowd generator)")
    ap.add_argument("--commands", default="convert,agree,report,adjudicate,export",
                    help="commands to measure, in order (the others read convert's output; export: --to disagreements)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs unitize")
    ap.add_argument("--convert-args", default="", help="more arguments for convert, e.g. '--layout sparse'")
    args = ap.parse_args(argv)
    if not Path("/usr/bin/time").is_file():
        print("needs /usr/bin/time (Debian's package 'time')", file=sys.stderr)
        return 2
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        ap.error(f"unknown kind(s) {', '.join(sorted(unknown))}")
    scales = [float(s) for s in args.scales.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    rows = [run(kind, scale, commands, args.python, args.convert_args.split()) for kind in kinds for scale in scales]
    growth = {}
    for kind in kinds:
        mine = [r for r in rows if r["kind"] == kind]
        if len(mine) > 1:
            growth[kind] = {c: round(mine[-1][c]["peak_mib"] / mine[0][c]["peak_mib"], 2) for c in commands}
            print(f"{kind}: peak at scale {mine[-1]['scale']:g} / peak at scale {mine[0]['scale']:g}: "
                  + ", ".join(f"{c} {v:.2f}" for c, v in growth[kind].items()))
    results = BENCH / "results"
    results.mkdir(exist_ok=True)  # (a run without convert measures the outputs an earlier run left)
    record = {"rows": rows, "growth": growth, "host": platform.node(), "cpus": os.cpu_count(),
              "load": os.getloadavg(), "python": args.python, "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (results / "memory.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
