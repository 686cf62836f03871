"""``unitize agree``: measure agreement on an output directory (results table, summary, plots)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UnitizeError
from .common import EXIT_OK, EXIT_USAGE, Extend, add_executor_option, bounded_int, csv_list, make_progress, print_error

#: the most bootstrap replicates or gamma samples asked for on the command line
MAX_SAMPLES = 1_000_000

if TYPE_CHECKING:
    import pyarrow as pa

    from ..agree import AgreeResult, Results
    from ..metrics import gate

HELP = "measure agreement on an output directory: results table, summary, plots"
_EXAMPLES = """examples (OUT is an output directory of `unitize convert`):
  unitize agree out                                            # the default metrics ({defaults}), into out/agreement/
  unitize agree out --metric alpha-u,alpha --settings word-interval,word-boundary --plot
  unitize agree labels-out --metric alpha,fleiss,cohen --summary-metric alpha --json > results.jsonl
  unitize agree out --executor processes:2                     # (setting, groups) tasks in 2 processes; same results
  unitize agree out --candidates gpt-run1..2 --alt-test        # models as annotators: human ceiling, stability, alt-test
  unitize agree out --fail-below alpha=0.67,ac1=0.8            # a CI gate: exit code 4 when a value is below its floor
"""


def __getattr__(name: str) -> str:
    """``EXAMPLES``, the end of the command's --help, made when asked: it names the default metrics (the registry's)."""
    if name == "EXAMPLES":
        from .. import metrics as registry

        return _EXAMPLES.format(defaults=", ".join(registry.default()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _floors(text: str) -> list[gate.Floor]:
    from ..metrics import gate

    try:
        return gate.parse(text)
    except UnitizeError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--fail-below: ")) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .. import metrics as registry
    from ..metrics import gate
    from ..metrics.alttest import EPSILON_GUIDANCE

    alt = registry.ALT_TEST

    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--metric", action=Extend, type=csv_list(registry.names()), metavar="M,N",
                   help=f"metrics (default {', '.join(registry.default())}): {', '.join(registry.names())}")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/agreement)")
    p.add_argument("--settings", action=Extend, type=csv_list(), metavar="S,T", help="only these settings (units/ or labels/setting=<name>)")
    p.add_argument("--groups", action=Extend, type=csv_list(), metavar="G,H", help="only these groups")
    p.add_argument("--summary-metric", choices=registry.summarizable(),
                   help="metric of the summary table (default: the first of alpha-u, alpha, … that has a value: alpha-u for "
                        "span data, alpha for item labels and crowd data)")
    p.add_argument("--plot", action="store_true", help="box-and-whisker plots per metric and layer (PNG and SVG; needs unitize[plot])")
    p.add_argument("--gamma-samples", type=bounded_int(1, MAX_SAMPLES), metavar="N", help="gamma: number of sampled continua (default 30)")
    _add_interval_options(p)
    p.add_argument("--by-label", action="store_true", help="also per label (label data): each value against all others (rows with a label)")
    p.add_argument("--by-doc", action="store_true", help="also per document (unit data with annotators known): rows with a doc")
    p.add_argument("--by-annotator", action="store_true", help="also per annotator, each against the others (rows with an annotator)")
    p.add_argument("--seed", type=bounded_int(0, 2**63 - 1), help="random seed of gamma's sampling (default 4577) and of the bootstrap (default 0)")
    p.add_argument("--fail-below", type=_floors, metavar="M=F,N=G",
                   help=f"a quality gate: exit with code {gate.EXIT_GATE} when a whole-layer value of metric M is below F (or "
                        "not measured), naming each; e.g. alpha=0.67,ac1=0.8 (metrics with one value per layer: "
                        f"{', '.join(registry.summarizable())})")
    p.add_argument("--on", choices=gate.ON, default="value",
                   help="with --fail-below: check the value, or the lower end of its bootstrap interval (ci-lower; implies --ci 0.95)")
    add_executor_option(p)
    g = p.add_argument_group("models as annotators (candidates; the study file's [roles] by default)")
    g.add_argument("--candidates", action=Extend, type=csv_list(), metavar="NAME[,NAME]",
                   help="candidate annotators (models): a name, FAMILY=A+B (runs of one model) or a range NAME1..5; the results "
                        "then measure the humans alone, and roles.csv every human pair, candidate-human pair and family of runs")
    g.add_argument("--humans", action=Extend, type=csv_list(), metavar="NAME[,NAME]", help="the humans (default: every annotator not a candidate)")
    g.add_argument("--alt-test", action="store_true",
                   help=f"the {alt.title} ({alt.source}) of every candidate: alt_test.csv, alt_test_humans.csv (needs unitize[agree])")
    g.add_argument("--epsilon", type=float, metavar="E",
                   help=f"the alt-test's cost-benefit margin ε (default {alt.epsilon:g}; the paper's guidance: "
                        + ", ".join(f"{v:g} {k}" for k, v in EPSILON_GUIDANCE.items()) + " annotators)")
    g.add_argument("--alt-score", choices=registry.alt_scores(), metavar="S",
                   help="the alt-test's alignment score: " + "; ".join(f"{s.name} ({s.help})" for s in alt.scores)
                        + f" (default {alt.default_score('items').name} for item labels, {alt.default_score('units').name} for spans)")
    g.add_argument("--fdr", type=float, metavar="Q", help=f"the alt-test's false discovery rate, Benjamini–Yekutieli (default {alt.q:g})")
    g.add_argument("--min-instances", type=int, metavar="N",
                   help=f"the alt-test skips a human with fewer instances shared with a candidate and another human (default {alt.min_instances})")
    p.add_argument("--json", action="store_true", help="print the results as JSON lines on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def _add_interval_options(p: argparse.ArgumentParser) -> None:
    from .. import metrics as registry

    def _resampled(how: registry.Resampling) -> str:
        return ", ".join(m.name for m in registry.where(resampling=how))

    p.add_argument("--ci", type=float, metavar="LEVEL",
                   help="bootstrap confidence intervals at this level (e.g. 0.95): units resampled for "
                        f"{_resampled(registry.Resampling.UNITS)}; documents for {_resampled(registry.Resampling.DOCUMENTS)}")
    p.add_argument("--bootstrap", type=bounded_int(1, MAX_SAMPLES), metavar="N", help="bootstrap replicates (with --ci; given alone it implies --ci 0.95)")
    p.add_argument("--ci-method", choices=registry.CI_METHODS, metavar="M",
                   help="the coding metrics' interval: auto (default: studentized below 50 units, where the percentile bootstrap "
                        "under-covers; bootstrap from 50), bootstrap (percentile), studentized (bootstrap-t with jackknife standard "
                        "errors), jackknife (t × the jackknife standard error), bca. The segment metrics resample documents: "
                        "auto takes the delete-one-document jackknife below 30 documents, jackknife always, the others the "
                        "percentile bootstrap. Coverage of each: docs/agree.md")
    p.add_argument("--alpha-min", action=Extend, type=csv_list(), metavar="A[,B]",
                   help="required minimums: each interval records the probability that the coefficient is below each "
                        "(default 0.667,0.8, Krippendorff's)")


def run(args: argparse.Namespace) -> int:
    from .. import metrics as registry
    from ..agree import AltOptions, agree, as_json_lines
    from ..metrics import gate

    metrics = args.metric or list(registry.default())
    floors: list[gate.Floor] = args.fail_below or []
    metrics += [f.metric for f in floors if f.metric not in metrics]  # a gated metric is measured
    if args.on == "ci-lower":
        if not floors:
            print_error("--on ci-lower goes with --fail-below METRIC=FLOOR")
            return EXIT_USAGE
        gate.check_resampled(floors)
        if args.ci is None and args.bootstrap is None:
            args.ci = 0.95
    gamma = {k: v for k, v in (("n_samples", args.gamma_samples), ("seed", args.seed)) if v is not None}
    ci = _interval_options(args)
    if ci is False:
        return EXIT_USAGE
    if (args.epsilon is not None and not 0 <= args.epsilon < 1) or (args.fdr is not None and not 0 < args.fdr < 1) \
            or (args.min_instances is not None and args.min_instances < 2):
        print_error("--epsilon takes a margin from 0 to 1 (e.g. 0.2), --fdr a level between 0 and 1, --min-instances 2 or more")
        return EXIT_USAGE
    given = {k: v for k, v in (("score", args.alt_score), ("epsilon", args.epsilon), ("fdr", args.fdr),
                               ("min_instances", args.min_instances)) if v is not None}
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
            ci=ci,
            by_label=args.by_label,
            by_doc=args.by_doc,
            by_annotator=args.by_annotator,
            progress=make_progress(not args.quiet and not args.json and sys.stderr.isatty()),
            executor=args.executor,
            candidates=args.candidates,
            humans=args.humans,
            alt_test=args.alt_test,
            alt=AltOptions(**given),
        )
    except UnitizeError as exc:
        print_error(exc)
        return EXIT_USAGE
    if args.json:
        for line in as_json_lines(result.measured):
            print(line)
        return gate_exit(result.measured.whole, floors, args.on)
    if not args.quiet:
        _print_result(result)
    return gate_exit(result.measured.whole, floors, args.on)


def _print_result(result: AgreeResult) -> None:
    """What agree wrote, the summary table, diagnostics and notes, for the screen."""
    import pyarrow.compute as pc

    from ..agree import diagnostics

    nans = sum(pc.sum(pc.is_nan(batch["value"])).as_py() or 0 for batch in result.measured.to_batches())
    print(f"{result.measured.num_rows} results ({nans} NaN, with reasons) written to {result.dest}")
    if result.trial:
        print(f"  a trial: candidates from the command line, not the study file's [roles]; the study's results in "
              f"{result.dest.parent.parent} are left as they were")
    if result.kept is not None and result.kept.num_rows:
        print(f"  and {result.kept.num_rows} earlier results of this output kept (the settings, groups and metrics this run did not measure)")
    for f in result.files:
        if f.suffix != ".svg" and f.parent == result.dest:
            print(f"  {f}")
    plots = [f for f in result.files if f.parent != result.dest]
    if plots:
        print(f"  {len(plots)} plot files in {result.dest / 'plots'}")
    if result.summary_metric:
        print(f"summary ({result.summary_metric}): {result.dest / 'summary.md'}")
        for line in result.screen():
            print(line)
    for line in diagnostics.screen_lines(result.measured.whole.to_pylist()):
        print(line)
    for line in notes(result.measured):
        print(line)


def _interval_options(args: argparse.Namespace) -> Any:
    """The intervals asked for (an :class:`~unitize.metrics.Options`; ``None``: none), or ``False`` after saying what
    is wrong with the flags."""
    from ..agree import Options

    if args.ci is not None or args.bootstrap is not None or args.ci_method is not None or args.alpha_min is not None:
        level = 0.95 if args.ci is None else args.ci
        if not 0 < level < 1 or (args.bootstrap is not None and args.bootstrap < 1):
            print_error("--ci takes a level between 0 and 1 (e.g. 0.95) and --bootstrap a positive number of replicates")
            return False
        try:
            minimums = tuple(float(a) for a in args.alpha_min) if args.alpha_min else None
        except ValueError:
            minimums = ()
        if minimums is not None and not (minimums and all(-1 <= a <= 1 for a in minimums)):
            print_error("--alpha-min takes numbers between -1 and 1, e.g. 0.667,0.8")
            return False
        ci = Options(level=level, replicates=args.bootstrap or 1000, seed=args.seed or 0, method=args.ci_method or "auto")
        return replace(ci, alpha_min=minimums) if minimums else ci
    return None


def gate_exit(table: pa.Table, floors: list[gate.Floor], on: str) -> int:
    """The exit code of the quality gate (0 without one) on the results' whole cells' rows (``table``, or every row); what
    failed goes to standard error."""
    if not floors:
        return EXIT_OK
    from ..metrics import gate

    failures, checked = gate.check(table.to_pylist(), floors, on)
    spec = ",".join(f"{f.metric}={f.floor:g}" for f in floors)
    if not checked:
        print_error(f"quality gate --fail-below {spec}: no whole-layer result of {', '.join(f.metric for f in floors)} to check")
        return gate.EXIT_GATE
    if failures:
        print_error(f"quality gate --fail-below {spec} (on {on}) failed: {len(failures)} of {checked} results below the floor")
        for f in failures:
            print(f"  {f.line()}", file=sys.stderr)
        return gate.EXIT_GATE
    return EXIT_OK


def notes(results: pa.Table | Results) -> list[str]:
    """Lines worth a user's eye after a run: why every value is NaN, what a backend logged (once each); the rows read a
    record batch at a time."""
    import pyarrow.compute as pc

    out = []
    every_nan = results.num_rows > 0
    reasons: Counter[str | None] = Counter()
    logged: Counter[str] = Counter()
    for batch in results.to_batches():
        if every_nan and not pc.all(pc.fill_null(pc.is_nan(batch["value"]), False)).as_py():
            every_nan = False
        if every_nan:
            reasons.update(batch["reason"].to_pylist())
        params = batch["params"]
        for p in params.filter(pc.fill_null(pc.match_substring(params, '"messages"'), False)).to_pylist():
            logged.update(json.loads(p).get("messages", {}))
    if every_nan:
        top = "; ".join(f"{reason} ({n}×)" for reason, n in reasons.most_common(3))
        out.append(f"warning: every result is NaN. Why: {top}")
    for message, n in logged.most_common():
        out.append(f"note: pygamma-agreement logged {message!r} {n} times (captured; see the gamma rows' params)")
    return out
