"""What the commands share: exit codes, list arguments, the study options, settings from flags, output on screen.

Importing it loads none of the machinery (settings, adapters, findings): each function imports what it
needs when it runs, so that a command's module stays cheap to import (see :mod:`unitize.cli`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..runtime.progress import Progress
from .screen import raw

if TYPE_CHECKING:
    from ..adapters import Adapter
    from ..config import Settings
    from ..model import Finding

T = TypeVar("T")

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_STRICT = 0, 1, 2, 3


def csv_list(choices: Sequence[str] | None = None) -> Callable[[str], list[str]]:
    def parse(value: str) -> list[str]:
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        for item in items:
            if choices is not None and item not in choices:
                raise argparse.ArgumentTypeError(f"{item!r} is not one of {', '.join(choices)}")
        if len(set(items)) != len(items):
            raise argparse.ArgumentTypeError(f"{value!r} names an item twice")
        return items

    return parse


def bounded_int(low: int, high: int):
    """An argparse type: a whole number from ``low`` to ``high`` (else exit 2 saying so)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{number} is not from {low:,} to {high:,}")
        return number

    return parse


def annotators_arg(value: str) -> list[str] | dict[str, Path]:
    """``A,B`` (a selection) or ``A=DIR,B=DIR`` (each annotator's directory)."""
    from ..config import absolute

    items = csv_list()(value)
    pairs = [item.partition("=") for item in items]
    if not any(sep for _, sep, _ in pairs):
        return items
    if not all(sep and name and path for name, sep, path in pairs):
        raise argparse.ArgumentTypeError("mix of NAME and NAME=DIR items; give NAME=DIR for every annotator")
    return {name: absolute(path) for name, _, path in pairs}


EXECUTOR_HELP = (
    "where the work runs: local (default: this process), processes[:N] (N worker processes, default the cores), "
    "dask[:ADDRESS] (a running Dask scheduler, e.g. dask:tcp://10.0.0.5:8786, or a local cluster; needs "
    "pip install 'unitize[dask]'); the results are the same with every executor. Example: --executor processes:2"
)


def add_executor_option(p: argparse.ArgumentParser, *, config: bool = False) -> None:
    """``--executor SPEC`` (:mod:`unitize.runtime.executors`); ``config``: the study's [run] executor is the default."""
    p.add_argument("--executor", metavar="SPEC", help=EXECUTOR_HELP + ("; default [run] executor" if config else ""))


def add_study_options(p: argparse.ArgumentParser, *, config: bool = True, run: bool = True) -> None:
    """The flags of a study: every key of [input] (generated for the formats' own keys), [unitize], [items] and ``--set``.

    ``config``: the study file argument and ``--rat-config``; ``run``: ``--strict``, ``--json``, ``--quiet``, ``--debug``.
    """
    from . import flags

    if config:
        p.usage = "%(prog)s [STUDY.toml | --rat-config FILE | --format NAME --annotations PATH] [options]"
        p.add_argument("config", nargs="?", type=Path, help="study configuration (TOML); flags override its keys")
        p.add_argument("--rat-config", type=Path, metavar="FILE", help="RAT's legacy configuration file instead of TOML")
    _input_options(p.add_argument_group("input (the [input] table)"))
    _unitize_options(p.add_argument_group("unitization (the [unitize] table)"))
    _items_options(p.add_argument_group("flat labels (--format labels; the [input] and [items] tables)"))
    flags.add_generated(p, "format options (the other [input] keys; which format has which: unitize formats --format NAME)")
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="any study key, the value in TOML (repeatable): --set 'input.columns={doc=\"id\"}', --set items.groups.severity.level=ordinal",
    )
    if run:
        p.add_argument("--strict", action="store_true", help="error findings exit with code 3 and write nothing")
        p.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary")
        p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def _input_options(g: Any) -> None:
    g.add_argument("--format", help="input format (see `unitize formats`)")
    g.add_argument("--annotations", type=Path, metavar="DIR", help="annotation files: a directory, a file or a ZIP, as the format reads them")
    g.add_argument("--texts", type=Path, metavar="DIR", help="raw texts (a directory; span-table: the texts table)")
    g.add_argument("--encoding", help="encoding of the raw texts (default utf-8)")
    g.add_argument("--encoding-fallback", metavar="ENC", help="tried when a raw text is not valid UTF-8, e.g. windows-1254")
    g.add_argument("--filename-pattern", metavar="REGEX", help="file-name pattern with groups doc, annotator, connective")
    g.add_argument(
        "--annotators",
        type=annotators_arg,
        metavar="A,B | A=DIR,B=DIR",
        help="only these annotators (and expect all of them); NAME=DIR pairs give each annotator's directory (pdtb3, pdtb2, conll16)",
    )
    g.add_argument("--annotator", metavar="NAME", help="name of the single annotator of --annotations (pdtb3, pdtb2, conll16, brat, webanno-tsv)")
    g.add_argument("--group-by", choices=("connective", "type", "sense", "none"), help="sampling unit of PDTB-family inputs")
    g.add_argument("--sense-level", type=int, metavar="N", help="with --group-by sense: levels of the sense hierarchy")
    g.add_argument("--types", type=csv_list(), metavar="Explicit,Implicit", help="only these relation types")
    g.add_argument("--glob", metavar="PATTERN", help="which files under an annotator's directory are read")
    g.add_argument("--parses", type=Path, metavar="FILE", help="parses.json for CoNLL system outputs (token indices)")
    g.add_argument("--groups", type=csv_list(), metavar="G,H", help="only these groups (connectives)")
    g.add_argument("--workers", type=int, metavar="N", help="processes for parsing (default automatic)")


