"""Flags made from the formats' declared options: every ``[input]`` key is a flag.

A key ``columns`` becomes ``--columns``, ``token_column`` ``--token-column``. The
flags carry text; the chosen format's :class:`~unitize.config.Option` turns it into
a value (``A,B`` a list, ``KEY=VALUE,...`` a table, TOML for structured values),
so one flag serves formats that type a key differently (``annotator_columns`` is
a list for ``labels``, a table of columns for ``conll-bio``). Keys that had
hand-written flags before keep them (:data:`FIXED`).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..adapters import Adapter, all_options
from ..config import ConfigError, Option

#: [input] keys served by the hand-written flags of :func:`~unitize.cli.study_flags.add_study_options`
FIXED = {
    "annotations": ("--annotations",),
    "texts": ("--texts",),
    "encoding": ("--encoding",),
    "encoding_fallback": ("--encoding-fallback",),
    "filename_pattern": ("--filename-pattern",),
    "annotators": ("--annotators",),
    "annotator": ("--annotator", "--annotator-column"),
    "group_by": ("--group-by",),
    "sense_level": ("--sense-level",),
    "types": ("--types",),
    "glob": ("--glob",),
    "parses": ("--parses",),
    "groups": ("--groups",),
    "workers": ("--workers",),
    "shape": ("--shape",),
    "item": ("--item",),
    "labels": ("--label-columns",),
    "missing": ("--missing",),
}
_DEST = "input:"


def flag(key: str) -> str:
    """The flag of an [input] key."""
    return FIXED.get(key, (f"--{key.replace('_', '-')}",))[0]


def show(value: Any) -> str:
    """A value as a flag would spell it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(show, value))
    if isinstance(value, dict):
        return ",".join(f"{k}={show(v)}" for k, v in value.items())
    return str(value)


def describe(option: Option) -> str:
    """One line of help: the declared help, then the default."""
    if option.default is None or option.default in ((), []):
        return option.help
    return f"{option.help} (default {show(option.default)})"


def add_generated(parser: argparse.ArgumentParser, title: str) -> None:
    """Add a flag for every [input] key without a hand-written one, in a group of its own."""
    group = parser.add_argument_group(title)
    taken = set(parser._option_string_actions)  # noqa: SLF001 (a clash would make argparse raise)
    for key, by_format in sorted(all_options().items()):
        name = flag(key)
        if key in FIXED or name in taken:
            continue  # a plugin's key named like another flag: reachable as --set input.<key>=...
        kwargs: dict[str, Any] = {"dest": _DEST + key, "metavar": " | ".join(dict.fromkeys(o.metavar for o in by_format.values()))}
        if all(o.type == "bool" for o in by_format.values()):
            kwargs.update(nargs="?", const="true")
        group.add_argument(name, help=_shared_help(by_format), **kwargs)


def _shared_help(by_format: dict[str, Option]) -> str:
    """Help for a key several formats declare: one text when they agree on the type, else each format's."""
    options = list(by_format.values())
    if len({o.type for o in options}) > 1:
        return "; ".join(f"{name}: {describe(o)}" for name, o in by_format.items())
    first = options[0]
    text = describe(first) if len({show(o.default) for o in options}) == 1 else f"{first.help} (default: per format)"
    return f"{text} [{', '.join(by_format)}]"


def generated(args: argparse.Namespace) -> dict[str, str]:
    """The generated flags given on the command line: [input] key -> its text."""
    return {name[len(_DEST) :]: value for name, value in vars(args).items() if name.startswith(_DEST) and value is not None}


def check_format(keys: list[str], adapter: Adapter) -> None:
    """Refuse flags for [input] keys the format does not have, naming its options."""
    foreign = [key for key in keys if key not in adapter.options]
    if foreign:
        own = ", ".join(flag(key) for key in adapter.options)
        raise ConfigError(
            f"{', '.join(flag(k) for k in foreign)}: not an option of format {adapter.name!r}; its options are {own} "
            f"(unitize formats --format {adapter.name})"
        )


def parse(texts: dict[str, str], adapter: Adapter) -> dict[str, Any]:
    """The values of generated flags, each read by the format's declaration of its key."""
    check_format(list(texts), adapter)
    values = {}
    for key, text in texts.items():
        try:
            values[key] = adapter.options[key].parse(text)
        except ConfigError as exc:
            raise ConfigError(f"{flag(key)} {text!r}: {exc} (format {adapter.name}: {adapter.options[key].help})") from None
    return values
