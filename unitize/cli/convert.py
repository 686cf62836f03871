"""``unitize convert``: read, validate, unitize and write an output directory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import EXIT_OK, EXIT_STRICT, add_executor_option, human_summary, make_progress, print_findings
from .study_flags import add_study_options, settings_from_args

HELP = "read, validate, unitize and write an output directory"
EXAMPLES = """examples (from the repository root; `unitize init` writes a study file for your data):
  unitize convert unitize/examples/tdb-mini/study.toml --out out                   # a study file
  unitize convert --format conll-bio --annotations unitize/examples/bio-mini/annotations --modes separate,labels --out bio-out
  unitize convert unitize/examples/brat-mini/study.toml --units word --set unitize.tokenizer=regex --out brat-out
  unitize convert unitize/examples/tdb-mini/study.toml --out out --executor processes:2   # tokenize and write in 2 processes
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_study_options(p)
    p.add_argument("--out", type=Path, metavar="DIR", help="output directory ([output] dir)")
    p.add_argument("--partition-units", type=int, metavar="N",
                   help="character units per work partition, <units|labels>/setting=<name>/part-<k>.parquet ([output] partition_units; default 1,048,576)")
    add_executor_option(p, config=True)


def run(args: argparse.Namespace) -> int:
    from ..config import ConfigError
    from ..run import convert

    settings = settings_from_args(args)
    if settings.out is None:
        raise ConfigError("no output directory: set [output] dir in the configuration or give --out")
    progress = make_progress(not args.quiet and not args.json and sys.stderr.isatty())
    unitized, manifest = convert(settings, strict=args.strict, progress=progress, executor=args.executor)
    if manifest is None:
        errors = unitized.errors
        if args.json:
            print(json.dumps({"status": "failed", "errors": [e.as_dict() for e in errors]}, ensure_ascii=False, indent=2))
        else:
            print(f"unitize: {len(errors)} input error(s) under --strict; nothing written", file=sys.stderr)
            print_findings(errors)
        return EXIT_STRICT
    data = {**manifest["summary"], "out": str(settings.out), "accounting": manifest["accounting"]}
    if not args.quiet and not args.json:
        ignored = unitized.findings.first().get("labels-ignored")  # one per study, about the settings: said on screen
        if ignored is not None:
            print(f"warning: {ignored.message}; {ignored.action}", file=sys.stderr)
    if args.json:
        print(json.dumps({"status": "ok", **data}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        human_summary(manifest["summary"], settings.out, manifest["accounting"])
    return EXIT_OK
