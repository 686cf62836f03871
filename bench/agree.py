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
    python bench/agree.py --settings word-interval --metrics alpha,fleiss,cohen   # one setting
    python bench/agree.py --out OUT --metrics alpha,fleiss                        # an existing output (ToxicSpans)
    python bench/agree.py --small --metrics 'u-alpha,default+u-alpha+span-f1'    # M+N: timed in one run

The floor (row ``floor``) is this script's ``--floor OUT`` in a fresh process
(``--floor-of WIDE``: on another output directory): read every part file of every
unit matrix with pyarrow, row group by row group (layer and annotator columns; the
group from the row group's statistics when it holds one group), and compute nominal
alpha per (setting, group, layer) from per-unit value counts with NumPy ``bincount``,
added up over row groups — what any implementation must at least do. A sparse
matrix's implicit units (every annotator 0) are counted from ``universe.parquet``
and ``documents.parquet``, not built. Each metric's ``x floor`` column is its wall
time over the floor's; ``in-proc s`` and its ``x floor`` leave out the interpreter's
start-up and imports (agree runs in this script, ``--timed-agree``, timed around
the CLI call; the floor timed after its imports).

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


def _alpha(n_v, observed):
    """Nominal alpha from per-cell value totals (cells × V) and observed agreement (cells)."""
    import numpy as np

    n = n_v.sum(axis=1)
    with np.errstate(all="ignore"):
        return 1 - (n - 1) * (n - observed) / (n**2 - (n_v**2).sum(axis=1))


class _Cells:
    """Per (group, layer) cell, what nominal alpha needs, added up over row groups: the observed
    coincidences of equal values and each value's pairable total."""

    def __init__(self):
        self.observed: dict = {}
        self.totals: dict = {}

    def add(self, key, cols, names):
        """Rows of int16 code columns (null = -1) whose cell is ``names[key]``: per unit the count of each
        value, per cell the coincidences with bincount."""
        import numpy as np

        n = len(names)
        m = np.zeros(key.size, np.int8)
        for c in cols:
            m += c >= 0
        pair = m >= 2
        w = np.where(pair, 1.0 / np.maximum(m - 1, 1), 0.0)
        top = max((int(c.max()) for c in cols if c.size), default=-1)
        for v in range(top + 1):
            n_v = np.zeros(key.size, np.int8)
            for c in cols:
                n_v += c == v
            observed = np.bincount(key, weights=n_v * (n_v - 1) * w, minlength=n)
            total = np.bincount(key, weights=n_v * pair, minlength=n)
            for i, name in enumerate(names):
                self.observed[name] = self.observed.get(name, 0.0) + observed[i]
                self.totals.setdefault(name, {})
                self.totals[name][v] = self.totals[name].get(v, 0.0) + total[i]

    def implicit(self, name, units, annotators):
        """``units`` more units of a cell on which every one of ``annotators`` gave 0."""
        if annotators >= 2 and units:
            self.observed[name] = self.observed.get(name, 0.0) + units * annotators
            self.totals.setdefault(name, {})
            self.totals[name][0] = self.totals[name].get(0, 0.0) + units * annotators

    def finite(self):
        """How many cells have a finite alpha."""
        import numpy as np

        count = 0
        for name, totals in self.totals.items():
            n_v = np.array([list(totals.values())], dtype=np.float64)
            count += int(np.isfinite(_alpha(n_v, np.array([self.observed[name]]))).sum())
        return count


def _row_group_cells(pf, i, columns):
    """A row group's columns, and per row its (group, layer) cell: from the group statistics when the
    row group holds one group (no group column read), else from the group column too."""
    import numpy as np

    meta = pf.metadata.row_group(i)
    stats = meta.column(pf.schema_arrow.get_field_index("group")).statistics
    single = stats is not None and stats.has_min_max and stats.min == stats.max
    table = pf.read_row_group(i, columns=columns + ([] if single else ["group"]))
    layer = table.column("layer").combine_chunks()
    lcode = layer.indices.to_numpy().astype(np.int64)
    if single:
        return table, lcode, [(stats.min, x) for x in layer.dictionary.to_pylist()]
    group = table.column("group").combine_chunks()
    gcode = group.indices.to_numpy().astype(np.int64)
    n_l = len(layer.dictionary)
    names = [(g, x) for g in group.dictionary.to_pylist() for x in layer.dictionary.to_pylist()]
    return table, gcode * n_l + lcode, names


def _codes(table, names):
    import pyarrow as pa
    import pyarrow.compute as pc

    return [pc.fill_null(pc.cast(table.column(a), pa.int16()), -1).combine_chunks().to_numpy() for a in names]


def _floor_wide(files, names):
    """Every row group once: (group, layer) cells, annotator columns as int16 (null = -1), nominal
    alpha per cell from per-unit value counts."""
    cells = _Cells()
    for pf in files:
        for i in range(pf.metadata.num_row_groups):
            table, key, cell_names = _row_group_cells(pf, i, ["layer", *names])
            cells.add(key, _codes(table, names), cell_names)
    return cells.finite()


def _floor_sparse(files, names, meta, out):
    """A sparse setting's stored rows, every row group once; per (group, layer) the implicit units
    (every annotator 0) counted from universe.parquet and documents.parquet, not built."""
    import numpy as np
    import pyarrow.parquet as pq

    docs = pq.ParquetFile(out / "documents.parquet").read(columns=["doc_id", "chars", "tokens"])
    size = dict(zip(docs.column("doc_id").to_pylist(), docs.column("tokens" if meta.get("unit") == "word" else "chars").to_pylist()))
    universe = pq.ParquetFile(out / "universe.parquet").read(columns=["group", "doc_id"])
    units: dict = {}
    for g, d in zip(universe.column("group").to_pylist(), universe.column("doc_id").to_pylist()):
        units[g] = units.get(g, 0) + (size.get(d) or 0)
    cells = _Cells()
    stored: dict = {}
    for pf in files:
        for i in range(pf.metadata.num_row_groups):
            table, key, cell_names = _row_group_cells(pf, i, ["layer", *names])
            cells.add(key, _codes(table, names), cell_names)
            for name, n in zip(cell_names, np.bincount(key, minlength=len(cell_names)).tolist()):
                stored[name] = stored.get(name, 0) + n
    for g, n in units.items():
        for layer in meta.get("layers") or []:
            cells.implicit((g, layer), n - stored.get((g, layer), 0), len(names))
    return cells.finite()


def _floor_long(pf):
    """One long table (crowd): units = documents' unit indices laid end to end; per unit the
    count of each value with one bincount; nominal alpha over all units (one layer)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pf.read(columns=["doc_id", "unit", "value"])
    doc = table.column("doc_id").unify_dictionaries().combine_chunks().indices.to_numpy()
    unit = table.column("unit").combine_chunks().to_numpy()
    value = table.column("value").combine_chunks()
    if pa.types.is_dictionary(value.type):
        code = pc.fill_null(value.indices, -1).to_numpy()
    else:
        code = pc.fill_null(pc.cast(value, pa.int32()), -1).to_numpy()
    runs = np.flatnonzero(np.diff(doc, prepend=-1))
    longest = np.zeros(int(doc.max()) + 1, np.int64)
    np.maximum.at(longest, doc[runs], np.maximum.reduceat(unit, runs))
    offset = np.concatenate(([0], np.cumsum(longest + 1)))
    ids = offset[doc] + unit
    ok = code >= 0
    v = int(code.max()) + 1
    counts = np.bincount(ids[ok] * v + code[ok], minlength=int(offset[-1]) * v).reshape(-1, v)
    m = counts.sum(axis=1)
    pair = m >= 2
    w = np.where(pair, 1.0 / np.maximum(m - 1, 1), 0.0)
    observed = ((counts * (counts - 1)).sum(axis=1) * w).sum()
    n_v = (counts * pair[:, None]).sum(axis=0)
    return int(np.isfinite(_alpha(n_v[None, :].astype(float), np.array([observed]))).sum())


def floor(out: Path, settings: list[str] | None = None) -> int:
    """Nominal alpha per (setting, group, layer) from the Parquet columns: the reading floor. Prints the
    cells with a value and the seconds it took after its imports (the in-process time)."""
    import json as _json
    import time

    import numpy  # noqa: F401 (imported before the clock starts, as agree's in-process time leaves its imports out)
    import pyarrow.compute  # noqa: F401
    import pyarrow.parquet as pq

    started = time.perf_counter()
    cells = 0
    # format 3: units|labels|long/setting=<name>/part-<NNNNN>.parquet; format 2: all in units/; format 1: units/<name>/part-0.parquet
    paths = [p for folder in ("units", "labels", "long") for p in sorted((out / folder).glob("setting=*/part-*.parquet"))] \
        or sorted((out / "units").glob("*/part-0.parquet"))
    by_setting: dict = {}
    for path in paths:
        by_setting.setdefault(path.parent.name.removeprefix("setting="), []).append(path)
    for name, parts in by_setting.items():
        if settings and name not in settings:
            continue
        files = [pq.ParquetFile(p) for p in parts]
        meta = _json.loads(files[0].schema_arrow.metadata[b"unitize"])
        if meta.get("kind", "units") != "units":
            continue
        if meta.get("layout") == "sparse":
            cells += _floor_sparse(files, meta["annotators"], meta, out)
        elif meta.get("layout") == "long":
            cells += sum(_floor_long(pf) for pf in files)
        else:
            cells += _floor_wide(files, meta["annotators"])
    print(cells)
    print(json.dumps({"in_process_s": time.perf_counter() - started}))
    return 0


def timed_agree(argv: list[str]) -> int:
    """``unitize agree ARGV`` in this process, timed after its imports: prints {"in_process_s": ...}."""
    import time

    import unitize.agree  # noqa: F401 (the imports are start-up, not the in-process time)
    from unitize.cli import main as cli

    started = time.perf_counter()
    code = cli(["agree", *argv])
    print(json.dumps({"in_process_s": time.perf_counter() - started}))
    return code


def _in_process(stdout: str) -> float | None:
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{") and "in_process_s" in line:
            return json.loads(line)["in_process_s"]
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="use (and generate) the small preset")
    ap.add_argument("--corpus", type=Path, help="corpus directory with study.toml")
    ap.add_argument("--out", type=Path, help="an existing output directory to measure (e.g. ToxicSpans); no corpus, no convert")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs unitize")
    ap.add_argument("--metrics", default=",".join(DEFAULT),
                    help="metrics to time one by one; M+N times them in one run ('default' = the default metrics)")
    ap.add_argument("--units", default="word", help="units to convert (word, char or word,char)")
    ap.add_argument("--reconvert", action="store_true", help="convert again even if the output exists")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--floor", type=Path, metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--timed-agree", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    ap.add_argument("--floor-of", type=Path, metavar="WIDE",
                    help="measure the floor on this (wide) output directory, e.g. when --out is a sparse one")
    ap.add_argument("--args", default="", help="extra arguments for every agree run (e.g. '--bootstrap 1000')")
    ap.add_argument("--settings", help="only these settings (units/<name>), for the floor and every agree run")
    args = ap.parse_args(argv)
    if args.timed_agree is not None:
        return timed_agree(args.timed_agree)
    if args.floor:
        return floor(args.floor, args.settings.split(",") if args.settings else None)

    corpus = None
    if args.out:
        out = args.out.resolve()
    else:
        corpus = (args.corpus or DATA_DIR / ("tdb-small" if args.small else "tdb-full")).resolve()
        ensure_corpus(corpus, args.small, args.seed)
        out = DATA_DIR / f"agree-{corpus.name}-{args.units.replace(',', '+')}"
    # as an installed package runs: its modules' bytecode cached (pip compiles it; numpy's and pyarrow's, which the floor
    # imports, are), not compiled from source in every child
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(REPO_DIR)}
    logs = Path(tempfile.mkdtemp(prefix="unitize-agree-bench-"))
    runs = []
    try:
        if corpus is not None and (args.reconvert or not (out / "manifest.json").is_file()):
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
        only = ["--settings", args.settings] if args.settings else []
        cmd = [args.python, str(Path(__file__).resolve()), "--floor", str((args.floor_of or out).resolve()), *only]
        r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name="floor", timeout=None)
        if r["exit_code"] != 0:
            print(f"floor: failed\n{tail(r['stderr'])}", file=sys.stderr)
            return 1
        runs.append({"metric": "floor", "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_bytes": r["peak_rss_bytes"], "result_rows": None,
                     "in_process_s": _in_process(r["stdout"])})
        for name in metrics + ["all-default"]:
            chosen = ",".join(x for m in name.split("+") for x in (DEFAULT if m in ("all-default", "default") else [m]))
            dest = logs / f"dest-{name}"
            cmd = [args.python, str(Path(__file__).resolve()), "--timed-agree", str(out), "--metric", chosen, "--dest", str(dest), "-q", *only,
                   *args.args.split()]
            r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name=name, timeout=None)
            if r["exit_code"] != 0:
                print(f"{name}: failed\n{tail(r['stderr'])}", file=sys.stderr)
                return 1
            import pyarrow.parquet as pq

            n = pq.read_metadata(dest / "results.parquet").num_rows
            runs.append({"metric": name, "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_bytes": r["peak_rss_bytes"], "result_rows": n,
                         "in_process_s": _in_process(r["stdout"])})
        base, inner = runs[0]["wall_s"], runs[0]["in_process_s"]
        print(f"\n{'metric':<14} {'wall s':>8} {'x floor':>8} {'in-proc s':>9} {'x floor':>8} {'cpu s':>8} {'peak RSS':>10} {'rows':>7}")
        for x in runs:
            x["x_floor"] = x["wall_s"] / base if base else None
            x["x_floor_in_process"] = x["in_process_s"] / inner if inner and x["in_process_s"] is not None else None
            ratio = f"{x['x_floor_in_process']:.2f}" if x["x_floor_in_process"] is not None else "-"
            print(f"{x['metric']:<14} {fmt(x['wall_s']):>8} {x['x_floor']:>8.2f} {fmt(x['in_process_s'] or 0):>9} {ratio:>8} "
                  f"{fmt(x['cpu_s']):>8} {human_bytes(x['peak_rss_bytes']):>10} {x['result_rows'] if x['result_rows'] is not None else '-':>7}")
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        report = {"corpus": str(corpus) if corpus else None, "out": str(out), "settings": args.settings, "args": args.args, "unit_rows": rows, "segments": manifest["summary"]["segments"], "runs": runs}
        (RESULTS_DIR / "agree-latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
