"""What the commands share: exit codes, list arguments, the executor option, output on screen.

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


class Extend(argparse.Action):
    """A comma list given once or repeated (``--metric a,b --metric c``): the lists joined; an item named twice is refused."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        before = list(getattr(namespace, self.dest) or [])
        twice = [v for v in values if v in before]
        if twice:
            parser.error(f"{option_string} names {twice[0]!r} twice")
        setattr(namespace, self.dest, before + list(values))


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


EXECUTOR_HELP = (
    "where the work runs: local (default: this process), processes[:N] (N worker processes, default the cores), "
    "dask[:ADDRESS] (a running Dask scheduler, e.g. dask:tcp://10.0.0.5:8786, or a local cluster; needs "
    "pip install 'unitize[dask]'); the results are the same with every executor. Example: --executor processes:2"
)


def add_executor_option(p: argparse.ArgumentParser, *, config: bool = False) -> None:
    """``--executor SPEC`` (:mod:`unitize.runtime.executors`); ``config``: the study's [run] executor is the default."""
    p.add_argument("--executor", metavar="SPEC", help=EXECUTOR_HELP + ("; default [run] executor" if config else ""))


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
