#!/usr/bin/env python3
"""Benchmark `unitize convert` on ToxicSpans in full (crowd span data, long layout).

ToxicSpans (../shared/corpora/toxic-spans, CC0): 16,100 posts, 59,215 (post, worker)
assignments by 3,579 workers, 46,784 spans. Each run converts the whole data set with
the ``span-table`` adapter in a fresh subprocess — ``char`` units, ``word`` units
(``--tokenizer``, default ``spacy:en``), and both in one process — and reports wall
time, child CPU time, peak RSS (``os.wait4``), unit rows written (from
``manifest.json``) and output size. With more than 32 annotators the unit matrices
are written in the long layout automatically.

Usage::

    python bench/toxic_spans.py                      # needs ../shared/corpora/toxic-spans
    python bench/toxic_spans.py --data DIR --python .venv/bin/python --repeat 3
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
from run import DATA_DIR, dir_size, human_bytes, python_env, read_manifest, run_child  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "corpora" / "toxic-spans"
STUDY = """[input]
format = "span-table"
annotations = "{data}/spans.csv"
texts = "{data}/comments.csv"
roster = "{data}/annotations.csv"
columns = {{doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start", end = "end"}}

[unitize]
approaches = ["interval"]
modes = ["separate", "labels"]
tokenizer = "{tokenizer}"
"""
RUNS = {"char": ["--units", "char"], "word": ["--units", "word"], "char+word": ["--units", "char,word"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the toxic-spans folder (comments.csv, annotations.csv, spans.csv)")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs `-m unitize`")
    ap.add_argument("--tokenizer", default="spacy:en")
    ap.add_argument("--repeat", type=int, default=1, help="best of N wall times per run")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "results" / "toxic-spans.json")
    args = ap.parse_args(argv)
    if "/" in args.python:
        args.python = os.path.abspath(args.python)  # not resolve(): a venv's python is a symlink
    if not (args.data / "spans.csv").is_file():
        print(f"ToxicSpans not found in {args.data}", file=sys.stderr)
        return 2
    DATA_DIR.mkdir(parents=True, exist_ok=True)  # python_env probes from there
    env, info = python_env(args.python)
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="unitize-toxic-") as tmp:
        tmp_path = Path(tmp)
        study = tmp_path / "study.toml"
        study.write_text(STUDY.format(data=args.data.resolve().as_posix(), tokenizer=args.tokenizer), encoding="utf-8")
        for name, flags in RUNS.items():
            best = None
            for i in range(args.repeat):
                out = tmp_path / f"out-{name}-{i}"
                cmd = [args.python, "-m", "unitize", "convert", str(study), "--out", str(out), "--json", "--quiet", *flags]
                res = run_child(cmd, env=env, cwd=REPO, log_dir=tmp_path / "logs", name=f"{name}-{i}", timeout=None)
                if res["exit_code"] != 0:
                    print(f"run {name} failed (exit {res['exit_code']}):\n{res['stderr'][-3000:]}", file=sys.stderr)
                    return 1
                manifest, units, problem = read_manifest(out)
                if problem:
                    print(problem, file=sys.stderr)
                    return 1
                res["unit_rows"] = sum(int(u.get("rows") or 0) for u in units)
                res["out_bytes"] = dir_size(out)[1]
                res["findings"] = manifest["summary"]["findings_by_code"]
                res["annotators"] = len(manifest["summary"]["annotators"])
                if best is None or res["wall_s"] < best["wall_s"]:
                    best = res
                shutil.rmtree(out)
            rows_out.append(dict(run=name, **{k: best[k] for k in ("wall_s", "cpu_s", "peak_rss_bytes", "unit_rows", "out_bytes", "findings", "annotators")}))
    print(f"ToxicSpans ({args.data}), python {info.get('python')}, tokenizer {args.tokenizer}, best of {args.repeat}")
    print(f"{'run':<10} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10} {'unit rows':>12} {'rows/s':>12} {'out size':>10}")
    for r in rows_out:
        print(
            f"{r['run']:<10} {r['wall_s']:>8.2f} {r['cpu_s']:>8.2f} {human_bytes(r['peak_rss_bytes']):>10} "
            f"{r['unit_rows']:>12,} {r['unit_rows'] / r['wall_s']:>12,.0f} {human_bytes(r['out_bytes']):>10}"
        )
    print("findings:", json.dumps(rows_out[-1]["findings"]), "annotators:", rows_out[-1]["annotators"])
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps({"python": info, "tokenizer": args.tokenizer, "runs": rows_out}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
