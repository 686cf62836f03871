#!/usr/bin/env python3
"""Time `unitize convert` + `unitize agree` on the crowd-scale study at several sizes, per executor.

For each part of the study (``--kinds``: ``labels`` = 1 M items × 5 of 20,000 workers,
``spans`` = 200,000 short texts × 3 of 2,000 workers; see ``make_crowd.py``), each scale
(``--scales``, fractions of that size) and each executor (``--executors``), two fresh
subprocesses run one after the other::

    python -m unitize convert STUDY.toml --out OUT --json -q --executor X
    python -m unitize agree OUT -q --executor X [--agree-args ...]

and each is measured: wall time; CPU time (user + system) of the process and every child
it waited for (``os.wait4``: pool workers included); peak RSS of the whole process tree
(the sum over the command and all its descendants, sampled from ``/proc`` every
``--sample`` seconds, so a worker living shorter than that can be missed) beside the
largest single process (``ru_maxrss``); rows/s (unit-matrix rows written by convert,
from the manifest, over convert's wall; input records over the total wall); the
speed-up of each executor over ``local`` at the same scale (wall of local / wall).

``--executor`` arrives with the executors; when the installed unitize does not know the
flag (``convert --help`` does not list it) the script says so: ``local`` then runs
without the flag (the in-process path the flag's default is), the other executors are
reported as not run. A scheduler given by address (``dask:tcp://…``) is not in the
process tree: its memory is not counted.

Results: a table on stdout and ``bench/results/scale.json``.

    python bench/scale.py --python .venv/bin/python --scales 1/8,1/4 --executors local
    python bench/scale.py --python .venv/bin/python --executors local,processes,dask   # 1/8 … 1
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import make_crowd  # noqa: E402  (sibling module)

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# ---------------------------------------------------------------- the process tree

def _tree_rss(root: int) -> tuple[int, int]:
    """(summed RSS in bytes, number of processes) of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total = count = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * PAGE
            count += 1
        except OSError:
            pass
        todo.extend(children.get(pid, ()))
    return total, count


def measure(cmd: list[str], *, env: dict, cwd: Path, log: Path, sample: float, timeout: float | None) -> dict:
    """Run ``cmd``; wall, CPU of the tree (os.wait4), peak RSS of the tree (sampled) and of one process."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log.with_suffix(".stdout"), "wb") as fo, open(log.with_suffix(".stderr"), "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=env, cwd=str(cwd))
        peak = {"rss": 0, "procs": 0}
        done = threading.Event()

        def sampler() -> None:
            while not done.is_set():
                rss, n = _tree_rss(proc.pid)
                peak["rss"] = max(peak["rss"], rss)
                peak["procs"] = max(peak["procs"], n)
                done.wait(sample)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            done.set()
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
        thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "cmd": cmd,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 3),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
        "peak_rss_tree_bytes": peak["rss"],
        "peak_rss_process_bytes": ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024),
        "processes": peak["procs"],
        "stdout": log.with_suffix(".stdout").read_text(encoding="utf-8", errors="replace")[-20000:],
        "stderr": log.with_suffix(".stderr").read_text(encoding="utf-8", errors="replace")[-4000:],
    }


# ---------------------------------------------------------------- helpers

def knows_executor(python: str, env: dict) -> dict[str, bool]:
    out = {}
    for command in ("convert", "agree"):
        r = subprocess.run([python, "-m", "unitize", command, "--help"], env=env, capture_output=True, text=True)
        out[command] = "--executor" in r.stdout
    return out


def gib(n: int | None) -> str:
    return "-" if not n else f"{n / 2**30:.2f} GiB"


def rows_written(out: Path) -> tuple[int | None, int | None]:
    """(unit-matrix rows, input records) from the output's manifest."""
    try:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    rows = sum((manifest.get("summary", {}).get("unit_rows") or {}).values()) or None
    acc = manifest.get("accounting", {})
    records = (acc.get("labels") or {}).get("read") if "labels" in acc else (acc.get("records") or {}).get("read")
    return rows, records


