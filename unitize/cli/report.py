"""``unitize report``: a static HTML report of where annotators disagree (opens from the file, offline)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..report import report
from .common import EXIT_OK, make_progress

HELP = "write a static HTML report: agreement, where annotators disagree, every document's text with its tracks"
EXAMPLES = """examples (OUT is an output directory of `unitize convert`, best after `unitize agree OUT`):
  unitize report out                      # out/report/index.html: open it in a browser (no server needed)
  unitize report out --dest review/       # somewhere else
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/report)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    folder, built = report(args.out, args.dest, progress=make_progress(not args.quiet and not args.json and sys.stderr.isatty()))
    index = folder.resolve() / "index.html"
    docs = len(built.docs)
    agreement = built.overview["agreement"] is not None
    if args.json:
        print(json.dumps({"report": str(index), "documents": docs, "item_groups": len(built.items), "agreement": agreement}))
        return EXIT_OK
    if not args.quiet:
        print(f"report written: {index} ({docs:,} documents, {len(built.items)} item groups, {time.perf_counter() - started:.1f} s)")
        print(f"  open it in a browser: {index.as_uri()}")
        if not agreement:
            print(f"  no agreement results in {args.out}: run `unitize agree {args.out}`, then `unitize report {args.out}` again, for the numbers")
    return EXIT_OK
