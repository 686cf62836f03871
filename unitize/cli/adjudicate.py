"""``unitize adjudicate``: a gold standard from the annotators' unit matrices, with confidence and a review queue."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import EXIT_OK

HELP = "make a gold standard from the annotators (majority, threshold, unanimous, dawid-skene, mace), with a review queue"
EXAMPLES = """examples (OUT is an output directory of `unitize convert`):
  unitize adjudicate out                                   # majority vote: out/adjudication/ (units, gold spans, review queue)
  unitize adjudicate out --method threshold --min-share 0.6 --review-below 0.8
  unitize adjudicate out --to datt --dest gold/ --with-annotators   # the gold as annotator "gold", beside the annotators
  unitize adjudicate labels-out --method dawid-skene       # item labels, with crowd-kit (pip install 'unitize[crowd]')
"""

#: voters named on screen (all of them are in OUT/adjudication/summary.json)
SHOWN_VOTERS = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..adjudicate import REVIEW_BELOW
    from ..adjudicate.methods import METHODS, names
    from ..writers import writers

    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--method", choices=names(), default="majority",
                   help="; ".join(f"{m.name}: {m.help}" for m in METHODS) + " (default majority)")
    p.add_argument("--min-share", type=float, metavar="P", help="threshold: the share of votes a label needs, e.g. 0.6")
    p.add_argument("--setting", metavar="NAME", help="the setting to adjudicate (default: the first interval setting, "
                   "label matrices first, words before characters)")
    p.add_argument("--review-below", type=float, default=REVIEW_BELOW, metavar="C",
                   help=f"units whose confidence is below C go to the review queue, as do tied ones (default {REVIEW_BELOW})")
    p.add_argument("--to", choices=sorted(writers()), metavar="FORMAT",
                   help=f"also write the gold in this format into --dest, with a study.toml: {', '.join(sorted(writers()))}")
    p.add_argument("--dest", type=Path, metavar="DIR", help="with --to: a new or empty folder (or an earlier gold, with --force)")
    p.add_argument("--annotator", default="gold", metavar="NAME", help="the gold's annotator name (default gold)")
    p.add_argument("--with-annotators", action="store_true", help="with --to: the voting annotators beside the gold")
    p.add_argument("--voters", default="humans", metavar="humans|all|A,B",
                   help="whose votes make the gold: humans (default: the study's [roles] humans, so that a model's runs never "
                        "vote; every annotator when it names no candidates), all, or annotators by name")
    p.add_argument("--force", action="store_true", help="with --to: replace an earlier gold in --dest")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from ..adjudicate import adjudicate

    result = adjudicate(args.out, args.method, setting=args.setting, min_share=args.min_share, review_below=args.review_below,
                        to=args.to, gold_dest=args.dest, annotator=args.annotator, with_annotators=args.with_annotators,
                        force=args.force, voters=args.voters)
    s = result.summary
    if args.json:
        print(json.dumps({"adjudication": str(result.path), **s}, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not args.quiet:
        what = f"{s['gold_spans']:,} gold spans" if s["kind"] == "units" else f"{s['resolved']:,} of {s['coded']:,} items with a gold label"
        print(f"{s['method']} on {s['setting']}: {what}; {s['tied']:,} tied units, {s['review_units']:,} up for review")
        if s["voters"] != "all":
            voters = s["voters"]
            named = ", ".join(voters[:SHOWN_VOTERS]) + (f" and {len(voters) - SHOWN_VOTERS:,} more" if len(voters) > SHOWN_VOTERS else "")
            print(f"  voters: {named} (--voters all lets every annotator vote; all of them in summary.json)")
        print(f"  review queue: {s['review_regions']:,} regions in {result.path / 'review.csv'} (and review.jsonl)")
        if result.candidates:
            print(f"  candidates against the gold ({result.path / 'candidates.csv'}):")
            for r in result.candidates:
                f1 = f", span F1 {r['span_f1']:.3f} ({r['matched_spans']} of {r['gold_spans']} gold spans matched)" if r["span_f1"] is not None else ""
                acc = f"{r['unit_accuracy']:.3f}" if r["unit_accuracy"] is not None else "—"
                print(f"    {r['candidate']}: unit accuracy {acc} on {r['units']:,} units{f1}")
        print(f"  per-unit gold and confidence: {result.path / 'units.parquet'}")
        if result.dest is not None:
            print(f"  gold written as {args.to} to {result.dest} (read it back: unitize convert {result.dest / 'study.toml'} --out DIR)")
    return EXIT_OK
