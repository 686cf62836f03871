"""``unitize agree``: measure agreement on an output directory (results table, summary, plots)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..agree import DEFAULT_METRICS, METRICS, PlotError, agree, as_json_lines
from ..agree.backends import MissingDependency
from .common import EXIT_OK, EXIT_USAGE, csv_list, print_error

HELP = "measure agreement on an output directory: results table, summary, plots"
EXAMPLES = """examples (OUT is an output directory of `unitize convert`):
  unitize agree out                                            # every metric but gamma, into out/agreement/
  unitize agree out --metric alpha-u,alpha --settings word-interval,word-boundary --plot
  unitize agree labels-out --metric alpha,fleiss,cohen --summary-metric alpha --json > results.jsonl
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--metric", type=csv_list(METRICS), metavar="M,N", help=f"metrics (default all but gamma): {', '.join(METRICS)}")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/agreement)")
    p.add_argument("--settings", type=csv_list(), metavar="S,T", help="only these settings (units/<name>)")
    p.add_argument("--groups", type=csv_list(), metavar="G,H", help="only these groups")
    p.add_argument("--summary-metric", choices=[m for m in METRICS if m != "cohen"], help="metric of the summary table (default alpha-u)")
    p.add_argument("--plot", action="store_true", help="box-and-whisker plots per metric and layer (PNG and SVG; needs unitize[plot])")
    p.add_argument("--gamma-samples", type=int, metavar="N", help="gamma: number of sampled continua (default 30)")
    p.add_argument("--seed", type=int, help="gamma: random seed (default 4577)")
    p.add_argument("--json", action="store_true", help="print the results as JSON lines on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    metrics = args.metric or list(DEFAULT_METRICS)
    gamma = {k: v for k, v in (("n_samples", args.gamma_samples), ("seed", args.seed)) if v is not None}
    try:
        result = agree(
            args.out,
            metrics=metrics,
            dest=args.dest,
            settings=args.settings,
            groups=args.groups,
            summary_metric=args.summary_metric,
            plot=args.plot,
            gamma=gamma,
        )
    except (MissingDependency, PlotError, ValueError) as exc:
        print_error(exc)
        return EXIT_USAGE
    if args.json:
        for line in as_json_lines(result.results):
            print(line)
        return EXIT_OK
    if not args.quiet:
        table = result.results
        nans = sum(1 for v in table.column("value").to_pylist() if v != v)
        print(f"{table.num_rows} results ({nans} NaN, with reasons) written to {result.dest}")
        for f in result.files:
            if f.suffix != ".svg" and f.parent == result.dest:
                print(f"  {f}")
        plots = [f for f in result.files if f.parent != result.dest]
        if plots:
            print(f"  {len(plots)} plot files in {result.dest / 'plots'}")
        if result.summary_metric:
            print(f"summary ({result.summary_metric}): {result.dest / 'summary.md'}")
    return EXIT_OK
