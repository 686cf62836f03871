"""``unitize info``: summarize an output directory from its manifest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import EXIT_OK, conversion_summary, human_summary

HELP = "summarize an output directory"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="an output directory of `unitize convert`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from ..dataset.settings import format_version
    from ..output import read_manifest
    from ..schema import setting_name

    manifest = read_manifest(args.out)
    if manifest.get("kind") != "conversion":
        format_version(manifest, args.out)  # a newer format is refused, naming the upgrade
    if args.json:
        print(json.dumps({k: manifest[k] for k in ("tool", "settings", "summary", "accounting", "outputs")}, ensure_ascii=False, indent=2))
        return EXIT_OK
    if manifest.get("kind") == "conversion":
        conversion_summary(manifest, args.out)
        return EXIT_OK
    s = manifest["settings"]
    print(f"{args.out}: unitize {manifest['tool']['version']}, format {s['format']}")
    if manifest["summary"].get("kind") != "items":  # flat labels have no units, layers or tokenizer
        print("  settings: " + ", ".join(setting_name(u, a, m) for u, a in s["pairs"] for m in s["modes"]))
        print(f"  layers {', '.join(s['layers'])}; tokenizer {s['tokenizer']}; discontinuous {s['discontinuous']}")
    human_summary(manifest["summary"], None, manifest["accounting"])
    print(f"  inputs: {len(manifest['inputs'])} files; outputs:")
    for o in manifest["outputs"]:
        rows = f"{o['rows']:,} rows" if o["rows"] is not None else ""
        print(f"    {o['path']:<40} {rows:>16} {o['bytes']:>12,} bytes")
    return EXIT_OK
