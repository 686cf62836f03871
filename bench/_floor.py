#!/usr/bin/env python3
"""Helper for run.py: the Parquet write floor of a set of unit-matrix files.

run.py starts this script with the same interpreter and PYTHONPATH as the CLI,
so it uses the same pyarrow and the same writer options
(``unitize.output.parquet_options(schema)``).

It reads a JSON object ``{"files": [...], "repeat": N, "tmpdir": DIR}`` on
stdin. Each file is re-read row group by row group (not timed) and written
again through one ``pq.ParquetWriter`` with the original row-group layout;
only the writes are timed, and memory stays bounded by one row group.

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
        from unitize.output import parquet_options

        def options_for(schema):
            return parquet_options(schema)

        opts = {"per_table": "unitize.output.parquet_options(schema)"}
    except Exception as exc:  # noqa: BLE001 - any failure means "use defaults"
        def options_for(schema):
            return {}

        opts = {}
        fallback = f"{type(exc).__name__}: {exc}"

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
            schema = pf.schema_arrow
            writer_opts = options_for(schema)
            best = float("inf")
            size = 0
            read_s = 0.0
            for _ in range(repeat):
                # Stream row group by row group (memory stays bounded by one row group);
                # only the writes are timed: the floor is pyarrow writing the same rows.
                write_s = 0.0
                t0 = time.perf_counter()
                writer = pq.ParquetWriter(tmp, schema, **writer_opts)
                write_s += time.perf_counter() - t0
                for i in range(md.num_row_groups):
                    t0 = time.perf_counter()
                    table = pf.read_row_group(i)
                    read_s += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    writer.write_table(table, row_group_size=max(1, table.num_rows))
                    write_s += time.perf_counter() - t0
                    del table
                t0 = time.perf_counter()
                writer.close()
                write_s += time.perf_counter() - t0
                best = min(best, write_s)
                size = os.path.getsize(tmp)
                os.unlink(tmp)
            results.append(dict(
                path=path, rows=md.num_rows, row_groups=md.num_row_groups, columns=md.num_columns,
                bytes=os.path.getsize(path), read_s=read_s / repeat,
                write_table_s=best, row_groups_s=best,
                write_table_bytes=size, row_groups_bytes=size))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    json.dump(dict(pyarrow=pyarrow.__version__, options=opts, options_fallback=fallback,
                   repeat=repeat, files=results), sys.stdout, default=repr)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
