"""The flags of a study, shared by convert, validate, convert-format and init, and the settings they give.

:func:`add_study_options` declares every key of ``[input]`` (the formats' own keys generated from their
declarations), ``[unitize]`` and ``[items]``, and ``--set``; :func:`settings_from_args` reads a study file
(TOML or RAT's), changed by ``--set`` and overridden by the flags. Importing it loads none of the machinery.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import Extend, csv_list

if TYPE_CHECKING:
    from ..adapters import Adapter
    from ..config import Settings


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
    g.add_argument("--types", action=Extend, type=csv_list(), metavar="Explicit,Implicit", help="only these relation types")
    g.add_argument("--glob", metavar="PATTERN", help="which files under an annotator's directory are read")
    g.add_argument("--parses", type=Path, metavar="FILE", help="parses.json for CoNLL system outputs (token indices)")
    g.add_argument("--groups", action=Extend, type=csv_list(), metavar="G,H", help="only these groups (connectives)")
    g.add_argument("--workers", type=int, metavar="N", help="processes for parsing (default automatic)")


def _unitize_options(g: Any) -> None:
    from ..config import APPROACHES, ASSIGNMENTS, DISCONTINUOUS, LAYERS_FROM, LAYOUTS, MODES, UNITIZE_OPTIONS, UNITS
    from . import flags

    def _unitize_help(key: str) -> str:
        return flags.describe(UNITIZE_OPTIONS[key])

    g.add_argument("--units", action=Extend, type=csv_list(UNITS), metavar="char,word", help=_unitize_help("units"))
    g.add_argument("--approaches", action=Extend, type=csv_list(APPROACHES), metavar="interval,boundary", help=_unitize_help("approaches"))
    g.add_argument("--layers", action=Extend, type=csv_list(), metavar="Arg1,Arg2", help=_unitize_help("layers"))
    g.add_argument("--modes", action=Extend, type=csv_list(MODES), metavar="separate,combined,labels", help=_unitize_help("modes"))
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
    g.add_argument("--label-columns", action=Extend, type=csv_list(), metavar="A,B", help="label columns, each a group")
    g.add_argument("--missing", action=Extend, type=csv_list(), metavar="NA,-", help="cell values meaning not labelled (besides empty cells)")
    g.add_argument("--layouts", action=Extend, type=csv_list(item_layouts), metavar=",".join(item_layouts), help=flags.describe(ITEMS_OPTIONS["layouts"]))
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
        if args.format is not None and "input" in data:  # --set input.KEY=... beside --format: the flag names the format
            data["input"].setdefault("format", args.format)
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
