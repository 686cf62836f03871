#!/usr/bin/env python3
"""Where `unitize convert`'s time goes, step by step, with one executor.

    python bench/convert_phases.py bench/.data/tdb-full/study.toml local /tmp/out
    python bench/convert_phases.py bench/.data/tdb-full/study.toml processes:2 /tmp/out

Runs read -> unitize -> write in this process through the Python API, timing each step
(``validate``, ``build_spaces``, ``_Fragments`` and ``resolve_segments`` wrapped in place):
wall, this process's CPU and the CPU of reaped children (the DATT reader's workers when they
end; the executor's pool when it is closed: the last line). Prints the load average.
"""
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import unitize
from unitize.runtime.executors import get_executor
from unitize.spans import run as span_run


def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime

if __name__ == "__main__":
    study, spec, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    shutil.rmtree(out, ignore_errors=True)
    marks = []
    def mark(name):
        marks.append((name, time.perf_counter(), *cpu()))
    # split unitize_spans: wrap validate, build_spaces and resolve_segments to time them
    for fn in ("validate", "build_spaces", "resolve_segments", "_Fragments"):
        orig = getattr(span_run, fn)
        def wrapped(*a, __orig=orig, __name=fn, **k):
            mark(f"{__name} start")
            r = __orig(*a, **k)
            mark(f"{__name} end")
            return r
        setattr(span_run, fn, wrapped)
    with get_executor(spec) as pool:
        mark("pool ready")
        settings = unitize.load_settings(study)
        settings = unitize.override(settings, out=out)
        corpus = unitize.read_corpus(settings)
        mark("read")
        result = unitize.unitize(corpus, settings, executor=pool)
        mark("unitize")
        unitize.write_output(result, out, executor=pool)
        mark("write")
    mark("pool closed (workers reaped)")
    prev = marks[0]
    print(f"executor {spec}")
    for m in marks[1:]:
        print(f"  {m[0]:24s} wall {m[1]-prev[1]:7.2f}  self cpu {m[2]-prev[2]:7.2f}  children cpu {m[3]-prev[3]:7.2f}")
        prev = m
    print(f"  total wall {marks[-1][1]-marks[0][1]:.2f}  self cpu {marks[-1][2]-marks[0][2]:.2f}  children {marks[-1][3]-marks[0][3]:.2f}  load {os.getloadavg()}")
