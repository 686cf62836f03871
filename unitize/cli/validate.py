"""``unitize validate``: read and validate only; print the findings, write no matrices."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import EXIT_OK, EXIT_STRICT, human_summary, make_progress, print_findings
from .study_flags import add_study_options, settings_from_args

HELP = "read and validate only; print the findings, write no matrices"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_study_options(p)
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the findings as JSON lines to FILE")


def run(args: argparse.Namespace) -> int:
    from ..output import text_stream
    from ..run import read_corpus, summary, unitize

    settings = settings_from_args(args)
    progress = make_progress(not args.quiet and not args.json and sys.stderr.isatty())
    unitized = unitize(read_corpus(settings, progress, stream=True), settings, progress)
    if args.report:
        with text_stream(args.report) as fh:
            fh.writelines(line + "\n" for line in unitized.findings.lines())
    data = summary(unitized)
    if args.json:
        print(json.dumps({**data, "accounting": unitized.accounting, "report": [f.as_dict() for f in unitized.findings]}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        human_summary(data, None, unitized.accounting, str(args.report) if args.report else "the errors below (all findings: --report FILE)")
        print_findings(unitized.errors)
    return EXIT_STRICT if args.strict and unitized.errors else EXIT_OK
