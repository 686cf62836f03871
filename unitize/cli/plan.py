"""``unitize plan``: how many documents (or items) to annotate, from a pilot study's output directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from .agree import MAX_SAMPLES
from .common import EXIT_OK, EXIT_USAGE, Extend, add_executor_option, bounded_int, csv_list, print_error

HELP = "how many documents or items to annotate: interval widths and alt-test power at ½× … 8× a pilot, or before any pilot"
EXAMPLES = """examples (OUT is a pilot's output directory of `unitize convert`):
  unitize plan --alpha-min 0.8 --codes 4                # before any pilot: 139 pairable values (Krippendorff's table)
  unitize plan out --alpha-min 0.8 --codes 4            # the closed form beside the pilot's projection
  unitize plan out                                      # OUT/plan/plan.csv and one recommendation
  unitize plan out --metric alpha-u,alpha --target 0.05 --plot
  unitize plan models-out --candidates gpt-run1..2 --min-instances 10   # with the alt-test's pass probability
  unitize plan models-out --ppi-width 0.05              # documents humans must code per label's interval, alone and with the model
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .. import metrics as registry

    p.add_argument("out", type=Path, nargs="?", help="a pilot study's output directory (none: the closed form alone, with --codes)")
    g = p.add_argument_group("before any pilot (Bloch & Kraemer 1989, as Krippendorff 2019 tabulates it)")
    g.add_argument("--alpha-min", type=float, metavar="A", help="the alpha the study must show it reaches, e.g. 0.8 or 0.667")
    g.add_argument("--codes", type=bounded_int(2, 10_000), metavar="K", help="the number of codes (categories)")
    g.add_argument("--coders", type=bounded_int(2, 10_000), default=2, metavar="C", help="coders of every unit (default 2)")
    g.add_argument("--significance", type=float, default=0.05, metavar="P", help="one-sided significance (default 0.05)")
    g.add_argument("--smallest-share", type=float, metavar="S", help="the share of the rarest code (default 1/K: equiprobable codes)")
    p.add_argument("--metric", action=Extend, type=csv_list(registry.names()), metavar="M,N",
                   help="metrics to plan (default the default metrics that have an interval); the first gives the recommendation")
    p.add_argument("--settings", action=Extend, type=csv_list(), metavar="S,T", help="only these settings")
    p.add_argument("--groups", action=Extend, type=csv_list(), metavar="G,H", help="only these groups")
    p.add_argument("--target", type=float, default=0.05, metavar="W", help="the interval half-width wanted (default 0.05)")
    p.add_argument("--ci", type=float, default=0.95, metavar="LEVEL", help="the interval's level (default 0.95)")
    p.add_argument("--bootstrap", type=bounded_int(1, MAX_SAMPLES), default=200, metavar="N", help="replicates at each size (default 200)")
    p.add_argument("--seed", type=bounded_int(0, 2**63 - 1), default=0, help="random seed (default 0): the same pilot and seed give the same plan")
    p.add_argument("--candidates", action=Extend, type=csv_list(), metavar="NAME[,NAME]",
                   help="candidates (as unitize agree): adds the alt-test's pass probability")
    p.add_argument("--humans", action=Extend, type=csv_list(), metavar="NAME[,NAME]", help="the humans (default: every annotator not a candidate)")
    p.add_argument("--epsilon", type=float, default=registry.ALT_TEST.epsilon, metavar="E", help="the alt-test's ε (as unitize agree)")
    p.add_argument("--alt-score", choices=registry.alt_scores(), metavar="S", help="the alt-test's alignment score (as unitize agree)")
    p.add_argument("--min-instances", type=int, default=registry.ALT_TEST.min_instances, metavar="N",
                   help=f"the alt-test's least instances per human (default {registry.ALT_TEST.min_instances})")
    g = p.add_argument_group("with a model's labels (prediction-powered inference: needs candidates and the humans' gold, "
                             "unitize adjudicate OUT)")
    g.add_argument("--ppi-width", type=float, metavar="W", help="the items (documents) humans must code for an interval of total "
                   "width W of each label's prevalence (density), alone and with each candidate (OUT/plan/ppi.csv)")
    g.add_argument("--human-cost", type=float, default=1.0, metavar="C", help="the cost of one human label (default 1)")
    g.add_argument("--model-cost", type=float, default=0.01, metavar="C", help="the cost of one model label (default 0.01)")
    p.add_argument("--plot", action="store_true", help="plan.png and plan.svg (needs unitize[plot])")
    add_executor_option(p)
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")


def _closed_form(args: argparse.Namespace) -> str | None:
    """The closed-form minimum as a line for the screen (``None`` without --codes); raises ValueError on bad values."""
    from ..metrics.planning import minimum_codings

    if args.codes is None and args.alpha_min is None:
        return None
    if args.codes is None or args.alpha_min is None:
        raise ValueError("the closed form needs both --alpha-min and --codes")
    m = minimum_codings(args.alpha_min, args.codes, coders=args.coders, significance=args.significance, smallest_share=args.smallest_share)
    return (f"before any pilot: at least {m.values} pairable values ({m.units} units coded by {m.coders} coders each) for alpha "
            f"to be above {m.alpha_min:g} at one-sided significance {m.significance:g}, with {m.codes} codes, the rarest "
            f"{m.smallest_share:.3g} of the values (Bloch & Kraemer 1989; Krippendorff 2019)")


def run(args: argparse.Namespace) -> int:
    from ..agree import AltOptions
    from ..agree.plan import FACTORS, plan

    try:
        closed = _closed_form(args)
    except ValueError as exc:
        print_error(f"{exc} (unitize plan --alpha-min 0.8 --codes 4)")
        return EXIT_USAGE
    if args.out is None:
        if closed is None:
            print_error("give a pilot's output directory, or --alpha-min and --codes for the closed form")
            return EXIT_USAGE
        print(closed)
        return EXIT_OK
    if not args.target > 0 or not 0 < args.ci < 1 or args.bootstrap < 10:
        print_error("--target takes a positive half-width, --ci a level between 0 and 1, --bootstrap 10 or more replicates")
        return EXIT_USAGE
    alt = AltOptions(score=args.alt_score, epsilon=args.epsilon, min_instances=args.min_instances)
    result = plan(args.out, metrics=args.metric, settings=args.settings, groups=args.groups, level=args.ci, replicates=args.bootstrap,
                  seed=args.seed, target=args.target, candidates=args.candidates, humans=args.humans, alt=alt, plot=args.plot,
                  executor=args.executor)
    ppi = _ppi(args)
    if not args.quiet:
        sizes = ", ".join(f"{f:g}×" for f in FACTORS)
        print(f"{len(result.rows)} rows (sizes {sizes} the pilot) written to {result.files[0]}")
        print(result.recommendation)
        if ppi:
            print(ppi)
        if closed is not None:
            print(closed)
            print("where the two differ, trust the pilot's projection: it has your data's codes and their shares, your coders "
                  "and, for spans, your documents; the closed form assumes the rarest code's share, coders who code every "
                  "unit, and independent units (it is what to use before any pilot exists)")
    return EXIT_OK


def _ppi(args: argparse.Namespace) -> str | None:
    """With --ppi-width: OUT/plan/ppi.csv written, and its widest label as a line for the screen."""
    if args.ppi_width is None:
        return None
    from ..estimate import OBSERVATIONS, Plan, plan_labels

    path, rows = plan_labels(args.out, Plan(args.ppi_width, args.human_cost, args.model_cost), candidates=args.candidates,
                             humans=args.humans, level=args.ci)
    planned = [r for r in rows if r.get("humans_needed") is not None]
    if not planned:
        return f"PPI: no label has two observations with the humans' gold to plan from ({path})"
    worst = max(planned, key=lambda r: r["humans_needed"])
    what = OBSERVATIONS[worst["quantity"]]
    return (f"PPI: an interval {args.ppi_width:g} wide for {worst['label']} needs {worst['humans_needed']:,} {what} coded by humans "
            f"alone, or {worst['ppi_humans']:,} with {worst['ppi_model_only']:,} more {what} labelled by {worst['candidate']} alone "
            f"(every candidate and label: {path})")
