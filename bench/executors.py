#!/usr/bin/env python3
"""Time `unitize convert` and `unitize agree` with each executor; wall, CPU and peak RSS per process.

    python bench/executors.py                                   # bench/.data/tdb-full (make_corpus.py makes it)
    python bench/executors.py --executors local,processes:2 --sizes
    python bench/executors.py --corpus bench/.data/tdb-small --python .venv/bin/python

For each executor the CLI runs in a fresh process (`python -m unitize convert STUDY --out DIR
--executor E --quiet`, then `python -m unitize agree DIR --executor E --quiet`); the script polls
/proc every 0.1 s for the process and all its descendants (pool workers, Dask's scheduler
thread lives in the main process, its nannies and workers are children) and keeps, per process,
the last CPU time (utime + stime) and the peak RSS (VmHWM) it saw. A process that lives less
than one poll may be missed; the totals of the main process come from os.wait4 and are exact.
The unit-matrix files of every executor are compared (sha256) with the first one's.

``--sizes`` adds the pickled size of every task and result the executors ship: the
tokenization chunks (texts out, token arrays back) and the agree tasks (names out, rows back).
Linux only (/proc). Results: a table on stdout, details in bench/results/executors.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def _sample(pid: int) -> tuple[float, int, str] | None:
    """(CPU seconds, peak RSS in bytes, command) of a live process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        hwm = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        return cpu, hwm, cmd
    except (OSError, IndexError, ValueError):
        return None


def run(cmd: list[str], env: dict[str, str]) -> dict:
    """Run ``cmd``: wall time, the main process's totals from os.wait4 (CPU including the descendants it
    waited for), and the CPU and peak RSS of every descendant seen while it ran."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, dict] = {}
    status = usage = None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        stack = _children(proc.pid)
        while stack:
            child = stack.pop()
            stack += _children(child)
            s = _sample(child)
            if s is not None:  # keep the largest values seen: an exiting process reports no VmHWM
                last = seen.get(child, {"cpu_s": 0.0, "peak_rss_mib": 0.0, "cmd": ""})
                seen[child] = {"cpu_s": max(last["cpu_s"], round(s[0], 2)),
                               "peak_rss_mib": max(last["peak_rss_mib"], round(s[1] / 2**20, 1)), "cmd": s[2][:100] or last["cmd"]}
        time.sleep(0.1)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err}")
    return {
        "wall_s": round(wall, 2),
        "main_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),  # the main process and the descendants it waited for
        "main_peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "workers": sorted(seen.values(), key=lambda w: -w["cpu_s"]),
    }


def units_digest(out: Path) -> str:
    h = hashlib.sha256()
    matrices = [p for folder in ("units", "labels", "long") for p in sorted((out / folder).rglob("*.parquet"))]
    for p in matrices + sorted((out / "segments").rglob("*.parquet")):
        h.update(p.relative_to(out).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def sizes(study: Path, out: Path, workers: int) -> dict:
    """Pickled sizes of what the executors ship: tokenization chunks and agree tasks, and their results."""
    sys.path.insert(0, str(REPO))
    import numpy as np

    from unitize import load_settings, metrics, read_corpus
    from unitize.agree import tasks
    from unitize.agree.measure import measure_task
    from unitize.dataset import OutputData
    from unitize.units.spaces import chunks, tokenize_chunk

    settings = load_settings(study)
    corpus = read_corpus(settings)
    doc_ids = sorted(d for d, doc in corpus.documents.items() if doc.text is not None)
    lengths = np.array([len(corpus.documents[d].text) for d in doc_ids])
    tok = [(settings.tokenizer, [corpus.documents[d].text for d in doc_ids[c]]) for c in chunks(lengths)]
    tok_out = [len(pickle.dumps(tokenize_chunk(t))) for t in tok]
    tok_in = [len(pickle.dumps(t)) for t in tok]
    data = OutputData(out)
    options = metrics.MeasureOptions()
    jobs = [(str(out), name, part, metrics.default(), options, parts) for name, part, parts in tasks.plan(data, data.settings, None, workers)]
    ag_in = [len(pickle.dumps(j)) for j in jobs]
    ag_out = [len(pickle.dumps(measure_task(j))) for j in jobs]
    from unitize import unitize as run_unitize

    with tempfile.TemporaryDirectory() as staging:
        wr_in = [len(pickle.dumps(t)) for t in run_unitize(corpus, settings).part_tasks(Path(staging))]

    def stat(xs: list[int]) -> dict:
        return {"tasks": len(xs), "total_bytes": sum(xs), "max_bytes": max(xs) if xs else 0}

    return {"tokenize_tasks": stat(tok_in), "tokenize_results": stat(tok_out), "write_tasks": stat(wr_in),
            "agree_tasks": stat(ag_in), "agree_results": stat(ag_out)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=BENCH_DIR / ".data" / "tdb-full", help="a corpus of make_corpus.py (its study.toml)")
    ap.add_argument("--executors", default="local,processes:2,dask", help="comma-separated executor specs")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs unitize")
    ap.add_argument("--metric", default=None, help="agree --metric (default the CLI's)")
    ap.add_argument("--sizes", action="store_true", help="also the pickled sizes of tasks and results")
    ap.add_argument("--only-sizes", action="store_true", help="only the sizes, of the output a previous run left")
    args = ap.parse_args(argv)
    study = args.corpus / "study.toml"
    if not study.is_file():
        raise SystemExit(f"no {study}: make one with python bench/make_corpus.py --out {args.corpus}")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    base = BENCH_DIR / ".data" / "executors"
    report: dict = {"corpus": str(args.corpus), "cores": os.cpu_count(), "runs": {}}
    digests = {}
    for spec in [] if args.only_sizes else args.executors.split(","):
        out = base / spec.replace(":", "-")
        subprocess.run(["rm", "-rf", str(out)], check=True)
        conv = run([args.python, "-m", "unitize", "convert", str(study), "--out", str(out), "--executor", spec, "--quiet"], env)
        agree_cmd = [args.python, "-m", "unitize", "agree", str(out), "--executor", spec, "--quiet"]
        agr = run(agree_cmd + (["--metric", args.metric] if args.metric else []), env)
        digests[spec] = units_digest(out)
        report["runs"][spec] = {"convert": conv, "agree": agr, "units_sha256_16": digests[spec]}
        for step, r in (("convert", conv), ("agree", agr)):
            workers = "; ".join(f"{w['cpu_s']} s / {w['peak_rss_mib']} MiB" for w in r["workers"][:4]) or "-"
            print(f"{spec:14} {step:8} wall {r['wall_s']:7.2f} s  main cpu {r['main_cpu_s']:7.2f} s  "
                  f"main peak {r['main_peak_rss_mib']:7.1f} MiB  other processes (cpu / peak): {workers}", flush=True)
    if digests:
        first = next(iter(digests.values()))
        report["identical_units"] = all(d == first for d in digests.values())
        print("unit matrices and segments identical across executors:", report["identical_units"])
    report["load_average"] = os.getloadavg()
    if args.sizes or args.only_sizes:
        report["sizes"] = sizes(study, base / args.executors.split(",")[0].replace(":", "-"), 2)
        print(json.dumps(report["sizes"], indent=1))
    (BENCH_DIR / "results").mkdir(exist_ok=True)
    (BENCH_DIR / "results" / ("executors-sizes.json" if args.only_sizes else "executors.json")).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
