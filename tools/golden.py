#!/usr/bin/env python3
"""Golden digests of the bundled examples' outputs: what a refactoring must leave unchanged.

For every ``unitize/examples/<name>/study.toml`` this converts the study, measures the
default agreement metrics, and digests what the run wrote: every unit-matrix part, the
segments, documents, universe and tokens tables, ``report.jsonl``, the manifest (less what
depends on the time, the host, the library versions or the Parquet encoder) and
``agreement/results.parquet``. A table's digest is taken over its schema (metadata
included) and its rows, not over the file's bytes, so a newer pyarrow that encodes the
same table differently still matches; floats of the results are rounded to 12
significant digits (the last bits of a BLAS sum may differ between machines).

    python tools/golden.py --check          # compare with tests/golden/*.json (what the test does)
    python tools/golden.py --update         # rewrite tests/golden/*.json (say why in the commit)
    python tools/golden.py --keep DIR       # also keep the output directories in DIR

``tests/test_golden.py`` runs the check.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "unitize" / "examples"
GOLDEN = REPO / "tests" / "golden"

#: manifest keys that depend on the run, the machine or the installed libraries, never on the data
VOLATILE = ("run", "libraries", "tool")


def _canonical(value: Any, round_floats: bool) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float(f"{value:.12g}") if round_floats else value
    if isinstance(value, dict):
        return {str(k): _canonical(v, round_floats) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, round_floats) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def table_digest(path: Path, round_floats: bool = False) -> tuple[int, str]:
    """(rows, digest) of a Parquet file's schema (with metadata) and rows."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    schema = [(f.name, str(f.type), f.nullable) for f in table.schema]
    # unitize.output (agree's results) digests the unit files' bytes, which a Parquet library version may change
    metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items() if k not in (b"ARROW:schema", b"unitize.output")}
    columns = {name: _canonical(table.column(name).to_pylist(), round_floats) for name in table.column_names}
    return table.num_rows, _digest({"schema": schema, "metadata": metadata, "columns": columns})


def manifest_digest(path: Path) -> str:
    """The manifest less its volatile parts; outputs keep their paths and row counts, not their hashes."""
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for key in VOLATILE:
        manifest.pop(key, None)
    settings = manifest.get("settings", {})
    settings.pop("out", None)  # where this run wrote: a temporary directory
    if settings.get("source"):
        settings["source"] = Path(settings["source"]).name
    manifest["outputs"] = [{k: v for k, v in o.items() if k not in ("sha256", "bytes")} for o in manifest.get("outputs", [])]
    return _digest(manifest)


def digests(out: Path) -> dict[str, Any]:
    """Every data file of an output directory (and its agreement results) → rows and digest."""
    files: dict[str, Any] = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if not path.is_file() or rel.startswith(("report/", "exports/")) or "/plots/" in rel:
            continue
        if path.suffix == ".parquet":
            rows, digest = table_digest(path, round_floats=rel.startswith("agreement/"))
            files[rel] = {"rows": rows, "digest": digest}
        elif rel == "manifest.json":
            files[rel] = {"digest": manifest_digest(path)}
        elif rel == "report.jsonl":
            files[rel] = {"rows": len(path.read_text(encoding="utf-8").splitlines()),
                          "digest": hashlib.sha256(path.read_bytes()).hexdigest()[:32]}
    return files


def run_example(name: str, dest: Path) -> Path:
    """Convert one bundled example into ``dest/<name>`` and measure the default metrics there."""
    from unitize.agree import agree
    from unitize.config import load_toml, override
    from unitize.run import convert

    out = dest / name
    settings = override(load_toml(EXAMPLES / name / "study.toml"), out=out)
    convert(settings)
    agree(out)
    return out


def examples() -> list[str]:
    return sorted(p.parent.name for p in EXAMPLES.glob("*/study.toml"))


def compare(name: str, found: dict[str, Any]) -> list[str]:
    """What differs from the golden file of one example (empty: nothing)."""
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))["files"]
    out = []
    for rel in sorted(set(golden) | set(found)):
        if rel not in found:
            out.append(f"{name}: {rel} is no longer written")
        elif rel not in golden:
            out.append(f"{name}: {rel} is new")
        elif found[rel] != golden[rel]:
            out.append(f"{name}: {rel} differs: {golden[rel]} → {found[rel]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="compare with tests/golden/*.json")
    what.add_argument("--update", action="store_true", help="rewrite tests/golden/*.json")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the output directories in DIR")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="only these examples")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="unitize-golden-"))
    problems: list[str] = []
    try:
        for name in args.only or examples():
            out = run_example(name, work)
            found = digests(out)
            if args.update:
                GOLDEN.mkdir(parents=True, exist_ok=True)
                (GOLDEN / f"{name}.json").write_text(json.dumps({"example": name, "files": found}, indent=1, sort_keys=True) + "\n",
                                                     encoding="utf-8")
                print(f"{name}: {len(found)} files digested")
            else:
                problems += compare(name, found)
            if args.keep:
                shutil.copytree(out, args.keep / name, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in problems:
        print(line)
    if args.check:
        print("golden: identical" if not problems else f"golden: {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
