#!/usr/bin/env python3
"""Benchmark flat labels: `unitize convert --format labels` on a crowd-sized long table.

Generates (once, seeded) a long CSV ``item,worker,label,score`` in
``bench/.data/labels-<items>-<pool>-<per_item>.csv`` — every item labelled by
``per_item`` workers drawn from a pool of ``pool``, a nominal label (5 classes,
some cells empty) and an interval score — then runs the CLI in a fresh
subprocess per layout and reports wall time, child CPU time and peak RSS (from
``os.wait4``), label records per second and the item-matrix rows written.

Usage::

    python bench/labels.py                                  # 50,000 items, pool 2,000, 5 per item: long layout
    python bench/labels.py --pool 20 --layouts long wide    # a panel of 20 annotators: both layouts
    python bench/labels.py --items 5000 --python .venv/bin/python

Only the standard library is needed here; ``--python`` must have unitize installed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABELS = ["none", "insult", "threat", "identity", "profanity"]


def make_table(path: Path, items: int, pool: int, per_item: int, seed: int = 5) -> int:
    rng = random.Random(seed)
    rows = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item", "worker", "label", "score"])
        for item in range(items):
            for worker in rng.sample(range(pool), per_item):
                label = "" if rng.random() < 0.02 else rng.choice(LABELS)
                out.writerow([f"c{item:06d}", f"w{worker}", label, rng.randint(0, 4)])
                rows += 1
    os.replace(tmp, path)
    return rows


def run(python: str, table: Path, layout: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="unitize-labels-bench-") as tmp:
        study = Path(tmp) / "study.toml"
        study.write_text(
            f'[input]\nformat = "labels"\nannotations = "{table.as_posix()}"\nitem = "item"\nannotator = "worker"\n'
            f'labels = ["label", "score"]\n\n[items]\nlayouts = ["{layout}"]\n\n'
            '[items.groups.score]\nlevel = "interval"\n\n[output]\ndir = "out"\n',
            encoding="utf-8",
        )
        start = time.perf_counter()
        proc = subprocess.Popen([python, "-m", "unitize", "convert", str(study), "--json", "--quiet"], stdout=subprocess.PIPE)
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"unitize failed ({status}) for layout {layout}")
        summary = json.loads(stdout)
        size = sum(p.stat().st_size for p in (Path(tmp) / "out").rglob("*") if p.is_file())
    return {
        "layout": layout,
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "label_records": summary["accounting"]["labels"]["read"],
        "matrix_rows": sum(summary["unit_rows"].values()),
        "out_mb": round(size / 2**20, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--pool", type=int, default=2_000)
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--layouts", nargs="+", default=["long"], choices=["long", "wide"])
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    table = HERE / ".data" / f"labels-{args.items}-{args.pool}-{args.per_item}.csv"
    if not table.exists():
        rows = make_table(table, args.items, args.pool, args.per_item)
        print(f"generated {table} ({rows:,} rows)")
    print(f"{'layout':<7} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'labels':>10} {'labels/s':>10} {'rows':>10} {'out MB':>7}")
    results = []
    for layout in args.layouts:
        r = run(args.python, table, layout)
        results.append(r)
        print(
            f"{r['layout']:<7} {r['wall_s']:>7} {r['cpu_s']:>7} {r['peak_rss_mb']:>8} {r['label_records']:>10,} "
            f"{r['label_records'] / r['wall_s']:>10,.0f} {r['matrix_rows']:>10,} {r['out_mb']:>7}"
        )
    out = HERE / "results" / "labels-latest.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"table": table.name, "args": vars(args), "results": results}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
