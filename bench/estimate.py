#!/usr/bin/env python3
"""Benchmark ``unitize estimate`` on ToxicSpans with five model runs, paired with a plain ``unitize agree``.

ToxicSpans (../shared/corpora/toxic-spans: 16,100 posts, 3,579 workers) gets five runs of a made-up model,
``gpt-run1`` … ``gpt-run5``: for each post, each run copies the spans of one of the post's workers drawn at random,
dropping each span with probability 0.15 (so the runs flip where the workers differ). The study (word units,
the interval approach, label matrices, ``[roles] candidates = ["gpt-run1..5"]``) is converted once into
``bench/.data/toxic-models/out`` and adjudicated once (the humans' majority). Then, each in a fresh process,
``--repeat`` times interleaved (paired), with peak RSS from ``os.wait4``:

- ``agree``: ``unitize agree OUT --metric alpha`` (every annotator, the plain baseline);
- ``estimate``: ``unitize estimate OUT --humans-share 0.3`` (PPI++ per label for each run on 30 % of the posts'
  gold, the family's stability, the majority-of-k curve).

    python bench/estimate.py                   # needs ../shared/corpora/toxic-spans
    python bench/estimate.py --repeat 5 --posts 4000

Results go to stdout and ``bench/results/estimate-latest.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import DATA_DIR, REPO_DIR, RESULTS_DIR, run_child, tail  # noqa: E402

DATA = REPO_DIR.parent / "shared" / "corpora" / "toxic-spans"
RUNS = 5
STUDY = """[input]
format = "span-table"
annotations = "spans.csv"
texts = "{data}/comments.csv"
roster = "annotations.csv"
columns = {{doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start", end = "end"}}

[unitize]
units = ["word"]
approaches = ["interval"]
modes = ["labels"]
tokenizer = "regex"

[roles]
candidates = ["gpt-run1..{runs}"]
"""


def make_study(folder: Path, data: Path, posts: int | None, seed: int) -> Path:
    """The study: ToxicSpans' roster and spans (the first ``posts`` posts, or all), and five model runs."""
    rng = random.Random(seed)
    with (data / "annotations.csv").open(encoding="utf-8", newline="") as fh:
        roster = list(csv.DictReader(fh))
    with (data / "spans.csv").open(encoding="utf-8", newline="") as fh:
        spans_of: dict[str, list[dict[str, str]]] = defaultdict(list)
        for row in csv.DictReader(fh):
            spans_of[row["annotation"]].append(row)
    by_post: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in roster:
        by_post[row["comment_id"]].append(row)
    kept = sorted(by_post)[:posts] if posts else sorted(by_post)
    folder.mkdir(parents=True, exist_ok=True)
    roster_out, spans_out = [["annotation", "comment_id", "worker"]], [["annotation", "type", "start", "end"]]
    next_key = 10**7
    for post in kept:
        for row in by_post[post]:
            roster_out.append([row["annotation"], post, row["worker"]])
            spans_out += [[s["annotation"], s["type"], s["start"], s["end"]] for s in spans_of[row["annotation"]]]
        for run in range(1, RUNS + 1):
            copied = rng.choice(by_post[post])
            next_key += 1
            roster_out.append([str(next_key), post, f"gpt-run{run}"])
            spans_out += [[str(next_key), s["type"], s["start"], s["end"]] for s in spans_of[copied["annotation"]] if rng.random() >= 0.15]
    for name, rows in (("annotations.csv", roster_out), ("spans.csv", spans_out)):
        with (folder / name).open("w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows(rows)
    (folder / "study.toml").write_text(STUDY.format(data=data.resolve(), runs=RUNS), encoding="utf-8")
    return folder / "study.toml"


def child(cmd: list[str], env: dict, logs: Path, name: str) -> dict:
    """One timed run (bench/run.py's run_child), failing loudly with its log's tail."""
    r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name=name, timeout=None)
    if r["exit_code"] != 0:
        raise SystemExit(f"{name} failed ({r['exit_code']}):\n{tail(r['stderr'])}")
    r["peak_rss_mib"] = r["peak_rss_bytes"] / 2**20
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--posts", type=int, default=None, help="the first N posts only (default all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not (args.data / "spans.csv").is_file():
        print(f"ToxicSpans not found in {args.data}", file=sys.stderr)
        return 2
    folder = DATA_DIR / f"toxic-models{'-' + str(args.posts) if args.posts else ''}"
    out = folder / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR)}
    logs = Path(tempfile.mkdtemp(prefix="unitize-estimate-bench-"))
    unitize = [args.python, "-m", "unitize"]
    if not (out / "adjudication" / "summary.json").is_file():
        study = make_study(folder, args.data, args.posts, args.seed)
        for step in (["convert", str(study), "--out", str(out), "-q"], ["adjudicate", str(out), "-q"]):
            r = child([*unitize, *step], env, logs, step[0])
            print(f"{step[0]}: {r['wall_s']:.1f} s, peak {r['peak_rss_mib']:.0f} MiB", file=sys.stderr)
    commands = {"agree": ["agree", str(out), "--metric", "alpha", "-q"], "estimate": ["estimate", str(out), "--humans-share", "0.3", "-q"]}
    runs: dict[str, list[dict]] = {k: [] for k in commands}
    for i in range(args.repeat):
        for name, cmd in commands.items():
            runs[name].append(child([*unitize, *cmd], env, logs, f"{name}-{i}"))
    summary = {name: {"cpu_s": statistics.median(r["cpu_s"] for r in rs), "wall_s": statistics.median(r["wall_s"] for r in rs),
                      "peak_rss_mib": max(r["peak_rss_mib"] for r in rs)} for name, rs in runs.items()}
    ratios = [e["cpu_s"] / a["cpu_s"] for a, e in zip(runs["agree"], runs["estimate"])]
    summary["estimate_over_agree_cpu"] = statistics.median(ratios)
    summary["posts"] = args.posts or "all"
    print(json.dumps(summary, indent=2))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "estimate-latest.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
