#!/usr/bin/env python3
"""The fixed cost of a command: wall time of `unitize --help`, `unitize formats`, … against importing NumPy and pyarrow.parquet.

Each run is a fresh interpreter. A round runs the floor (``python -c "import numpy,
pyarrow.parquet"``, what any command that touches a matrix pays anyway) and then every
command, once with the working tree and, with ``--ref REF``, once with that git ref
(exported with ``git archive``), so that the floor and both versions meet the same load
on a shared machine. Reports the median wall time of each over ``--repeat`` rounds and
its ratio to the floor's median, and likewise the median peak RSS (every run goes through
``/usr/bin/time``: its "Maximum resident set size"). The CLI is launched as
``bench/identity.py`` does (the given tree first on ``sys.path``). Results: stdout and ``bench/results/startup.json``.

By default Python may write its bytecode caches (``__pycache__``) and one unmeasured
round writes them first, as after ``pip install``; ``--compile`` instead runs copies of
the trees' ``unitize/`` without caches under ``PYTHONDONTWRITEBYTECODE=1``, so that
unitize's modules are compiled from source in every run (NumPy's and pyarrow's caches,
written when they were installed, are read as usual).

    python bench/startup.py --python .venv/bin/python
    python bench/startup.py --python .venv/bin/python --ref main --repeat 30
    python bench/startup.py --python .venv/bin/python --commands "--help;formats;convert --help"
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
from identity import LAUNCH  # noqa: E402  (sibling module: runs the CLI of a given folder)

FLOOR = "import numpy, pyarrow.parquet"
TIME = "/usr/bin/time"  # GNU time: the peak RSS of each run
COMMANDS = "--help;formats;convert --help;agree --help"


def timed(cmd: list[str], env: dict[str, str], peak_file: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh process, run under ``/usr/bin/time``.

    The peak comes from GNU time, a small C process that forks the command: ``ru_maxrss``
    read here with ``os.wait4`` would count this benchmark's own pages, since Python
    starts a child with ``vfork`` and Linux carries the high-water mark across ``exec``.
    The wrapper costs every run, the floor's too, the same millisecond."""
    t0 = time.perf_counter()
    r = subprocess.run([TIME, "-f", "%M", "-o", str(peak_file), *cmd], env=env, cwd=str(REPO_DIR),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode not in (0, 2):  # 2: the top-level --help of some versions exits as a usage error
        raise SystemExit(f"{shlex.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return elapsed, int(peak_file.read_text().split()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter with unitize's dependencies")
    ap.add_argument("--ref", default=None, help="also time this git ref, in the same rounds as the working tree")
    ap.add_argument("--repeat", type=int, default=20, help="rounds (medians are reported)")
    ap.add_argument("--commands", default=COMMANDS, help=f"unitize command lines, separated by ';' (default {COMMANDS!r})")
    ap.add_argument("--compile", action="store_true", help="no bytecode caches: every module compiled in every run")
    ap.add_argument("--results", type=Path, default=BENCH_DIR / "results" / "startup.json")
    args = ap.parse_args(argv)
    python = str(Path(args.python).absolute()) if "/" in args.python else args.python
    commands = [shlex.split(c) for c in args.commands.split(";") if c.strip()]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    tmp = tempfile.TemporaryDirectory(prefix="unitize-startup-")
    trees = {"tree": REPO_DIR}
    if args.ref:
        archive = subprocess.run(["git", "archive", args.ref], cwd=str(REPO_DIR), capture_output=True, check=True)
        root = Path(tmp.name) / "ref"
        root.mkdir()
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
        trees = {args.ref: root, "tree": REPO_DIR}
    if args.compile:  # copies without bytecode caches, which no run writes
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for version, root in trees.items():
            copy = Path(tmp.name) / "compile" / version
            shutil.copytree(root / "unitize", copy / "unitize", ignore=shutil.ignore_patterns("__pycache__"))
            trees[version] = copy
    runs: dict[str, list[str]] = {"floor": [python, "-c", FLOOR]}
    for words in commands:
        for version, root in trees.items():
            runs[f"{version}: unitize {shlex.join(words)}"] = [python, "-c", LAUNCH, str(root), *words]
    times: dict[str, list[float]] = {name: [] for name in runs}
    peaks: dict[str, list[int]] = {name: [] for name in runs}
    for i in range(args.repeat + 1):
        for name, cmd in runs.items():
            elapsed, peak = timed(cmd, env, Path(tmp.name) / "peak")
            if i:  # round 0 writes the bytecode caches (or, with --compile, warms the file-system cache)
                times[name].append(elapsed)
                peaks[name].append(peak)
    floor = statistics.median(times["floor"])
    floor_peak = statistics.median(peaks["floor"])
    rows = []
    print(f"{'median s':>9} {'x floor':>8} {'peak MiB':>9} {'x floor':>8}  run ({args.repeat} rounds{', compiled from source' if args.compile else ''})")
    for name, values in times.items():
        median = statistics.median(values)
        peak_kib = statistics.median(peaks[name])
        rows.append({
            "run": name, "median_s": round(median, 4), "ratio": round(median / floor, 2),
            "peak_mib": round(peak_kib / 1024, 1), "peak_ratio": round(peak_kib / floor_peak, 2),
            "walls": [round(v, 4) for v in values],
        })
        print(f"{median:9.3f} {median / floor:8.2f} {peak_kib / 1024:9.1f} {peak_kib / floor_peak:8.2f}  {name}")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    info = {"python": python, "ref": args.ref, "repeat": args.repeat, "compile": args.compile, "load": os.getloadavg(), "runs": rows}
    args.results.write_text(json.dumps(info, indent=2) + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
