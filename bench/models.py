#!/usr/bin/env python3
"""Benchmark the alt-test on the synthetic TDB-scale corpus: what ``--alt-test`` adds to ``unitize agree``.

The corpus (``bench/make_corpus.py``) is converted once with word units (both approaches) into
``bench/.data/models-<corpus>/``; its last annotator is the candidate, the others the humans. Three
commands are timed in turn, each in a fresh process, ``--repeat`` times interleaved (paired):

- ``plain``: ``unitize agree OUT --metric M`` (every annotator);
- ``roles``: the same with ``--candidates C`` (the humans measured alone, and every pair of roles.csv);
- ``alt``: ``roles`` with ``--alt-test`` (``--alt-score`` as given).

The alt-test's cost is the median of ``alt − roles`` over the pairs; reported beside the median of
``plain`` and their ratio (the issue asks for at most one more agree pass: a ratio ≤ 1).

    python bench/models.py --small                # quick
    python bench/models.py                        # the TDB preset
    python bench/models.py --alt-score unit-accuracy --repeat 5

Results go to stdout and ``bench/results/models-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import DATA_DIR, REPO_DIR, RESULTS_DIR, ensure_corpus, run_child, tail  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the small preset")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--metrics", default="alpha-u,alpha", help="the metrics of every agree run")
    ap.add_argument("--alt-score", default=None, help="span-f1 (default) or unit-accuracy")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    corpus = (DATA_DIR / ("tdb-small" if args.small else "tdb-full")).resolve()
    ensure_corpus(corpus, args.small, args.seed)
    out = DATA_DIR / f"models-{corpus.name}"
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR)}
    logs = Path(tempfile.mkdtemp(prefix="unitize-models-bench-"))
    try:
        if not (out / "manifest.json").is_file():
            cmd = [args.python, "-m", "unitize", "convert", str(corpus / "study.toml"), "--out", str(out), "--units", "word",
                   "--approaches", "interval,boundary", "--quiet"]
            r = run_child(cmd, env=env, cwd=REPO_DIR, log_dir=logs, name="convert", timeout=None)
            if r["exit_code"] != 0:
                print(tail(r["stderr"]), file=sys.stderr)
                return 1
        candidate = _annotators(out)[-1]
        base = [args.python, "-m", "unitize", "agree", str(out), "--metric", args.metrics, "-q"]
        roles = ["--candidates", candidate]
        alt = [*roles, "--alt-test", *(["--alt-score", args.alt_score] if args.alt_score else [])]
        times: dict[str, list[float]] = {"plain": [], "roles": [], "alt": []}
        for k in range(args.repeat):
            for name, extra in (("plain", []), ("roles", roles), ("alt", alt)):
                r = run_child([*base, *extra, "--dest", str(logs / f"{name}-{k}")], env=env, cwd=REPO_DIR, log_dir=logs,
                              name=f"{name}-{k}", timeout=None)
                if r["exit_code"] != 0:
                    print(f"{name}: failed\n{tail(r['stderr'])}", file=sys.stderr)
                    return 1
                times[name].append(r["wall_s"])
        cost = statistics.median(a - b for a, b in zip(times["alt"], times["roles"]))
        plain = statistics.median(times["plain"])
        report = {"corpus": corpus.name, "candidate": candidate, "metrics": args.metrics, "alt_score": args.alt_score or "span-f1",
                  "repeat": args.repeat, "times_s": times, "alt_test_cost_s": cost, "plain_agree_s": plain, "ratio": cost / plain}
        for name, ts in times.items():
            print(f"{name:6} median {statistics.median(ts):7.2f} s  ({', '.join(f'{t:.2f}' for t in ts)})")
        print(f"alt-test cost (median of alt − roles, paired): {cost:.2f} s = {cost / plain:.2f} × a plain agree pass ({plain:.2f} s)")
        RESULTS_DIR.mkdir(exist_ok=True)
        (RESULTS_DIR / "models-latest.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    return 0


def _annotators(out: Path) -> list[str]:
    sys.path.insert(0, str(REPO_DIR))
    from unitize.dataset import OutputData

    return sorted({a for s in OutputData(out).settings for a in s.annotators})


if __name__ == "__main__":
    sys.exit(main())
