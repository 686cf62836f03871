"""``unitize formats``: the registered input formats and their options."""

from __future__ import annotations

import argparse

from ..adapters import available, get_adapter
from .common import EXIT_OK

HELP = "list the input formats"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    for name in available():
        adapter = get_adapter(name)
        print(f"{name}: {adapter.description}")
        for key, help_text in adapter.options.items():
            print(f"    {key:<18} {help_text}")
    return EXIT_OK
