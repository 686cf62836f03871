#!/usr/bin/env python3
"""Benchmark `unitize convert` on a synthetic DATT corpus the size of the full TDB.

There are five runs, each in a fresh subprocess: the four settings
char-interval, char-boundary, word-interval and word-boundary on their own,
and then all four in one run. For each run the script reports:

* wall time;
* child CPU time and peak RSS, both from ``os.wait4``;
* rows written, summed from the unit-matrix entries of ``manifest.json``
  ``outputs``;
* rows per second;
* output size on disk;
* the Parquet write floor: the time pyarrow alone needs to write the same
  rows, each unit-matrix file re-read and re-written row group by row group
  with the package's writer options (see ``_floor.py``);
* the ratio of wall time to floor time.

Results go to a table on stdout and to ``bench/results/latest.json``.

Usage::

    python bench/run.py                  # full-scale corpus in bench/.data/tdb-full (generated if missing)
    python bench/run.py --small          # small preset in bench/.data/tdb-small
    python bench/run.py --corpus DIR --python /path/to/venv/bin/python

Only the standard library is needed here. pyarrow is needed by ``--python``,
the interpreter that runs the CLI and the floor helper.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR))
import make_corpus  # noqa: E402  (sibling module)

SETTINGS = [("char", "interval"), ("char", "boundary"), ("word", "interval"), ("word", "boundary")]
ALL_RUN = "all"


# ---------------------------------------------------------------- helpers

def human_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def fmt(x, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def maxrss_bytes(ru_maxrss: int) -> int:
    # Linux reports KiB, macOS reports bytes
    return ru_maxrss if sys.platform == "darwin" else ru_maxrss * 1024


def dir_size(path: Path) -> tuple[int, int, int]:
    """(files, apparent bytes, allocated bytes) under path."""
    n = size = alloc = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            st = os.stat(os.path.join(root, f))
            n += 1
            size += st.st_size
            alloc += getattr(st, "st_blocks", 0) * 512
    return n, size, alloc


def tail(text: str, lines: int = 60) -> str:
    parts = text.rstrip().splitlines()
    if len(parts) > lines:
        parts = [f"... ({len(parts) - lines} earlier lines cut)"] + parts[-lines:]
    return "\n".join(parts)


def run_child(cmd: list[str], *, env: dict, cwd: Path, log_dir: Path, name: str,
              timeout: float | None) -> dict:
    """Run cmd, return wall time, exit code, rusage, stdout and stderr.

    stdout and stderr go to files, so no pipe can fill up while os.wait4 blocks.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / f"{name}.stdout", log_dir / f"{name}.stderr"
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                env=env, cwd=str(cwd))
        timer = None
        timed_out = threading.Event()
        if timeout:
            def _kill():
                timed_out.set()
                proc.kill()
            timer = threading.Timer(timeout, _kill)
            timer.start()
        try:
            _pid, status, ru = os.wait4(proc.pid, 0)
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # already reaped: keep Popen from waiting again
    return dict(
        cmd=cmd, wall_s=wall, exit_code=code, timed_out=timed_out.is_set(),
        user_s=ru.ru_utime, sys_s=ru.ru_stime, cpu_s=ru.ru_utime + ru.ru_stime,
        peak_rss_bytes=maxrss_bytes(ru.ru_maxrss),
        stdout=out_path.read_text(encoding="utf-8", errors="replace"),
        stderr=err_path.read_text(encoding="utf-8", errors="replace"),
        stdout_file=str(out_path), stderr_file=str(err_path))


