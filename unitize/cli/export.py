"""``unitize export``: an output directory in the shape another tool reads."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import EXIT_OK, Extend, csv_list

HELP = "write an output directory in the shape another tool reads"
EXAMPLES = """examples (OUT is an output directory of `unitize convert`):
  unitize export out --to reliability-csv                     # coder x unit CSVs for R's irr or krippendorff
  unitize export out --to rat --settings word-interval,word-boundary
  unitize export out --to pygamma --positions chars --dest gamma-csv
  unitize export out --to disagreements --settings word-interval   # regions where annotators differ, for adjudication
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..export import FORMATS, POSITIONS

    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--to", required=True, choices=FORMATS, help="export format")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/exports/FORMAT)")
    p.add_argument("--settings", action=Extend, type=csv_list(), metavar="S,T", help="only these settings (units/ or labels/setting=<name>)")
    p.add_argument("--groups", action=Extend, type=csv_list(), metavar="G,H", help="only these groups")
    p.add_argument("--positions", choices=POSITIONS, default="units", help="pygamma: unit (token) numbers or characters")
    p.add_argument("--per-document", action=argparse.BooleanOptionalAction, default=None,
                   help="pygamma: a file per document (positions from 0) rather than every document of a group on one "
                        "continuum (default: per document when a group has more than 500 segments)")
    p.add_argument("--json", action="store_true", help="print the files written as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from ..export import export

    dest, files = export(args.out, args.to, args.dest, settings=args.settings, groups=args.groups, positions=args.positions,
                         per_document=args.per_document)
    if args.json:
        print(json.dumps({"dest": str(dest), "files": [vars(f) for f in files]}, ensure_ascii=False, indent=2))
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    left = sum(f.left_out for f in files)
    print(f"{len(files)} files written to {dest} (index: {dest / 'index.csv'})")
    if left:
        print(f"  {left:,} rows left out (incomplete units or zero-length segments); see left_out in index.csv")
    return EXIT_OK