def _unitize_options(g: Any) -> None:
    from ..config import APPROACHES, ASSIGNMENTS, DISCONTINUOUS, LAYERS_FROM, LAYOUTS, MODES, UNITIZE_OPTIONS, UNITS
    from . import flags

    def _unitize_help(key: str) -> str:
        return flags.describe(UNITIZE_OPTIONS[key])

    g.add_argument("--units", type=csv_list(UNITS), metavar="char,word", help=_unitize_help("units"))
    g.add_argument("--approaches", type=csv_list(APPROACHES), metavar="interval,boundary", help=_unitize_help("approaches"))
    g.add_argument("--layers", type=csv_list(), metavar="Arg1,Arg2", help=_unitize_help("layers"))
    g.add_argument("--modes", type=csv_list(MODES), metavar="separate,combined,labels", help=_unitize_help("modes"))
    g.add_argument("--tokenizer", metavar="SPEC", help=_unitize_help("tokenizer"))
    g.add_argument("--discontinuous", choices=DISCONTINUOUS, help=_unitize_help("discontinuous"))
    g.add_argument("--keep-missing", action="store_true", default=None, help="keep documents an annotator has no file for (null column)")
    g.add_argument("--keep-mismatched", action="store_true", default=None, help="keep documents whose annotators have different relation counts")
    g.add_argument("--layers-from", choices=LAYERS_FROM, help=_unitize_help("layers_from"))
    g.add_argument("--layout", choices=LAYOUTS, help=_unitize_help("layout"))
    g.add_argument("--assignment", choices=ASSIGNMENTS, help=_unitize_help("assignment"))


def _items_options(g: Any) -> None:
    from ..config import ITEMS_OPTIONS
    from . import flags

    item_layouts = ITEMS_OPTIONS["layouts"].choices  # the layouts an item matrix can be written in
    g.add_argument("--shape", choices=("long", "wide", "per-annotator", "lists", "dict"), help="how the label table is laid out")
    g.add_argument("--item", metavar="COLUMN", help="the item-id column")
    g.add_argument("--annotator-column", dest="annotator", metavar="COLUMN", help="the annotator column (long, lists; per-annotator default: file name)")
    g.add_argument("--label-columns", type=csv_list(), metavar="A,B", help="label columns, each a group")
    g.add_argument("--missing", type=csv_list(), metavar="NA,-", help="cell values meaning not labelled (besides empty cells)")
    g.add_argument("--layouts", type=csv_list(item_layouts), metavar=",".join(item_layouts), help=flags.describe(ITEMS_OPTIONS["layouts"]))
    g.add_argument("--complete", action="store_true", default=None, help="keep only items every annotator labelled")


