#!/usr/bin/env python3
"""Time the front end alone: `unitize validate` (read, validate, tokenize, segments; no matrices).

Each run is a fresh subprocess, once per DATT worker count (``--workers``, default
``1,2``: one process, then the reader's process pool with two workers). Reports wall
time and the CPU time of the whole process tree (children included, from
``os.wait4``), best of ``--repeat`` (by wall; CPU is the least of the repeats), and
peak RSS of the largest process. With ``--ref REF`` the same runs are made with that
git ref of unitize (exported with ``git archive``), alternating with the working tree's,
so that both meet the same load on a shared machine. Results: stdout and
``bench/results/front.json``.

    python bench/front.py --python .venv/bin/python                          # full preset (generated if missing)
    python bench/front.py --python .venv/bin/python --ref main --repeat 3    # before/after
    python bench/front.py --python .venv/bin/python --small
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import run as bench_run  # noqa: E402  (sibling module)
from identity import LAUNCH  # noqa: E402  (sibling module: runs the CLI of a given folder)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=None, help="default: bench/.data/tdb-full (or tdb-small)")
    ap.add_argument("--small", action="store_true", help="the small preset")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs unitize")
    ap.add_argument("--workers", default="1,2", help="comma-separated [input] workers values")
    ap.add_argument("--repeat", type=int, default=1, help="best of N")
    ap.add_argument("--ref", default=None, help="also time this git ref, alternating with the working tree")
    ap.add_argument("--results", type=Path, default=BENCH_DIR / "results" / "front.json")
    args = ap.parse_args(argv)
    if "/" in args.python:
        args.python = str(Path(args.python).absolute())
    corpus = args.corpus or bench_run.DATA_DIR / ("tdb-small" if args.small else "tdb-full")
    info = bench_run.ensure_corpus(corpus, args.small, 0)
    env, py = bench_run.python_env(args.python)
    trees = {"tree": str(bench_run.REPO_DIR)}
    tmp = None
    if args.ref:
        tmp = tempfile.TemporaryDirectory(prefix="unitize-front-")
        archive = subprocess.run(["git", "archive", args.ref], cwd=str(bench_run.REPO_DIR), capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp.name], input=archive.stdout, check=True)
        trees = {args.ref: tmp.name, "tree": str(bench_run.REPO_DIR)}
    bench_run.warm_cache(corpus)
    rows = []
    print(f"{'version':>12} {'workers':>7} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10}")
    for workers in args.workers.split(","):
        best: dict[str, dict] = {}
        for i in range(args.repeat):
            for version, root in trees.items():
                cmd = [args.python, "-c", LAUNCH, root, "validate", str(corpus / "study.toml"), "-q",
                       "--set", f"input.workers={int(workers)}"]
                r = bench_run.run_child(cmd, env=env, cwd=corpus, log_dir=bench_run.DATA_DIR / "logs",
                                        name=f"front-{workers}-{i}", timeout=None)
                if r["exit_code"] not in (0, 1, 3):
                    print(r["stderr"], file=sys.stderr)
                    return 1
                b = best.setdefault(version, dict(r, min_cpu_s=r["cpu_s"]))
                b["min_cpu_s"] = min(b["min_cpu_s"], r["cpu_s"])
                if r["wall_s"] < b["wall_s"]:
                    best[version] = dict(r, min_cpu_s=b["min_cpu_s"])
        for version, b in best.items():
            rows.append(dict(version=version, workers=int(workers), wall_s=round(b["wall_s"], 2), cpu_s=round(b["min_cpu_s"], 2),
                             peak_rss_bytes=b["peak_rss_bytes"], repeat=args.repeat))
            print(f"{version:>12} {workers:>7} {b['wall_s']:8.2f} {b['min_cpu_s']:8.2f} {bench_run.human_bytes(b['peak_rss_bytes']):>10}",
                  flush=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(dict(corpus=info, python=py, ref=args.ref, runs=rows), indent=2) + "\n")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
