"""The ``unitize`` command line: convert, convert-format, validate, info, formats.

Exit codes: 0 done (findings may exist, see the report), 2 usage or
configuration error, 3 input errors under ``--strict`` (nothing written),
1 an internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import __version__
from .adapters import AdapterError, available, get_adapter
from .config import (
    APPROACHES,
    DISCONTINUOUS,
    LAYERS_FROM,
    LAYOUTS,
    MODES,
    UNITS,
    ConfigError,
    Settings,
    load_rat,
    load_toml,
    override,
)
from .conversion import convert_format
from .output import OutputError, atomic_write_text, read_manifest
from .pipeline import RunError, convert, read_corpus, setting_name, summary, unitize
from .report import ERROR
from .tokenize import TokenizerError

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_STRICT = 0, 1, 2, 3
_USER_ERRORS = (ConfigError, RunError, AdapterError, OutputError, TokenizerError)


def _csv(choices: Sequence[str] | None = None):
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


def _annotators(value: str) -> list[str] | dict[str, Path]:
    """``A,B`` (a selection) or ``A=DIR,B=DIR`` (each annotator's directory)."""
    items = _csv()(value)
    pairs = [item.partition("=") for item in items]
    if not any(sep for _, sep, _ in pairs):
        return items
    if not all(sep and name and path for name, sep, path in pairs):
        raise argparse.ArgumentTypeError("mix of NAME and NAME=DIR items; give NAME=DIR for every annotator")
    return {name: Path(path).resolve() for name, _, path in pairs}


def _add_study_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", type=Path, help="study configuration (TOML); flags override its keys")
    p.add_argument("--rat-config", type=Path, metavar="FILE", help="RAT's legacy configuration file instead of TOML")
    g = p.add_argument_group("input (the [input] table)")
    g.add_argument("--format", help="input format (see `unitize formats`)")
    g.add_argument("--annotations", type=Path, metavar="DIR", help="annotation files")
    g.add_argument("--texts", type=Path, metavar="DIR", help="raw texts")
    g.add_argument("--encoding", help="encoding of the raw texts (default utf-8)")
    g.add_argument("--encoding-fallback", metavar="ENC", help="tried when a raw text is not valid UTF-8, e.g. windows-1254")
    g.add_argument("--filename-pattern", metavar="REGEX", help="file-name pattern with groups doc, annotator, connective")
    g.add_argument(
        "--annotators",
        type=_annotators,
        metavar="A,B | A=DIR,B=DIR",
        help="only these annotators (and expect all of them); NAME=DIR pairs give each annotator's directory (pdtb3, pdtb2, conll16)",
    )
    g.add_argument("--annotator", metavar="NAME", help="name of the single annotator of --annotations (pdtb3, pdtb2, conll16)")
    g.add_argument("--group-by", choices=("connective", "type", "sense", "none"), help="sampling unit of PDTB-family inputs")
    g.add_argument("--sense-level", type=int, metavar="N", help="with --group-by sense: levels of the sense hierarchy")
    g.add_argument("--types", type=_csv(), metavar="Explicit,Implicit", help="only these relation types")
    g.add_argument("--glob", metavar="PATTERN", help="which files under an annotator's directory are read")
    g.add_argument("--parses", type=Path, metavar="FILE", help="parses.json for CoNLL system outputs (token indices)")
    g.add_argument("--groups", type=_csv(), metavar="G,H", help="only these groups (connectives)")
    g.add_argument("--workers", type=int, metavar="N", help="processes for parsing (default automatic)")
    g = p.add_argument_group("unitization (the [unitize] table)")
    g.add_argument("--units", type=_csv(UNITS), metavar="char,word")
    g.add_argument("--approaches", type=_csv(APPROACHES), metavar="interval,boundary")
    g.add_argument("--layers", type=_csv(), metavar="Arg1,Arg2")
    g.add_argument("--modes", type=_csv(MODES), metavar="separate,combined,labels")
    g.add_argument("--tokenizer", metavar="SPEC", help="spacy:<lang>, regex or whitespace")
    g.add_argument("--discontinuous", choices=DISCONTINUOUS)
    g.add_argument("--keep-missing", action="store_true", default=None, help="keep documents an annotator has no file for (null column)")
    g.add_argument("--keep-mismatched", action="store_true", default=None, help="keep documents whose annotators have different relation counts")
    g.add_argument("--layers-from", choices=LAYERS_FROM, help="'label': one layer (matrix) per span label")
    g.add_argument("--layout", choices=LAYOUTS, help="unit matrices: a column per annotator (wide) or a row per (unit, annotator) (long)")
    g = p.add_argument_group("flat labels (--format labels; the [input] and [items] tables)")
    g.add_argument("--shape", choices=("long", "wide", "per-annotator", "lists", "dict"), help="how the label table is laid out")
    g.add_argument("--item", metavar="COLUMN", help="the item-id column")
    g.add_argument("--annotator-column", metavar="COLUMN", help="the annotator column (long, lists; per-annotator default: file name)")
    g.add_argument("--label-columns", type=_csv(), metavar="A,B", help="label columns, each a group")
    g.add_argument("--missing", type=_csv(), metavar="NA,-", help="cell values meaning not labelled (besides empty cells)")
    g.add_argument("--layouts", type=_csv(("wide", "long")), metavar="wide,long", help="item-matrix layouts to write (default wide)")
    g.add_argument("--complete", action="store_true", default=None, help="keep only items every annotator labelled")
    p.add_argument("--strict", action="store_true", help="error findings exit with code 3 and write nothing")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="unitize",
        description="Turn multi-annotator annotations into unit matrices for inter-annotator agreement.",
    )
    parser.add_argument("--version", action="version", version=f"unitize {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("convert", help="read, validate, unitize and write an output directory")
    _add_study_options(p)
    p.add_argument("--out", type=Path, metavar="DIR", help="output directory ([output] dir)")
    p = sub.add_parser("validate", help="read and validate only; print the findings, write no matrices")
    _add_study_options(p)
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the findings as JSON lines to FILE")
    p = sub.add_parser(
        "convert-format",
        help="read annotations in one format and write them in another (datt, pdtb3), with the raw texts and a study.toml",
    )
    _add_study_options(p)
    p.add_argument("--to", required=True, metavar="FORMAT", help="target format: datt or pdtb3")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory")
    p = sub.add_parser("info", help="summarize an output directory")
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    p = sub.add_parser("formats", help="list the input formats")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    _add_measure_commands(sub)
    return parser


# --- export and agree (issue 6) ---------------------------------------------------


def _add_measure_commands(sub) -> None:
    from .agree import METRICS
    from .export import FORMATS, POSITIONS

    p = sub.add_parser("export", help="write an output directory in the shape another tool reads")
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--to", required=True, choices=FORMATS, help="export format")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/exports/FORMAT)")
    p.add_argument("--settings", type=_csv(), metavar="S,T", help="only these settings (units/<name>), e.g. word-interval")
    p.add_argument("--groups", type=_csv(), metavar="G,H", help="only these groups")
    p.add_argument("--positions", choices=POSITIONS, default="units", help="pygamma: unit (token) numbers or characters")
    p.add_argument("--json", action="store_true", help="print the files written as JSON")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    p = sub.add_parser("agree", help="measure agreement on an output directory: results table, summary, plots")
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--metric", type=_csv(METRICS), metavar="M,N", help=f"metrics (default all but gamma): {', '.join(METRICS)}")
    p.add_argument("--dest", type=Path, metavar="DIR", help="where to write (default OUT/agreement)")
    p.add_argument("--settings", type=_csv(), metavar="S,T", help="only these settings (units/<name>)")
    p.add_argument("--groups", type=_csv(), metavar="G,H", help="only these groups")
    p.add_argument("--summary-metric", choices=[m for m in METRICS if m != "cohen"], help="metric of the summary table (default alpha-u)")
    p.add_argument("--plot", action="store_true", help="box-and-whisker plots per metric and layer (PNG and SVG; needs unitize[plot])")
    p.add_argument("--gamma-samples", type=int, metavar="N", help="gamma: number of sampled continua (default 30)")
    p.add_argument("--seed", type=int, help="gamma: random seed (default 4577)")
    p.add_argument("--json", action="store_true", help="print the results as JSON lines on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def cmd_export(args: argparse.Namespace) -> int:
    from .agree.backends import MissingDependency
    from .export import export

    try:
        dest, files = export(args.out, args.to, args.dest, settings=args.settings, groups=args.groups, positions=args.positions)
    except MissingDependency as exc:
        print(f"unitize: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps({"dest": str(dest), "files": [vars(f) for f in files]}, ensure_ascii=False, indent=2))
        return EXIT_OK
    left = sum(f.left_out for f in files)
    print(f"{len(files)} files written to {dest} (index: {dest / 'index.csv'})")
    if left:
        print(f"  {left:,} rows left out (incomplete units or zero-length segments); see left_out in index.csv")
    return EXIT_OK


def cmd_agree(args: argparse.Namespace) -> int:
    from .agree import DEFAULT_METRICS, PlotError, agree, as_json_lines
    from .agree.backends import MissingDependency

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
    except (MissingDependency, PlotError) as exc:
        print(f"unitize: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"unitize: error: {exc}", file=sys.stderr)
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


def _flag_base(args: argparse.Namespace) -> Path:
    """Where relative names in outputs start when only flags are given: the inputs' common folder.

    Not the working directory, so the data files do not depend on where the command runs.
    """
    roots = [p.resolve() for p in (args.annotations, args.texts) if p is not None]
    if isinstance(args.annotators, dict):
        roots += list(args.annotators.values())
    if not roots:
        return Path.cwd().resolve()
    common = Path(os.path.commonpath(roots))
    return common.parent if common in roots else common


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from a config file (TOML or RAT) overridden by flags."""
    if args.config and args.rat_config:
        raise ConfigError("give either a TOML configuration or --rat-config, not both")
    if args.rat_config:
        settings = load_rat(args.rat_config)
    elif args.config:
        settings = load_toml(args.config)
    else:
        settings = Settings(base=_flag_base(args))
    inp: dict[str, Any] = {}
    for key in ("annotations", "texts", "parses"):
        value = getattr(args, key)
        if value is not None:
            inp[key] = value.resolve()
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
    for key, flag in (("shape", "shape"), ("item", "item"), ("annotator", "annotator_column"), ("labels", "label_columns"), ("missing", "missing")):
        value = getattr(args, flag)
        if value is not None:
            inp[key] = value
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
        out=args.out.resolve() if getattr(args, "out", None) else None,
        items=items if items != settings.items else None,
    )
    if not args.config and not args.rat_config and args.format is None:
        raise ConfigError("give a study configuration (unitize convert study.toml) or --format and --annotations")
    return settings


def _progress(enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    def progress(items: Iterable, desc: str) -> Iterable:
        total = len(items) if hasattr(items, "__len__") else None
        return tqdm(items, desc=desc, total=total, leave=False, file=sys.stderr, dynamic_ncols=True)

    return progress


def _print_findings(findings, limit: int = 10) -> None:
    errors = [f for f in findings if f.severity == ERROR]
    for f in errors[:limit]:
        where = " ".join(x for x in (f.file, f"record {f.record}" if f.record else None) if x)
        print(f"  error {f.code}: {where}: {f.message} -> {f.action}", file=sys.stderr)
    if len(errors) > limit:
        print(f"  … and {len(errors) - limit} more errors", file=sys.stderr)


def _names(names: list[str], limit: int = 12) -> str:
    """Names joined with commas, shortened for crowd data (thousands of annotators)."""
    return ", ".join(names) if len(names) <= limit else ", ".join(names[:limit]) + f", … ({len(names) - limit} more)"
def _items_summary(data: dict[str, Any]) -> None:
    names = data["annotators"]
    shown = ", ".join(names[:10]) + (f", … ({len(names) - 10} more)" if len(names) > 10 else "")
    print(f"{data['groups']} groups, {len(names)} annotators ({shown})")
    for name, rows in data.get("unit_rows", {}).items():
        print(f"  units/{name:<24} {rows:>12,} rows")
    for group, n in data["items"].items():
        extra = f", {n['reached_by_any']} reached by some annotator" if "reached_by_any" in n else ""
        print(f"  {group}: {n['items']:,} items, {n['complete']:,} labelled by every annotator, {n['kept']:,} kept{extra}")


def _human_summary(data: dict[str, Any], out: Path | None) -> None:
    f = data["findings"]
    if data.get("kind") == "items":
        _items_summary(data)
        print(f"  findings: {f['error']} errors, {f['warning']} warnings, {f['info']} info")
        for code, n in data["findings_by_code"].items():
            print(f"    {code:<26} {n:>6}")
        if out is not None:
            print(f"  output: {out}  (report: {out / 'report.jsonl'})")
        return
    print(
        f"{data['documents']} documents, {data['groups']} groups "
        f"({data['groups_with_documents']} with documents), {len(data['annotators'])} annotators "
        f"({_names(data['annotators'])}), layers {_names(data['layers'])}"
    )
    for name, rows in data.get("unit_rows", {}).items():
        print(f"  units/{name:<24} {rows:>12,} rows")
    print("  segments: " + ", ".join(f"{u} {n:,}" for u, n in data["segments"].items()))
    print(f"  findings: {f['error']} errors, {f['warning']} warnings, {f['info']} info")
    for code, n in data["findings_by_code"].items():
        print(f"    {code:<26} {n:>6}")
    if out is not None:
        print(f"  output: {out}  (report: {out / 'report.jsonl'})")


def cmd_convert(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if settings.out is None:
        raise ConfigError("no output directory: set [output] dir in the configuration or give --out")
    progress = _progress(not args.quiet and not args.json and sys.stderr.isatty())
    unitized, manifest = convert(settings, strict=args.strict, progress=progress)
    if manifest is None:
        errors = unitized.errors
        if args.json:
            print(json.dumps({"status": "failed", "errors": [e.as_dict() for e in errors]}, ensure_ascii=False, indent=2))
        else:
            print(f"unitize: {len(errors)} input error(s) under --strict; nothing written", file=sys.stderr)
            _print_findings(unitized.findings)
        return EXIT_STRICT
    data = {**manifest["summary"], "out": str(settings.out), "accounting": manifest["accounting"]}
    if args.json:
        print(json.dumps({"status": "ok", **data}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        _human_summary(manifest["summary"], settings.out)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    progress = _progress(not args.quiet and not args.json and sys.stderr.isatty())
    unitized = unitize(read_corpus(settings, progress), settings, progress)
    if args.report:
        atomic_write_text(args.report, "".join(json.dumps(f.as_dict(), ensure_ascii=False) + "\n" for f in unitized.findings))
    data = summary(unitized)
    if args.json:
        print(json.dumps({**data, "accounting": unitized.accounting, "report": [f.as_dict() for f in unitized.findings]}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        _human_summary(data, None)
        _print_findings(unitized.findings)
    return EXIT_STRICT if args.strict and unitized.errors else EXIT_OK


def cmd_convert_format(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    progress = _progress(not args.quiet and not args.json and sys.stderr.isatty())
    corpus, findings, manifest = convert_format(settings, args.to, args.out.resolve(), strict=args.strict, progress=progress)
    if manifest is None:
        errors = [f for f in findings if f.severity == ERROR]
        if args.json:
            print(json.dumps({"status": "failed", "errors": [e.as_dict() for e in errors]}, ensure_ascii=False, indent=2))
        else:
            print(f"unitize: {len(errors)} input error(s) under --strict; nothing written", file=sys.stderr)
            _print_findings(findings)
        return EXIT_STRICT
    if args.json:
        print(json.dumps({"status": "ok", "out": str(args.out), **manifest["summary"], "accounting": manifest["accounting"]}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        _conversion_summary(manifest, args.out)
        _print_findings(findings)
    return EXIT_OK


def _conversion_summary(manifest: dict[str, Any], out: Path) -> None:
    s, a = manifest["summary"], manifest["accounting"]
    f = s["findings"]
    print(f"{s['format']} -> {s['to']}: {s['documents']} documents, {len(s['annotators'])} annotators ({', '.join(s['annotators'])})")
    print(
        f"  {a['relations_written']:,} relations, {a['spans']['written']:,} of {a['spans']['read']:,} spans written; "
        + ", ".join(f"{n} {role} files" for role, n in a["files"].items())
    )
    print(f"  findings: {f['error']} errors, {f['warning']} warnings, {f['info']} info")
    print(f"  output: {out}  (read it back: unitize convert {out / 'study.toml'} --out DIR)")


def cmd_info(args: argparse.Namespace) -> int:
    manifest = read_manifest(args.out)
    if args.json:
        print(json.dumps({k: manifest[k] for k in ("tool", "settings", "summary", "accounting", "outputs")}, ensure_ascii=False, indent=2))
        return EXIT_OK
    if manifest.get("kind") == "conversion":
        _conversion_summary(manifest, args.out)
        return EXIT_OK
    s = manifest["settings"]
    print(f"{args.out}: unitize {manifest['tool']['version']}, format {s['format']}")
    if manifest["summary"].get("kind") != "items":  # flat labels have no units, layers or tokenizer
        print("  settings: " + ", ".join(setting_name(u, a, m) for u, a in s["pairs"] for m in s["modes"]))
        print(f"  layers {', '.join(s['layers'])}; tokenizer {s['tokenizer']}; discontinuous {s['discontinuous']}")
    _human_summary(manifest["summary"], None)
    print(f"  inputs: {len(manifest['inputs'])} files; outputs:")
    for o in manifest["outputs"]:
        rows = f"{o['rows']:,} rows" if o["rows"] is not None else ""
        print(f"    {o['path']:<40} {rows:>16} {o['bytes']:>12,} bytes")
    return EXIT_OK


def cmd_formats(args: argparse.Namespace) -> int:
    for name in available():
        adapter = get_adapter(name)
        print(f"{name}: {adapter.description}")
        for key, help_text in adapter.options.items():
            print(f"    {key:<18} {help_text}")
    return EXIT_OK


COMMANDS = {
    "convert": cmd_convert,
    "convert-format": cmd_convert_format,
    "validate": cmd_validate,
    "info": cmd_info,
    "formats": cmd_formats,
}
COMMANDS.update({"export": cmd_export, "agree": cmd_agree})


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return COMMANDS[args.command](args)
    except _USER_ERRORS as exc:
        print(f"unitize: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file-system problem (disk full, permissions), not a bug
        target = f": {exc.filename}" if exc.filename else ""
        print(f"unitize: error: {exc.strerror or exc}{target}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("unitize: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so plainly, no traceback unless asked
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(
            f"unitize: internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in unitize. Rerun with --debug for the traceback and please report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