def input_flags(args: argparse.Namespace, adapter: Adapter) -> dict[str, Any]:
    """The [input] keys given as flags, read for ``adapter``'s format (paths made absolute against the working
    directory); a flag for a key the format does not have is an error naming the format's options."""
    from ..config import absolute
    from . import flags

    inp: dict[str, Any] = {}
    for key in ("annotations", "texts", "parses"):
        value = getattr(args, key)
        if value is not None:
            inp[key] = absolute(value)
    for key in (
        "encoding",
        "encoding_fallback",
        "filename_pattern",
        "annotators",
        "groups",
        "workers",
        "annotator",
        "group_by",
        "sense_level",
        "types",
        "glob",
    ):
        value = getattr(args, key)
        if value is not None:
            inp[key] = value
    for key, flag in (("shape", "shape"), ("item", "item"), ("labels", "label_columns"), ("missing", "missing")):
        value = getattr(args, flag)
        if value is not None:
            inp[key] = value
    flags.check_format(list(inp), adapter)
    return inp | flags.parse(flags.generated(args), adapter)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from a config file (TOML or RAT), changed by ``--set``, overridden by flags."""
    from ..adapters import get_adapter
    from ..config import ConfigError, absolute, apply_set, from_mapping, load_rat, load_toml, override, working_directory

    if args.config and args.rat_config:
        raise ConfigError("give either a TOML configuration or --rat-config, not both")
    sets = args.set or []
    if args.rat_config:
        if sets:
            raise ConfigError("--set changes a TOML study, not --rat-config")
        settings = load_rat(args.rat_config)
    elif args.config:
        settings = load_toml(args.config, sets)
    else:
        data: dict[str, Any] = {}
        for assignment in sets:
            apply_set(data, assignment)
        if args.format is None and "format" not in data.get("input", {}):
            raise ConfigError("give a study configuration (unitize convert study.toml) or --format and --annotations")
        settings = from_mapping(data, base=working_directory())  # names in the outputs are relative to it
    inp = input_flags(args, get_adapter(args.format or settings.format))
    items = dict(settings.items)
    if args.layouts:
        items["layouts"] = args.layouts
    if args.complete:
        items["complete"] = True
    pairs = None
    if args.units or args.approaches:
        units = args.units or list(dict.fromkeys(u for u, _ in settings.pairs))
        approaches = args.approaches or list(dict.fromkeys(a for _, a in settings.pairs))
        pairs = tuple((u, a) for u in units for a in approaches)
    settings = override(
        settings,
        format=args.format,
        input=inp or None,
        pairs=pairs,
        layers=tuple(args.layers) if args.layers else None,
        modes=tuple(args.modes) if args.modes else None,
        tokenizer=args.tokenizer,
        discontinuous=args.discontinuous,
        keep_missing=args.keep_missing,
        keep_mismatched=args.keep_mismatched,
        layers_from=args.layers_from,
        layout=args.layout,
        assignment=args.assignment,
        out=absolute(args.out) if getattr(args, "out", None) else None,
        partition_units=getattr(args, "partition_units", None),
        items=items if items != settings.items else None,
    )
    return settings


def make_progress(enabled: bool) -> Progress | None:
    if not enabled:
        return None
    from tqdm import tqdm

    stream = raw(sys.stderr)  # the bar moves the cursor itself
    try:
        known_width = os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        known_width = False

    def progress(items: Iterable[T], desc: str) -> Iterable[T]:
        total = len(items) if isinstance(items, Sized) else None
        # a terminal that reports no width (a pseudo-terminal never sized) gets 80 columns: tqdm would draw nothing
        width = {"dynamic_ncols": True} if known_width else {"ncols": 80}
        return tqdm(items, desc=desc, total=total, leave=False, file=stream, **width)

    return progress


def print_findings(findings: Iterable[Finding], limit: int = 10) -> None:
    from ..model.findings import ERROR

    errors = [f for f in findings if f.severity == ERROR]
    for f in errors[:limit]:
        where = " ".join(x for x in (f.file, f"record {f.record}" if f.record else None) if x)
        print(f"  error {f.code}: {where}: {f.message} -> {f.action}", file=sys.stderr)
    if len(errors) > limit:
        print(f"  … and {len(errors) - limit} more errors", file=sys.stderr)


def shown_name(name: str, most: int = 60) -> str:
    """A name from the data for a summary line: its tab and line break escaped (the screen passes those, and
    escapes every other control character), a long one cut to ``most`` characters."""
    name = name.replace("\t", "\\t").replace("\n", "\\n")
    return name if len(name) <= most else f"{name[: most - 1]}…"


def short_names(names: list[str], limit: int = 12) -> str:
    """Names joined with commas (each :func:`shown_name`), shortened for crowd data (thousands of annotators)."""
    shown = [shown_name(n) for n in names[:limit]]
    return ", ".join(shown) + (f", … ({len(names) - limit} more)" if len(names) > limit else "")


def items_summary(data: dict[str, Any]) -> None:
    from ..schema import setting_path

    names = data["annotators"]
    print(f"{data['groups']} groups, {len(names)} annotators ({short_names(names, 10)})")
    for name, rows in data.get("unit_rows", {}).items():
        print(f"  {setting_path(name) + '/':<40} {rows:>12,} rows")
    for group, n in data["items"].items():
        extra = f", {n['reached_by_any']} reached by some annotator" if "reached_by_any" in n else ""
        print(f"  {group}: {n['items']:,} items, {n['complete']:,} labelled by every annotator, {n['kept']:,} kept{extra}")


#: a run that excludes more than this share of its records says so in a warning line
EXCLUDED_WARNING_SHARE = 0.10


def _share(n: int, total: int) -> str:
    return f"{n:,} ({100 * n / total:.1f} %)" if total else f"{n:,}"


def record_lines(accounting: dict[str, Any], report: str = "report.jsonl") -> tuple[list[str], list[str]]:
    """Where the records went, per unit type (or for flat labels), and warnings for a large excluded share."""
    lines, warnings = [], []
    if "labels" in accounting:
        labels = accounting["labels"]
        read = labels["read"]
        fates = ", ".join(f"{fate.replace('_', ' ')} {_share(n, read)}" for fate, n in labels.items() if fate != "read")
        lines.append(f"  label records: {read:,} read; {fates}")
        # items left out by the item-set choice or never reached are the study's design; these are data problems
        lost = sum(n for fate, n in labels.items() if fate in ("duplicate", "conflicting", "invalid_label"))
        if read and lost / read > EXCLUDED_WARNING_SHARE:
            warnings.append(
                f"{100 * lost / read:.1f} % of the label records were excluded as duplicates, conflicts or invalid labels "
                f"(more than {EXCLUDED_WARNING_SHARE:.0%}); see {report}"
            )
        return lines, warnings
    for unit, acc in accounting.get("by_unit", {}).items():
        total = acc["records"]
        excluded = sum(acc["excluded"].values())
        reasons = ", ".join(f"{code} {_share(n, total)}" for code, n in sorted(acc["excluded"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"  records ({unit} units): {total:,} in the selected layers, {_share(acc['in_segments'], total)} in segments, "
            f"{_share(excluded, total)} excluded" + (f": {reasons}" if reasons else "")
        )
        if total and excluded / total > EXCLUDED_WARNING_SHARE:
            top = max(acc["excluded"], key=acc["excluded"].get)
            hint = {
                "relation-count-mismatch": "; --keep-mismatched keeps documents whose annotators have different relation counts",
                "annotator-missing": "; --keep-missing keeps documents an annotator has no file for (null column)",
            }.get(top, "")
            warnings.append(
                f"{100 * excluded / total:.1f} % of the records ({unit} units) were excluded, most by {top} "
                f"(more than {EXCLUDED_WARNING_SHARE:.0%}); see {report}{hint}"
            )
    return lines, warnings


def human_summary(
    data: dict[str, Any], out: Path | None, accounting: dict[str, Any] | None = None, report: str = "report.jsonl"
) -> None:
    """The summary of a run on screen: counts, where the records went, findings by code, the output.

    ``report`` names where the findings are, for the warnings.
    """
    from ..schema import setting_path

    f = data["findings"]
    lines, warnings = record_lines(accounting, report) if accounting else ([], [])
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if data.get("kind") == "items":
        items_summary(data)
    else:
        print(
            f"{data['documents']} documents, {data['groups']} groups "
            f"({data['groups_with_documents']} with documents), {len(data['annotators'])} annotators "
            f"({short_names(data['annotators'])}), layers {short_names(data['layers'])}"
        )
        dense = data.get("dense_rows", {})
        for name, rows in data.get("unit_rows", {}).items():
            # sparse: fewer rows than units; long: a row per unit and annotator, more
            more = f" stored (the dense matrix: {dense[name]:,} rows, one per unit and layer)" if dense.get(name, rows) != rows else ""
            print(f"  {setting_path(name) + '/':<40} {rows:>12,} rows{more}")
        print("  segments: " + ", ".join(f"{u} {n:,}" for u, n in data["segments"].items()))
    for line in lines:
        print(line)
    print(f"  findings: {f['error']} errors, {f['warning']} warnings, {f['info']} info")
    for code, n in data["findings_by_code"].items():
        print(f"    {code:<26} {n:>6}")
    if out is not None:
        print(f"  output: {out}  (report: {out / 'report.jsonl'})")


def conversion_summary(manifest: dict[str, Any], out: Path) -> None:
    s, a = manifest["summary"], manifest["accounting"]
    f = s["findings"]
    print(f"{s['format']} -> {s['to']}: {s['documents']} documents, {len(s['annotators'])} annotators ({short_names(s['annotators'])})")
    what = (f"{a['items']['written']:,} of {a['items']['read']:,} labels written" if "items" in a
            else f"{a['relations_written']:,} records, {a['spans']['written']:,} of {a['spans']['read']:,} spans written")
    print(f"  {what}; " + ", ".join(f"{n} {role} files" for role, n in a["files"].items()))
    if a.get("not_convertible"):
        print(f"  {a['not_convertible']:,} not-convertible: records the target cannot hold, each named in {out / 'report.jsonl'}")
    print(f"  findings: {f['error']} errors, {f['warning']} warnings, {f['info']} info")
    print(f"  output: {out}  (read it back: unitize convert {out / 'study.toml'} --out DIR)")




def print_error(exc: BaseException | str) -> None:
    """The one-line error a user sees (on standard error)."""
    print(f"unitize: error: {exc}", file=sys.stderr)
