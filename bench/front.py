#!/usr/bin/env python3
"""Time the front end alone: `unitize validate` (read, validate, tokenize, segments; no matrices).

Each run is a fresh subprocess, once per DATT worker count (``--workers``, default
``1,2``: one process, then the reader's process pool with two workers). Reports wall
time and the CPU time of the whole process tree (children included, from
``os.wait4``), best of ``--repeat`` by wall, and peak RSS of the largest process.
Results: stdout and ``bench/results/front.json``.

    python bench/front.py --python .venv/bin/python                 # full preset (generated if missing)
    python bench/front.py --python .venv/bin/python --small --repeat 3
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import run as bench_run  # noqa: E402  (sibling module)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=None, help="default: bench/.data/tdb-full (or tdb-small)")
    ap.add_argument("--small", action="store_true", help="the small preset")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs `-m unitize`")
    ap.add_argument("--workers", default="1,2", help="comma-separated [input] workers values")
    ap.add_argument("--repeat", type=int, default=1, help="best of N (by wall time)")
    ap.add_argument("--results", type=Path, default=BENCH_DIR / "results" / "front.json")
    args = ap.parse_args(argv)
    if "/" in args.python:
        args.python = str(Path(args.python).absolute())
    corpus = args.corpus or bench_run.DATA_DIR / ("tdb-small" if args.small else "tdb-full")
    info = bench_run.ensure_corpus(corpus, args.small, 0)
    env, py = bench_run.python_env(args.python)
    bench_run.warm_cache(corpus)
    rows = []
    print(f"{'workers':>7} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10}")
    for workers in args.workers.split(","):
        cmd = [args.python, "-m", "unitize", "validate", str(corpus / "study.toml"), "-q",
               "--set", f"input.workers={int(workers)}"]
        best = None
        for i in range(args.repeat):
            r = bench_run.run_child(cmd, env=env, cwd=corpus, log_dir=bench_run.DATA_DIR / "logs",
                                    name=f"front-{workers}-{i}", timeout=None)
            if r["exit_code"] not in (0, 1, 3):
                print(r["stderr"], file=sys.stderr)
                return 1
            if best is None or r["wall_s"] < best["wall_s"]:
                best = r
        rows.append(dict(workers=int(workers), wall_s=best["wall_s"], cpu_s=best["cpu_s"],
                         peak_rss_bytes=best["peak_rss_bytes"], cmd=cmd))
        print(f"{workers:>7} {best['wall_s']:8.2f} {best['cpu_s']:8.2f} {bench_run.human_bytes(best['peak_rss_bytes']):>10}",
              flush=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(dict(corpus=info, python=py, runs=rows), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
