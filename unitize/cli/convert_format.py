"""``unitize convert-format``: annotations in one format written in another (datt, pdtb3)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import EXIT_OK, EXIT_STRICT, add_study_options, conversion_summary, make_progress, print_findings, settings_from_args

HELP = "read discourse annotations (datt, pdtb2, pdtb3, conll16) and write them as datt or pdtb3, with the raw texts and a study.toml"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_study_options(p)
    p.add_argument("--to", required=True, metavar="FORMAT", help="target format: datt or pdtb3")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..config import absolute
    from ..conversion import convert_format
    from ..findings import ERROR

    settings = settings_from_args(args)
    progress = make_progress(not args.quiet and not args.json and sys.stderr.isatty())
    corpus, findings, manifest = convert_format(settings, args.to, absolute(args.out), strict=args.strict, progress=progress)
    if manifest is None:
        errors = [f for f in findings if f.severity == ERROR]
        if args.json:
            print(json.dumps({"status": "failed", "errors": [e.as_dict() for e in errors]}, ensure_ascii=False, indent=2))
        else:
            print(f"unitize: {len(errors)} input error(s) under --strict; nothing written", file=sys.stderr)
            print_findings(findings)
        return EXIT_STRICT
    if args.json:
        print(json.dumps({"status": "ok", "out": str(args.out), **manifest["summary"], "accounting": manifest["accounting"]}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        conversion_summary(manifest, args.out)
        print_findings(findings)
    return EXIT_OK
