"""``unitize convert-format``: annotations in one format written in another (any writer of unitize.writers)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import RunError
from .common import EXIT_OK, EXIT_STRICT, conversion_summary, make_progress, print_findings
from .study_flags import add_study_options, settings_from_args

HELP = "read annotations in one format and write them in another, with the texts and a study.toml that reads them back"
EXAMPLES = """examples:
  unitize convert-format study.toml --to webanno-tsv --out as-inception/
  unitize convert-format --format brat --annotations project/ --to doccano --out as-doccano/
  unitize convert-format study.toml --to span-table --target-option table_format=parquet --out tables/ --force
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..run.conversion import targets

    add_study_options(p)
    p.add_argument("--to", required=True, metavar="FORMAT", help=f"target format: {', '.join(targets())}")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory (new or empty, or --force)")
    p.add_argument("--force", action="store_true", help="replace an earlier conversion in --out")
    p.add_argument("--target-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the target format, e.g. table_format=parquet (span-table, labels, huggingface)")


def _options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise RunError(f"--target-option {pair!r}: write it as KEY=VALUE, e.g. table_format=parquet")
        out[key.strip()] = value.strip()
    return out


def run(args: argparse.Namespace) -> int:
    from ..config import absolute
    from ..model.findings import ERROR
    from ..run.conversion import convert_format

    settings = settings_from_args(args)
    progress = make_progress(not args.quiet and not args.json and sys.stderr.isatty())
    corpus, findings, manifest = convert_format(
        settings, args.to, absolute(args.out), strict=args.strict, force=args.force, options=_options(args.target_option), progress=progress
    )
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
