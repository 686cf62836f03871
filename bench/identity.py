#!/usr/bin/env python3
"""Check that two versions of unitize write byte-identical data files on real corpora.

Runs ``unitize convert`` on each case with the working tree and with a git ref (exported
with ``git archive`` into a temporary folder and put first on ``PYTHONPATH``), then compares
every file under ``segments/`` and ``units/``, ``documents.parquet`` and ``report.jsonl``
byte for byte (the manifest differs by its run section and is not compared). Exit code 1
when a file differs or is missing on one side.

    python bench/identity.py --ref main --python .venv/bin/python             # every case
    python bench/identity.py --ref HEAD~3 --cases tdb-mini,bratiaa --keep /tmp/ident

Cases (the shared corpora beside the repository, ``../shared/corpora``; a case whose
corpus is absent is skipped and said so): ``tdb-mini`` (the bundled DATT example:
extend, keep and drop, every mode), ``ted-tr`` and ``ted-en`` (TED-MDB PDTB-3, layers
Arg1, Arg2, Conn, char and word units, every mode), ``bratiaa`` (the bratiaa brat
project, separate and labels), ``toxic`` (ToxicSpans as a span table, 3,579 workers,
long layout).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO.parent / "shared" / "corpora"
if not CORPORA.is_dir():
    CORPORA = Path("/work/shared/corpora")
MODES = ["--modes", "separate,combined,labels"]
TOXIC = CORPORA / "toxic-spans"


def _toxic_study(folder: Path) -> list[str]:
    study = folder / "toxic.toml"
    study.write_text(
        f'[input]\nformat = "span-table"\nannotations = "{TOXIC}/spans.csv"\ntexts = "{TOXIC}/comments.csv"\n'
        f'roster = "{TOXIC}/annotations.csv"\n'
        'columns = {doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", '
        'label = "type", begin = "start", end = "end"}\n'
        '[unitize]\nunits = ["char", "word"]\napproaches = ["interval"]\ntokenizer = "whitespace"\n'
        'modes = ["separate", "labels"]\n',
        encoding="utf-8",
    )
    return [str(study)]


def _ted(language: str, lang: str) -> tuple[Path, list[str]]:
    root = CORPORA / "ted-mdb" / language
    return root, ["--format", "pdtb3", "--annotations", str(root / "ann" / "01"), "--texts", str(root / "raw" / "01"),
                  "--layers", "Arg1,Arg2,Conn", "--units", "char,word", "--tokenizer", f"spacy:{lang}", *MODES]


def cases(folder: Path) -> dict[str, tuple[Path, list[str]]]:
    """name -> (what must exist, convert arguments before --out)."""
    mini = REPO / "unitize" / "examples" / "tdb-mini" / "study.toml"
    brat = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    out = {f"tdb-mini-{d}": (mini, [str(mini), "--discontinuous", d, *MODES]) for d in ("extend", "keep", "drop")}
    out["ted-tr"] = _ted("Turkish", "tr")
    out["ted-en"] = _ted("English", "en")
    out["bratiaa"] = (brat, ["--format", "brat", "--annotations", str(brat), "--units", "char,word",
                             "--tokenizer", "spacy:es", "--modes", "separate,labels"])
    out["toxic"] = (TOXIC, _toxic_study(folder) if TOXIC.is_dir() else [])
    return out


def digests(out: Path) -> dict[str, str]:
    files = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and (rel.split("/")[0] in ("segments", "units") or rel in ("documents.parquet", "report.jsonl")):
            files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


#: runs the CLI from the folder given first; an editable install's import hook (which would
#: find the working tree's unitize whatever PYTHONPATH says) is taken out of sys.meta_path
LAUNCH = (
    "import sys; root = sys.argv.pop(1); "
    "sys.meta_path[:] = [f for f in sys.meta_path if not str(getattr(f, '__module__', '')).startswith('__editable__')]; "
    "sys.path.insert(0, root); import unitize; "
    "assert unitize.__file__.startswith(root), unitize.__file__; "
    "from unitize.cli import main; sys.exit(main())"
)


def convert(python: str, root: str, args: list[str], out: Path) -> float:
    env = dict(os.environ, PYTHONHASHSEED="0")
    t0 = time.perf_counter()
    r = subprocess.run([python, "-c", LAUNCH, root, "convert", *args, "--out", str(out), "-q"], env=env,
                       capture_output=True, text=True, cwd=str(REPO))
    if r.returncode not in (0, 1):  # 1: written with warnings
        raise SystemExit(f"convert failed ({r.returncode}): {' '.join(args)}\n{r.stderr[-3000:]}")
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="git ref of the version to compare with (e.g. main)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with unitize's dependencies")
    ap.add_argument("--cases", default=None, help="comma-separated subset of the cases")
    ap.add_argument("--keep", type=Path, default=None, help="keep the outputs in this folder")
    args = ap.parse_args(argv)
    python = str(Path(args.python).absolute()) if "/" in args.python else args.python
    folder = Path(args.keep or tempfile.mkdtemp(prefix="unitize-identity-"))
    folder.mkdir(parents=True, exist_ok=True)
    ref_tree = folder / "ref-tree"
    shutil.rmtree(ref_tree, ignore_errors=True)
    ref_tree.mkdir()
    archive = subprocess.run(["git", "archive", args.ref], cwd=str(REPO), capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(ref_tree)], input=archive, check=True)
    all_cases = cases(folder)
    chosen = args.cases.split(",") if args.cases else list(all_cases)
    failed = 0
    for name in chosen:
        needed, conv = all_cases[name]
        if not needed.exists():
            print(f"{name:16} skipped: {needed} not found")
            continue
        a, b = folder / name / "ref", folder / name / "tree"
        shutil.rmtree(folder / name, ignore_errors=True)
        ta = convert(python, str(ref_tree), conv, a)
        tb = convert(python, str(REPO), conv, b)
        da, db = digests(a), digests(b)
        differ = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
        failed += bool(differ)
        status = "identical" if not differ else "DIFFER: " + ", ".join(differ[:8])
        print(f"{name:16} {len(da):3} files {status}  ({args.ref} {ta:.1f} s, tree {tb:.1f} s)", flush=True)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