def parse_json_stdout(text: str):
    """The single JSON object the CLI prints with --json (or the last JSON line)."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def is_unit_path(rel: str) -> bool:
    parts = Path(rel).parts
    return bool({"units", "labels", "long"} & set(parts)) and rel.endswith(".parquet")


def read_manifest(out_dir: Path) -> tuple[dict | None, list[dict], str | None]:
    """(manifest, unit-matrix outputs with absolute 'abspath', problem)."""
    mpath = out_dir / "manifest.json"
    if not mpath.is_file():
        return None, [], f"no manifest.json in {out_dir}"
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except ValueError as exc:
        return None, [], f"manifest.json is not valid JSON: {exc}"
    outputs = manifest.get("outputs") if isinstance(manifest, dict) else None
    if not isinstance(outputs, list):
        return manifest, [], "manifest.json has no 'outputs' list"
    units = []
    for o in outputs:
        if not isinstance(o, dict) or "path" not in o:
            continue
        p = Path(o["path"])
        abspath = p if p.is_absolute() else out_dir / p
        try:
            rel = abspath.resolve().relative_to(out_dir.resolve()).as_posix()
        except ValueError:
            rel = str(o["path"])
        if is_unit_path(rel):
            units.append(dict(o, abspath=str(abspath), relpath=rel))
    return manifest, units, None


def python_env(python: str) -> tuple[dict, dict]:
    """Environment in which `python -m unitize` imports; and info about it.

    If the interpreter cannot import unitize, the repository's src/ (or the
    repository root) is put on PYTHONPATH.
    """
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    probe = [python, "-c",
             "import json, sys, unitize; print(json.dumps({'file': unitize.__file__, "
             "'version': getattr(unitize, '__version__', None), 'python': sys.version.split()[0]}))"]
    candidates = [None]
    if (REPO_DIR / "src" / "unitize").is_dir():
        candidates.append(str(REPO_DIR / "src"))
    if (REPO_DIR / "unitize").is_dir():
        candidates.append(str(REPO_DIR))
    last_err = ""
    for extra in candidates:
        e = dict(env)
        if extra:
            e["PYTHONPATH"] = extra + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        r = subprocess.run(probe, env=e, capture_output=True, text=True, cwd=str(DATA_DIR))
        if r.returncode == 0:
            info = json.loads(r.stdout.strip().splitlines()[-1])
            info["pythonpath_added"] = extra
            return e, info
        last_err = r.stderr
    raise SystemExit(
        f"error: `{python}` cannot import unitize (tried as installed"
        + (", and with PYTHONPATH=" + ", ".join(c for c in candidates if c) if len(candidates) > 1 else "")
        + ").\nIts stderr:\n" + tail(last_err) +
        "\nInstall the package into that interpreter (pip install -e .) or pass --python.")


def ensure_corpus(corpus: Path, small: bool, seed: int) -> dict:
    if not (corpus / "study.toml").is_file() or not (corpus / "annotations").is_dir():
        if (corpus / "annotations").is_dir() and any((corpus / "annotations").iterdir()):
            raise SystemExit(f"error: {corpus} has annotations/ but no study.toml")
        preset = make_corpus.SMALL if small else make_corpus.FULL
        print(f"generating corpus in {corpus} ({'small' if small else 'full'} preset: "
              + ", ".join(f"{k}={v}" for k, v in preset.items()) + f", seed={seed}) ...", flush=True)
        s = make_corpus.generate(corpus, seed=seed, **preset)
        print(f"  {s['xml_files']} files, {s['relations']} relations, {s['spans']} spans, "
              f"{s['bytes'] / 1e6:.1f} MB in {s['seconds']:.1f} s", flush=True)
    info_path = corpus / "corpus.json"
    info = {}
    if info_path.is_file():
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
        except ValueError:
            pass
    n_xml = sum(1 for _ in (corpus / "annotations").glob("*.xml"))
    n_txt = sum(1 for _ in (corpus / "texts").glob("*.txt")) if (corpus / "texts").is_dir() else 0
    info.update(path=str(corpus), xml_files_found=n_xml, texts_found=n_txt)
    return info


def warm_cache(corpus: Path) -> float:
    """Read every corpus file once so that no run pays for a cold page cache."""
    t0 = time.perf_counter()
    for sub in ("texts", "annotations"):
        d = corpus / sub
        if d.is_dir():
            for entry in os.scandir(d):
                with open(entry.path, "rb") as fh:
                    fh.read()
    return time.perf_counter() - t0


def git_head() -> str | None:
    """Commit of the working tree, read from .git (no git command is run)."""
    try:
        head = (REPO_DIR / ".git" / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            p = REPO_DIR / ".git" / ref
            if p.is_file():
                return p.read_text().strip()
            packed = REPO_DIR / ".git" / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0]
            return None
        return head
    except OSError:
        return None


def floor_for(python: str, env: dict, files: list[str], repeat: int, tmpdir: Path) -> dict:
    req = json.dumps(dict(files=files, repeat=repeat, tmpdir=str(tmpdir)))
    r = subprocess.run([python, str(BENCH_DIR / "_floor.py")], input=req, env=env,
                       capture_output=True, text=True, cwd=str(DATA_DIR))
    if r.returncode != 0:
        return dict(error=f"floor helper failed (exit {r.returncode}):\n{tail(r.stderr)}")
    try:
        return json.loads(r.stdout)
    except ValueError:
        return dict(error=f"floor helper printed no JSON:\n{tail(r.stdout)}\n{tail(r.stderr)}")


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=None,
                    help="corpus directory holding study.toml; generated if missing "
                         f"(default {DATA_DIR / 'tdb-full'}, or {DATA_DIR / 'tdb-small'} with --small)")
    ap.add_argument("--small", action="store_true", help="use (and generate) the small preset")
    ap.add_argument("--seed", type=int, default=0, help="seed used if the corpus must be generated")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs `-m unitize`")
    ap.add_argument("--runs", default="char-interval,char-boundary,word-interval,word-boundary,all",
                    help="comma-separated subset of runs to do")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each setting N times and keep the fastest")
    ap.add_argument("--floor-repeat", type=int, default=3, help="best of N for each floor write")
    ap.add_argument("--no-floor", action="store_true", help="skip the Parquet write floor")
    ap.add_argument("--timeout", type=float, default=None, help="kill a run after this many seconds")
    ap.add_argument("--runs-dir", type=Path, default=None,
                    help="where run outputs go; each run's subdirectory is deleted first "
                         "(default bench/.data/runs/<corpus name>)")
    ap.add_argument("--results", type=Path, default=RESULTS_DIR / "latest.json", help="JSON results file")
    ap.add_argument("--no-warm", action="store_true", help="do not pre-read the corpus into the page cache")
    ap.add_argument("--keep-going", action="store_true",
                    help="do the remaining runs after one fails (default: stop at the first failure)")
    ap.add_argument("--extra-arg", action="append", default=[],
                    help="extra argument passed to every `unitize convert` (repeatable)")
    args = ap.parse_args(argv)

    corpus = (args.corpus or (DATA_DIR / ("tdb-small" if args.small else "tdb-full"))).resolve()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    runs_dir = (args.runs_dir or (DATA_DIR / "runs" / corpus.name)).resolve()
    wanted = [r.strip() for r in args.runs.split(",") if r.strip()]
    known = [f"{u}-{a}" for u, a in SETTINGS] + [ALL_RUN]
    bad = [r for r in wanted if r not in known]
    if bad:
        ap.error(f"unknown run(s) {bad}; choose from {known}")

    corpus_info = ensure_corpus(corpus, args.small, args.seed)
    config = corpus / "study.toml"
    env, unitize_info = python_env(args.python)
    print(f"corpus : {corpus} ({corpus_info.get('xml_files_found')} XML files, "
          f"{corpus_info.get('texts_found')} texts"
          + (f", {corpus_info['spans']} spans" if "spans" in corpus_info else "") + ")")
    print(f"python : {args.python} (Python {unitize_info['python']})")
    print(f"unitize: {unitize_info['file'] or '(namespace package: no __init__.py)'} "
          f"version {unitize_info['version']}"
          + (f" (PYTHONPATH += {unitize_info['pythonpath_added']})" if unitize_info["pythonpath_added"] else ""))
    if not args.no_warm:
        print(f"warmed page cache in {warm_cache(corpus):.2f} s")

    # CLI start-up cost, for context (imports only, no work)
    startup = run_child([args.python, "-m", "unitize", "--help"], env=env, cwd=corpus,
                        log_dir=runs_dir / "_logs", name="startup", timeout=120)
    startup_s = startup["wall_s"] if startup["exit_code"] == 0 else None
    print(f"startup: `python -m unitize --help` {fmt(startup_s)} s"
          + ("" if startup_s is not None else f" (failed, exit {startup['exit_code']})"))

    plan = []
    for name in wanted:
        if name == ALL_RUN:
            units, approaches = "char,word", "interval,boundary"
        else:
            units, approaches = name.split("-")
        plan.append((name, units, approaches))

    results = []
    failed = False
    tmpdir = DATA_DIR / "tmp"
    options_note_printed = False
    for name, units, approaches in plan:
        out_dir = runs_dir / name
        cmd = [args.python, "-m", "unitize", "convert", str(config), "--out", str(out_dir),
               "--units", units, "--approaches", approaches, "--json", "--quiet", *args.extra_arg]
        tries = []
        for i in range(max(1, args.repeat)):
            if out_dir.exists():
                shutil.rmtree(out_dir)
            print(f"\n[{name}] run {i + 1}/{args.repeat}: {shlex.join(cmd)}", flush=True)
            r = run_child(cmd, env=env, cwd=corpus, log_dir=runs_dir / "_logs",
                          name=f"{name}.{i + 1}", timeout=args.timeout)
            tries.append(r)
            if r["exit_code"] != 0:
                why = "timed out" if r["timed_out"] else f"exit code {r['exit_code']}"
                print(f"[{name}] FAILED ({why}) after {r['wall_s']:.2f} s. stderr:")
                print(tail(r["stderr"]) or "(empty)")
                if r["stdout"].strip():
                    print("stdout:\n" + tail(r["stdout"], 20))
                break
            print(f"[{name}] {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU, "
                  f"peak RSS {human_bytes(r['peak_rss_bytes'])}", flush=True)
        ok = [t for t in tries if t["exit_code"] == 0]
        res = dict(name=name, units=units.split(","), approaches=approaches.split(","),
                   cmd=cmd, out_dir=str(out_dir), ok=len(ok) == len(tries),
                   walls_s=[t["wall_s"] for t in tries])
        if not res["ok"]:
            failed = True
            bad_try = tries[-1]
            res.update(exit_code=bad_try["exit_code"], timed_out=bad_try["timed_out"],
                       stderr_tail=tail(bad_try["stderr"]), stderr_file=bad_try["stderr_file"])
            results.append(res)
            if not args.keep_going:
                skipped = [n for n, _u, _a in plan[len(results):]]
                if skipped:
                    print(f"stopping after the first failure; skipped {', '.join(skipped)} "
                          "(pass --keep-going to run them anyway)")
                break
            continue
        best = min(ok, key=lambda t: t["wall_s"])
        res.update(wall_s=best["wall_s"], cpu_s=best["cpu_s"], user_s=best["user_s"],
                   sys_s=best["sys_s"], peak_rss_bytes=max(t["peak_rss_bytes"] for t in ok))
        res["cli_json"] = parse_json_stdout(best["stdout"])
        if res["cli_json"] is None:
            print(f"[{name}] warning: --json output was not a JSON object; stdout starts: "
                  f"{best['stdout'][:200]!r}")

        n_files, size, alloc = dir_size(out_dir)
        res.update(out_files=n_files, out_bytes=size, out_alloc_bytes=alloc)
        manifest, unit_outputs, problem = read_manifest(out_dir)
        if problem:
            print(f"[{name}] warning: {problem}")
        res["manifest_problem"] = problem
        res["manifest_outputs"] = len(manifest.get("outputs", [])) if isinstance(manifest, dict) else None
        unit_files = sorted({o["abspath"] for o in unit_outputs})
        on_disk = sorted(str(p) for folder in ("units", "labels", "long") for p in (out_dir / folder).glob("*/*.parquet"))
        if not unit_files and on_disk:
            print(f"[{name}] warning: no unit matrices listed in manifest outputs; "
                  f"using the {len(on_disk)} files under {out_dir / 'units'}")
            unit_files = on_disk
        elif set(on_disk) - set(unit_files):
            print(f"[{name}] warning: {len(set(on_disk) - set(unit_files))} Parquet files under units/ "
                  "are not in the manifest")
        missing_rows = [o for o in unit_outputs if not isinstance(o.get("rows"), int)]
        res["unit_files"] = len(unit_files)
        res["rows"] = sum(o["rows"] for o in unit_outputs if isinstance(o.get("rows"), int)) \
            if unit_outputs and not missing_rows else None
        res["unit_bytes"] = sum(os.path.getsize(p) for p in unit_files if os.path.exists(p))
        per_dir: dict[str, int] = {}
        for o in unit_outputs:
            key = Path(o["relpath"]).parts[1] if len(Path(o["relpath"]).parts) > 2 else "?"
            per_dir[key] = per_dir.get(key, 0) + (o.get("rows") or 0)
        res["rows_by_matrix"] = per_dir

        if not args.no_floor and unit_files:
            print(f"[{name}] floor: rewriting {len(unit_files)} Parquet files "
                  f"(best of {args.floor_repeat}) ...", flush=True)
            fl = floor_for(args.python, env, unit_files, args.floor_repeat, tmpdir)
            if "error" in fl:
                print(f"[{name}] {fl['error']}")
                res["floor"] = fl
            else:
                if fl.get("options_fallback") and not options_note_printed:
                    print("NOTE: `from unitize.output import PARQUET_WRITE_OPTIONS` failed "
                          f"({fl['options_fallback']}); the floor uses pyarrow defaults")
                    options_note_printed = True
                files = fl["files"]
                rows_pq = sum(f["rows"] for f in files)
                floor_wt = sum(f["write_table_s"] for f in files)
                floor_rg = sum(f["row_groups_s"] for f in files)
                res["floor"] = dict(
                    pyarrow=fl["pyarrow"], options=fl["options"], options_fallback=fl["options_fallback"],
                    repeat=fl["repeat"], rows=rows_pq, row_groups=sum(f["row_groups"] for f in files),
                    read_s=sum(f.get("read_s", 0.0) for f in files),
                    write_table_s=floor_wt, row_groups_s=floor_rg,
                    write_table_bytes=sum(f["write_table_bytes"] for f in files),
                    row_groups_bytes=sum(f["row_groups_bytes"] for f in files),
                    files=files)
                res["ratio_write_table"] = res["wall_s"] / floor_wt if floor_wt > 0 else None
                res["ratio_row_groups"] = res["wall_s"] / floor_rg if floor_rg > 0 else None
                if res["rows"] is None:
                    res["rows"] = rows_pq
                    res["rows_source"] = "parquet metadata (manifest rows missing)"
                elif res["rows"] != rows_pq:
                    print(f"[{name}] warning: manifest rows {res['rows']} != Parquet metadata rows {rows_pq}")
                    res["rows_parquet_metadata"] = rows_pq
        res["rows_per_s"] = res["rows"] / res["wall_s"] if res.get("rows") else None
        results.append(res)

    # ------------------------------------------------------------ report
    header = ["run", "wall s", "cpu s", "peak RSS", "rows", "rows/s", "files", "out size",
              "floor s", "floor-rg s", "wall/floor", "wall/floor-rg"]
    rows = []
    for r in results:
        if not r["ok"]:
            rows.append([r["name"], "FAILED"] + [""] * (len(header) - 2))
            continue
        fl = r.get("floor") or {}
        rows.append([
            r["name"], fmt(r["wall_s"]), fmt(r["cpu_s"]), human_bytes(r["peak_rss_bytes"]),
            fmt(r["rows"], ",d") if r.get("rows") is not None else "-",
            fmt(r["rows_per_s"], ",.0f"), str(r["unit_files"]), human_bytes(r["out_bytes"]),
            fmt(fl.get("write_table_s"), ".3f"), fmt(fl.get("row_groups_s"), ".3f"),
            fmt(r.get("ratio_write_table"), ".1f"), fmt(r.get("ratio_row_groups"), ".1f")])
    singles = [r for r in results if r["ok"] and r["name"] != ALL_RUN]
    if len(singles) == len(SETTINGS):
        rows.append(["sum of 4", fmt(sum(r["wall_s"] for r in singles)),
                     fmt(sum(r["cpu_s"] for r in singles)), "",
                     fmt(sum(r.get("rows") or 0 for r in singles), ",d"), "", "",
                     human_bytes(sum(r["out_bytes"] for r in singles)), "", "", "", ""])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = "  ".join("{:<%d}" % widths[0] if i == 0 else "{:>%d}" % w for i, w in enumerate(widths))
    print()
    print(f"unitize convert on {corpus.name}: {corpus_info.get('xml_files_found')} XML files, "
          f"{corpus_info.get('texts_found')} texts")
    print(line.format(*header))
    print(line.format(*["-" * w for w in widths]))
    for row in rows:
        print(line.format(*row))
    print("rows = unit-matrix rows (manifest `outputs` under units/); files = unit-matrix Parquet files; "
          "out size = everything in the run's output dir")
    print("floor = pyarrow alone re-writing the same rows, row group by row group, with the package's "
          "writer options (single-threaded; floor-rg is the same figure)")
    if options_note_printed:
        print("NOTE: PARQUET_WRITE_OPTIONS could not be imported; the floor used pyarrow defaults")

    doc = dict(
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        host=dict(platform=platform.platform(), machine=platform.machine(), cpus=os.cpu_count(),
                  bench_python=sys.version.split()[0]),
        python=args.python, unitize=unitize_info, git_head=git_head(),
        corpus=corpus_info, startup_s=startup_s, repeat=args.repeat, floor_repeat=args.floor_repeat,
        runs=results)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"results written to {args.results}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
