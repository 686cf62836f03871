#!/usr/bin/env python3
"""Helper for run.py: the Parquet write floor of a set of unit-matrix files.

run.py starts this script with the same interpreter and PYTHONPATH as the CLI,
so it uses the same pyarrow and the same ``unitize.output.PARQUET_WRITE_OPTIONS``.

It reads a JSON object ``{"files": [...], "repeat": N, "tmpdir": DIR}`` on
stdin. For each file it reads the whole table into memory, which is not timed,
and then times two writes into a temporary file:

* ``write_table``: ``pq.write_table(table, tmp, **PARQUET_WRITE_OPTIONS)``;
* ``row_groups``: a ``pq.ParquetWriter(tmp, schema, **opts)`` that writes each
  of the original file's row groups with its own ``write_table`` call, so the
  output has the original row-group layout.

Each timing is the best of ``repeat`` tries. The result is one JSON object on
stdout.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main() -> int:
    req = json.load(sys.stdin)
    import pyarrow
    import pyarrow.parquet as pq

    fallback = None
    try:
        from unitize.output import PARQUET_WRITE_OPTIONS as opts
        opts = dict(opts)
    except Exception as exc:  # noqa: BLE001 - any failure means "use defaults"
        opts = {}
        fallback = f"{type(exc).__name__}: {exc}"
    # row_group_size is an argument of write_table, not of ParquetWriter
    writer_opts = {k: v for k, v in opts.items() if k != "row_group_size"}

    repeat = max(1, int(req.get("repeat", 1)))
    tmpdir = req.get("tmpdir") or None
    if tmpdir:
        os.makedirs(tmpdir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".parquet", dir=tmpdir)
    os.close(fd)
    results = []
    try:
        for path in req["files"]:
            pf = pq.ParquetFile(path)
            md = pf.metadata
            rg_rows = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
            t0 = time.perf_counter()
            table = pf.read()
            read_s = time.perf_counter() - t0
            del pf

            best_wt = best_rg = float("inf")
            size_wt = size_rg = 0
            for _ in range(repeat):
                t0 = time.perf_counter()
                pq.write_table(table, tmp, **opts)
                best_wt = min(best_wt, time.perf_counter() - t0)
                size_wt = os.path.getsize(tmp)
                os.unlink(tmp)

                t0 = time.perf_counter()
                with pq.ParquetWriter(tmp, table.schema, **writer_opts) as w:
                    off = 0
                    for n in rg_rows:
                        w.write_table(table.slice(off, n), row_group_size=max(1, n))
                        off += n
                best_rg = min(best_rg, time.perf_counter() - t0)
                size_rg = os.path.getsize(tmp)
                os.unlink(tmp)
            results.append(dict(
                path=path, rows=md.num_rows, row_groups=len(rg_rows), columns=md.num_columns,
                bytes=os.path.getsize(path), in_memory_bytes=table.nbytes,
                read_s=read_s, write_table_s=best_wt, row_groups_s=best_rg,
                write_table_bytes=size_wt, row_groups_bytes=size_rg))
            del table
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    json.dump(dict(pyarrow=pyarrow.__version__, options=opts, options_fallback=fallback,
                   repeat=repeat, files=results), sys.stdout, default=repr)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
