#!/usr/bin/env python3
"""Benchmark `unitize agree` on the synthetic TDB-scale corpus.

The corpus (``bench/make_corpus.py``, the same one ``bench/run.py`` uses) is
converted once with ``--units word`` (both approaches) into
``bench/.data/agree-<corpus>/``; then every metric is timed on its own, each in
a fresh subprocess (``python -m unitize agree OUT --metric M -q``), and all the
default metrics together. Reported: wall and CPU time, peak RSS (``os.wait4``)
and the number of result rows.

Usage::

    python bench/agree.py --small                 # quick: small preset
    python bench/agree.py                          # full TDB-scale preset
    python bench/agree.py --metrics alpha-u,alpha --python .venv/bin/python

Results go to stdout and ``bench/results/agree-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import DATA_DIR, REPO_DIR, RESULTS_DIR, ensure_corpus, fmt, human_bytes, run_child, tail  # noqa: E402

DEFAULT = ["alpha-u", "alpha", "fleiss", "cohen", "cochran-q"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="use (and generate) the small preset")
    ap.add_argument("--corpus", type=Path, help="corpus directory with study.toml")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs unitize")
    ap.add_argument("--metrics", default=",".join(DEFAULT), help="metrics to time one by one")
    ap.add_argument("--units", default="word", help="units to convert (word, char or word,char)")
    ap.add_argument("--reconvert", action="store_true", help="convert again even if the output exists")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    corpus = (args.corpus or DATA_DIR / ("tdb-small" if args.small else "tdb-full")).resolve()
    ensure_corpus(corpus, args.small, args.seed)
    out = DATA_DIR / f"agree-{corpus.name}-{args.units.replace(',', '+')}"
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR)}
    logs = Path(tempfile.mkdtemp(prefix="unitize-agree-bench-"))
    runs = []
    try:
        if args.reconvert or not (out / "manifest.json").is_file():
            shutil.rmtree(out, ignore_errors=True)
            cmd = [args.python, "-m", "unitize", "convert", str(corpus / "study.toml"), "--out", str(out),
                   "--units", args.units, "--approaches", "interval,boundary", "--quiet"]
            r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name="convert", timeout=None)
            if r["exit_code"] != 0:
                print(tail(r["stderr"]), file=sys.stderr)
                return 1
            print(f"convert: {r['wall_s']:.1f} s, peak RSS {human_bytes(r['peak_rss_bytes'])}")
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        rows = manifest["summary"].get("unit_rows", {})
        print(f"{out}: unit rows {rows}, segments {manifest['summary']['segments']}")
        metrics = [m for m in args.metrics.split(",") if m]
        for name in metrics + ["all-default"]:
            chosen = ",".join(DEFAULT) if name == "all-default" else name
            dest = logs / f"dest-{name}"
            cmd = [args.python, "-m", "unitize", "agree", str(out), "--metric", chosen, "--dest", str(dest), "-q"]
            r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name=name, timeout=None)
            if r["exit_code"] != 0:
                print(f"{name}: failed\n{tail(r['stderr'])}", file=sys.stderr)
                return 1
            import pyarrow.parquet as pq

            n = pq.read_metadata(dest / "results.parquet").num_rows
            runs.append({"metric": name, "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_bytes": r["peak_rss_bytes"], "result_rows": n})
        print(f"\n{'metric':<14} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10} {'rows':>7}")
        for x in runs:
            print(f"{x['metric']:<14} {fmt(x['wall_s']):>8} {fmt(x['cpu_s']):>8} {human_bytes(x['peak_rss_bytes']):>10} {x['result_rows']:>7}")
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        report = {"corpus": str(corpus), "out": str(out), "unit_rows": rows, "segments": manifest["summary"]["segments"], "runs": runs}
        (RESULTS_DIR / "agree-latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
