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
(``--floor-of WIDE``: on another output directory, the wide one of a sparse ``--out``):
read every wide unit matrix with pyarrow (group, layer and annotator columns)
and compute nominal alpha per (setting, group, layer) from per-unit value
counts with NumPy ``bincount`` — what any implementation must at least do.
Each metric's ``x floor`` column is its wall time over the floor's.

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


def _floor_wide(pf, names):
    """Row group by row group (one group each): layer indices and annotator columns as int16
    (null = −1); per unit the count of each value; per layer the coincidences with bincount."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = 0
    for i in range(pf.metadata.num_row_groups):
        table = pf.read_row_group(i, columns=["layer", *names])
        layer = table.column("layer").combine_chunks()
        lcode, n_layers = layer.indices.to_numpy(), len(layer.dictionary)
        cols = [pc.fill_null(pc.cast(table.column(a), pa.int16()), -1).combine_chunks().to_numpy() for a in names]
        values = np.flatnonzero(sum(np.bincount(c + 1, minlength=2) for c in cols)[1:])
        m = np.zeros(lcode.size, np.int8)
        for c in cols:
            m += c >= 0
        pair = m >= 2
        w = np.where(pair, 1.0 / np.maximum(m - 1, 1), 0.0)
        observed = np.zeros(n_layers)
        marg = []
        for v in values:
            n_v = np.zeros(lcode.size, np.int8)
            for c in cols:
                n_v += c == v
            observed += np.bincount(lcode, weights=n_v * (n_v - 1) * w, minlength=n_layers)
            marg.append(np.bincount(lcode, weights=n_v * pair, minlength=n_layers))
        cells += int(np.isfinite(_alpha(np.stack(marg, axis=1), observed)).sum())
    return cells


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
    """Nominal alpha per (setting, group, layer) from the Parquet columns: the reading floor."""
    import json as _json

    import pyarrow.parquet as pq

    cells = 0
    # format 2: units/setting=<name>/part-<NNNNN>.parquet (every part); format 1: units/<name>/part-0.parquet
    paths = sorted((out / "units").glob("setting=*/part-*.parquet")) or sorted((out / "units").glob("*/part-0.parquet"))
    for path in paths:
        if settings and path.parent.name.removeprefix("setting=") not in settings:
            continue
        pf = pq.ParquetFile(path)
        meta = _json.loads(pf.schema_arrow.metadata[b"unitize"])
        if meta.get("kind", "units") != "units" or meta.get("layout") == "sparse":
            continue  # the floor reads dense matrices: give it the wide output
        cells += _floor_long(pf) if meta.get("layout") == "long" else _floor_wide(pf, meta["annotators"])
    print(cells)
    return 0


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
    ap.add_argument("--floor-of", type=Path, metavar="WIDE",
                    help="measure the floor on this (wide) output directory, e.g. when --out is a sparse one")
    ap.add_argument("--args", default="", help="extra arguments for every agree run (e.g. '--bootstrap 1000')")
    ap.add_argument("--settings", help="only these settings (units/<name>), for the floor and every agree run")
    args = ap.parse_args(argv)
    if args.floor:
        return floor(args.floor, args.settings.split(",") if args.settings else None)

    corpus = None
    if args.out:
        out = args.out.resolve()
    else:
        corpus = (args.corpus or DATA_DIR / ("tdb-small" if args.small else "tdb-full")).resolve()
        ensure_corpus(corpus, args.small, args.seed)
        out = DATA_DIR / f"agree-{corpus.name}-{args.units.replace(',', '+')}"
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR)}
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
        runs.append({"metric": "floor", "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_bytes": r["peak_rss_bytes"], "result_rows": None})
        for name in metrics + ["all-default"]:
            chosen = ",".join(x for m in name.split("+") for x in (DEFAULT if m in ("all-default", "default") else [m]))
            dest = logs / f"dest-{name}"
            cmd = [args.python, "-m", "unitize", "agree", str(out), "--metric", chosen, "--dest", str(dest), "-q", *only, *args.args.split()]
            r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name=name, timeout=None)
            if r["exit_code"] != 0:
                print(f"{name}: failed\n{tail(r['stderr'])}", file=sys.stderr)
                return 1
            import pyarrow.parquet as pq

            n = pq.read_metadata(dest / "results.parquet").num_rows
            runs.append({"metric": name, "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_bytes": r["peak_rss_bytes"], "result_rows": n})
        base = runs[0]["wall_s"]
        print(f"\n{'metric':<14} {'wall s':>8} {'x floor':>8} {'cpu s':>8} {'peak RSS':>10} {'rows':>7}")
        for x in runs:
            x["x_floor"] = x["wall_s"] / base if base else None
            print(f"{x['metric']:<14} {fmt(x['wall_s']):>8} {x['x_floor']:>8.2f} {fmt(x['cpu_s']):>8} "
                  f"{human_bytes(x['peak_rss_bytes']):>10} {x['result_rows'] if x['result_rows'] is not None else '-':>7}")
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        report = {"corpus": str(corpus) if corpus else None, "out": str(out), "settings": args.settings, "args": args.args, "unit_rows": rows, "segments": manifest["summary"]["segments"], "runs": runs}
        (RESULTS_DIR / "agree-latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
