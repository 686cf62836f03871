"""``unitize formats``: the registered input formats; with ``--format NAME`` its options, flags and an example."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import EXIT_OK

if TYPE_CHECKING:
    from ..adapters import Adapter

HELP = "list the input formats; --format NAME: its options with help and an example"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", metavar="NAME", help="show this format's options: study key, flag, default, help")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def example(adapter: Adapter) -> list[str]:
    """Two command lines: init on a folder, and convert from flags alone."""
    from .flags import flag

    needed = [key for key in ("annotations", "texts", "roster") if key in adapter.options]
    words = [f"{flag(key)} {adapter.options[key].example or key}" for key in needed]
    return [f"unitize init --format {adapter.name} DIR", " ".join(["unitize convert --format", adapter.name, *words, "--out out"])]


def details(adapter: Adapter) -> list[str]:
    from ..config import dump_key, dump_value
    from .flags import describe, flag

    lines = [f"{adapter.name}: {adapter.description}", "", "[input] options (study key = default or example; flag):"]
    for key, option in adapter.options.items():
        value = option.default if option.default is not None else option.example
        toml = f"{dump_key(key)} = {dump_value(value)}" if value is not None else f"{dump_key(key)} = ..."
        lines.append(f"  {toml:<44} {flag(key)} {option.metavar}")
        lines.append(f"      {describe(option)}" + (" (the value shown is an example)" if option.default is None and option.example is not None else ""))
    lines += ["", "example:"] + [f"  {line}" for line in example(adapter)]
    return lines


def run(args: argparse.Namespace) -> int:
    from ..adapters import available, get_adapter
    from .flags import describe, flag

    if args.format:
        print("\n".join(details(get_adapter(args.format))))
        return EXIT_OK
    for name in available():
        adapter = get_adapter(name)
        print(f"{name}: {adapter.description}")
        for key, option in adapter.options.items():
            print(f"    {key:<18} {flag(key):<22} {describe(option)}")
    print("\nunitize formats --format NAME: a format's options with examples; unitize init --format NAME DIR: a study file for your data")
    return EXIT_OK
