"""``unitize estimate``: corpus estimates from a model's labels and few human ones (PPI++), and each model's run stability."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_OK, Extend, bounded_int, csv_list

HELP = "estimate label prevalence or span density from a model's labels plus the humans' gold (PPI++), and each model's run stability"
EXAMPLES = """examples (OUT is an output directory with candidates, [roles] or --candidates, and the humans' gold):
  unitize adjudicate out && unitize estimate out         # out/estimate/: estimates.csv, stability*.csv, unstable.csv, prompt*.csv
  unitize estimate out --candidates gpt-run1..5 --ci 0.9
  unitize estimate out --candidates gpt/zeroshot=gz1+gz2,gpt/cot=gc1+gc2   # prompt variants of one model side by side
  unitize estimate out --humans-share 0.5                # what if the humans had coded half the documents
  unitize estimate out --width 0.05 --model-cost 0.01    # items humans must code for a ±0.025 interval, alone and with the model
"""

#: estimate rows shown on screen (all are in estimates.csv)
SHOWN = 12


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`, adjudicated (`unitize adjudicate OUT`)")
    p.add_argument("--candidates", action=Extend, type=csv_list(), metavar="NAME[,NAME]",
                   help="the candidates (a model's runs: gpt-run1..5, FAMILY=A+B; default the study's [roles] candidates)")
    p.add_argument("--humans", action=Extend, type=csv_list(), metavar="NAME[,NAME]", help="the humans (default: every annotator not a candidate)")
    p.add_argument("--ci", type=float, default=0.95, metavar="LEVEL", help="the intervals' level (default 0.95)")
    p.add_argument("--untuned", action="store_true", help="plain PPI (λ = 1) instead of PPI++'s power-tuned λ")
    p.add_argument("--width", type=float, metavar="W",
                   help="plan: the items (documents) humans must code for an interval of total width W, alone and with the model")
    p.add_argument("--human-cost", type=float, default=1.0, metavar="C", help="with --width: the cost of one human label (default 1)")
    p.add_argument("--model-cost", type=float, default=0.01, metavar="C", help="with --width: the cost of one model label (default 0.01)")
    p.add_argument("--humans-share", type=float, metavar="P",
                   help="what if: keep the humans' gold on a random share P of the observations they coded, the others as if "
                        "the model alone labelled them (how few could the humans have coded?)")
    p.add_argument("--seed", type=bounded_int(0, 2**63 - 1), default=0,
                   help="random seed of --humans-share and of the majority curve's choices of runs (default 0)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")


def _number(x: Any, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _line(r: dict[str, Any], width: float | None) -> str:
    from ..estimate import OBSERVATIONS

    where = f"{r['layer'] or r['group']} " if r["layer"] or r["group"] else ""
    if r.get("estimate") is None:
        return f"    {r['candidate']} {where}{r['label']}: {r['reason']}"
    text = (f"    {r['candidate']} {where}{r['label']}: {_number(r['estimate'])} [{_number(r['ci_low'])}, {_number(r['ci_high'])}]"
            f"  humans alone {_number(r['humans_only'])} [{_number(r['humans_low'])}, {_number(r['humans_high'])}] from {r['labeled']:,}"
            f"; the model alone {_number(r['model_only'])}")
    if r.get("humans_needed") is not None:
        what = OBSERVATIONS[r["quantity"]]
        text += (f"; an interval {width:g} wide needs {r['humans_needed']:,} {what} coded by humans alone, or {r['ppi_humans']:,} "
                 f"with {r['ppi_model_only']:,} more the model alone labels")
    return text


def run(args: argparse.Namespace) -> int:
    from ..estimate import Plan, estimate

    plan = Plan(args.width, args.human_cost, args.model_cost) if args.width is not None else None
    result = estimate(args.out, candidates=args.candidates, humans=args.humans, level=args.ci, tuned=not args.untuned, plan=plan,
                      humans_share=args.humans_share, seed=args.seed)
    if args.quiet:
        return EXIT_OK
    rows = result.rows
    first = rows[0] if rows else None
    print(f"estimates on {result.setting} ({args.ci:.0%} intervals, PPI{'' if args.untuned else '++'}): {len(rows):,} in "
          f"{result.path / 'estimates.csv'}")
    if first is not None:
        print(f"  {first['quantity']} per label, from {first['labeled']:,} observations with the humans' gold and "
              f"{first['unlabeled']:,} the model alone labels (the first candidate)")
    for r in rows[:SHOWN]:
        print(_line(r, args.width))
    if len(rows) > SHOWN:
        print(f"    … {len(rows) - SHOWN:,} more in estimates.csv")
    for s in result.stability:
        needed = (f"{s['runs_needed']} of {s['runs']} runs give a stable majority" if s["runs_needed"]
                  else "a stable majority needs three runs or more" if s["runs"] < 3 else "no decided majority")
        print(f"  {s['family']}: {s['flipped']:,} of {s['observations']:,} observations flip across its {s['runs']} runs "
              f"({_number(s['flip_rate'])}; units {_number(s['unit_flip_rate'])}); {needed}")
    for v in result.prompts:
        verdict = f"; alt-test {v['alt_test']}" if v["alt_test"] else ""
        print(f"  {v['model']} prompt {v['prompt']}: {v['metric']} {_number(v['value'])} [{_number(v['ci_low'])}, "
              f"{_number(v['ci_high'])}] over {v['runs']} run(s){verdict}")
    for m in result.spread:
        print(f"  {m['model']}: {m['prompts']} prompts {_number(m['spread'])} apart [{_number(m['ci_low'])}, {_number(m['ci_high'])}] "
              f"({m['best']} best, {m['worst']} worst): prompts.csv, prompt_spread.csv")
    if result.stability:
        print(f"  stability: {result.path / 'stability.csv'}, the majority-of-k curve in stability_curve.csv, "
              f"the unstable ones first in unstable.csv")
    return EXIT_OK