def ensure_data(root: Path, kind: str, scale: Fraction, python: str, env: dict) -> Path:
    folder = root / f"scale-{float(scale):g}"
    study = folder / kind / "study.toml"
    if not study.is_file():
        print(f"generating {kind} at scale {scale} in {folder} ...", flush=True)
        subprocess.run([python, str(BENCH_DIR / "make_crowd.py"), "--out", str(folder), "--scale", str(float(scale)),
                        "--parts", kind], env=env, check=True, stdout=subprocess.DEVNULL)
        info = json.loads((folder / "crowd.json").read_text())
        (folder / f"crowd-{kind}.json").write_text(json.dumps(info, indent=2) + "\n")
    return study


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs `-m unitize`")
    ap.add_argument("--scales", default="1/8,1/4,1/2,1", help="fractions of the default size")
    ap.add_argument("--executors", default="local,processes,dask", help="executor specs, e.g. local,processes:2,dask")
    ap.add_argument("--kinds", default="labels,spans", help="labels, spans or both")
    ap.add_argument("--agree-args", default="", help="extra arguments for every agree run (quoted), e.g. '--metric alpha'")
    ap.add_argument("--data", type=Path, default=BENCH_DIR / ".data" / "crowd", help="generated studies and outputs")
    ap.add_argument("--results", type=Path, default=BENCH_DIR / "results" / "scale.json")
    ap.add_argument("--sample", type=float, default=0.1, help="seconds between RSS samples of the process tree")
    ap.add_argument("--timeout", type=float, default=None, help="kill a command after this many seconds")
    ap.add_argument("--keep-outputs", action="store_true", help="keep each run's output directory")
    args = ap.parse_args(argv)
    python = str(Path(args.python).absolute()) if "/" in args.python else args.python
    env = dict(os.environ, PYTHONHASHSEED="0")
    scales = [Fraction(s) for s in args.scales.split(",")]
    executors = [e for e in args.executors.split(",") if e]
    kinds = [k for k in args.kinds.split(",") if k]
    flag = knows_executor(python, env)
    if not all(flag.values()):
        print(f"note: the installed unitize does not know --executor (convert: {flag['convert']}, agree: {flag['agree']}); "
              "'local' runs without the flag (today's in-process path), other executors are not run", flush=True)
    results = []
    header = (f"{'kind':6} {'scale':>5} {'executor':12} {'step':8} {'wall s':>8} {'cpu s':>8} {'tree RSS':>10} "
              f"{'max proc':>10} {'procs':>5} {'rows/s':>12} {'speed-up':>8}")
    print(header)
    local_wall: dict[tuple, dict] = {}
    for kind in kinds:
        for scale in scales:
            study = ensure_data(args.data, kind, scale, python, env)
            for executor in executors:
                row = {"kind": kind, "scale": str(scale), "executor": executor, "steps": {}}
                results.append(row)
                name = executor.split(":")[0]
                with_flag = all(flag.values())
                if not with_flag and name != "local":
                    row["status"] = "not run: the installed unitize has no --executor flag"
                    print(f"{kind:6} {str(scale):>5} {executor:12} {row['status']}", flush=True)
                    continue
                row["status"] = "ok" if with_flag else "ran without --executor (the installed unitize does not know it)"
                extra = ["--executor", executor] if with_flag else []
                out = args.data / "out" / f"{kind}-{float(scale):g}-{executor.replace(':', '_')}"
                shutil.rmtree(out, ignore_errors=True)
                logs = args.data / "logs" / out.name
                steps = {
                    "convert": [python, "-m", "unitize", "convert", str(study), "--out", str(out), "--json", "-q", *extra],
                    "agree": [python, "-m", "unitize", "agree", str(out), "-q", *extra, *args.agree_args.split()],
                }
                for step, cmd in steps.items():
                    r = measure(cmd, env=env, cwd=study.parent, log=logs / step, sample=args.sample, timeout=args.timeout)
                    if r["exit_code"] not in (0, 1):
                        row["status"] = f"{step} failed (exit {r['exit_code']})"
                        print(f"{kind:6} {str(scale):>5} {executor:12} {step:8} FAILED (exit {r['exit_code']}):\n{r['stderr']}", flush=True)
                        break
                    r.pop("stdout")
                    row["steps"][step] = r
                else:
                    unit_rows, records = rows_written(out)
                    total_wall = sum(s["wall_s"] for s in row["steps"].values())
                    row.update(
                        unit_rows=unit_rows,
                        input_records=records,
                        wall_s=round(total_wall, 3),
                        cpu_s=round(sum(s["cpu_s"] for s in row["steps"].values()), 3),
                        peak_rss_tree_bytes=max(s["peak_rss_tree_bytes"] for s in row["steps"].values()),
                        rows_per_s=round(unit_rows / row["steps"]["convert"]["wall_s"]) if unit_rows else None,
                        records_per_s=round(records / total_wall) if records else None,
                    )
                    if name == "local":
                        local_wall[(kind, scale)] = {**{s: v["wall_s"] for s, v in row["steps"].items()}, "total": total_wall}
                    base = local_wall.get((kind, scale))
                    if base:
                        row["speedup_over_local"] = {
                            s: round(base[s] / (row["steps"][s]["wall_s"] if s != "total" else total_wall), 3) for s in base
                        }
                    for step, s in [*row["steps"].items(), ("total", {"wall_s": total_wall, "cpu_s": row["cpu_s"],
                                                                      "peak_rss_tree_bytes": row["peak_rss_tree_bytes"]})]:
                        rate = row["rows_per_s"] if step == "convert" else row["records_per_s"] if step == "total" else None
                        sp = (row.get("speedup_over_local") or {}).get(step)
                        print(f"{kind:6} {str(scale):>5} {executor:12} {step:8} {s['wall_s']:8.2f} {s['cpu_s']:8.2f} "
                              f"{gib(s['peak_rss_tree_bytes']):>10} {gib(s.get('peak_rss_process_bytes')):>10} "
                              f"{s.get('processes', '-'):>5} {('-' if rate is None else f'{rate:,}'):>12} "
                              f"{('-' if sp is None else f'{sp:.2f}x'):>8}", flush=True)
                if not args.keep_outputs:
                    shutil.rmtree(out, ignore_errors=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps({
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                 "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "python": python,
        "executor_flag": flag,
        "agree_args": args.agree_args,
        "sizes": {"labels": {"items": make_crowd.ITEMS, "pool": make_crowd.POOL, "per_item": make_crowd.PER_ITEM},
                  "spans": {"texts": make_crowd.TEXTS, "pool": make_crowd.SPAN_POOL,
                            "annotators_per_text": make_crowd.SPAN_ANNOTATORS}},
        "results": results,
    }, indent=2) + "\n")
    print(f"results: {args.results}")
    return 0 if all(r["status"] in ("ok",) or r["status"].startswith(("ran without", "not run")) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
