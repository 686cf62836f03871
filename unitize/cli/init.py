"""``unitize init``: look at the annotations and write a commented study.toml for their format.

``unitize init --format NAME [DIR]``: DIR is the folder of the data (default the
current folder); the study is written to ``DIR/study.toml`` (or ``--out-file``) and
its paths are relative to the study's folder. The annotations are ``--annotations``
when given, else the first of ``DIR/annotations``, ``DIR/ann``, ``DIR/gold`` that exists,
else DIR itself (the raw texts likewise ``DIR/texts``, ``DIR/raw``, ``DIR/txt``); formats that can guess more from the files
(span tables, label files) fill in the rest. Every other study flag of ``convert``
given here is written into the study.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_OK, EXIT_USAGE, make_progress, print_error
from .study_flags import add_study_options, input_flags

if TYPE_CHECKING:
    from ..adapters import Adapter
    from .study_template import Inspection

HELP = "look at your annotations and write a commented study.toml for them (then: unitize convert)"
EXAMPLES = """examples:
  unitize init --format brat path/to/project        # writes path/to/project/study.toml
  unitize init --format span-table crowd/           # finds the spans, texts and roster tables and their columns
  unitize init --format labels labels/ --out-file study.toml --tokenizer regex
"""
#: [unitize] and [items] keys -> the flag attributes that set them
_UNITIZE_FLAGS = ("units", "approaches", "layers", "modes", "tokenizer", "discontinuous", "keep_missing", "keep_mismatched", "layers_from", "layout")
_ITEMS_FLAGS = ("layouts", "complete")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = "%(prog)s --format NAME [DIR] [--out-file FILE] [--force] [any option of convert]"
    p.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the folder of your data; study.toml is written here (default: the current folder). "
        "Annotations: --annotations, else DIR/annotations (or ann/, gold/) if it exists, else DIR; texts DIR/texts (or raw/, txt/)",
    )
    p.add_argument("--out-file", type=Path, metavar="FILE", help="write the study here instead of DIR/study.toml")
    p.add_argument("--force", action="store_true", help="overwrite an existing study file")
    add_study_options(p, config=False, run=False)
    p.add_argument("--quiet", "-q", action="store_true", help="print only the path of the study file")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def _given(args: argparse.Namespace, adapter: Adapter, study: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], Path | None]:
    """[input], [unitize] and [items] values given as flags or --set, and [output] dir."""
    from ..config import absolute, apply_set
    from . import flags

    inp = input_flags(args, adapter)
    uni = {key: getattr(args, key) for key in _UNITIZE_FLAGS if getattr(args, key) is not None}
    items = {key: getattr(args, key) for key in _ITEMS_FLAGS if getattr(args, key) is not None}
    data: dict[str, Any] = {}
    for assignment in args.set or []:
        apply_set(data, assignment)
    flags.check_format(list(data.get("input", {})), adapter)
    for key, value in data.get("input", {}).items():  # written as in the study file: paths relative to it
        inp[key] = absolute(value, study.parent) if adapter.options[key].type == "path" and isinstance(value, str) else value
    uni |= data.get("unitize", {})
    items |= data.get("items", {})
    out = data.get("output", {}).get("dir")
    return inp, uni, items, absolute(out, study.parent) if isinstance(out, str) else None


#: folders of DIR taken for the annotations and for the raw texts, first found first (PDTB-3 and TED-MDB: ann/ or gold/, raw/)
ANNOTATION_FOLDERS = ("annotations", "ann", "gold")
TEXT_FOLDERS = ("texts", "raw", "txt")


def _first_folder(folder: Path, names: tuple[str, ...]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_dir()), None)


def _locate(adapter: Adapter, folder: Path, given: dict[str, Any]) -> dict[str, Any]:
    """The annotations (and texts) by the folder convention, then the format's own guesses."""
    given = dict(given)
    data = _first_folder(folder, ANNOTATION_FOLDERS) or folder
    texts = _first_folder(folder, TEXT_FOLDERS)
    if "texts" in adapter.options and "texts" not in given and texts is not None:
        given["texts"] = texts
    if adapter.suggest is not None:
        where = Path(given["annotations"]) if "annotations" in given else data
        given |= {k: v for k, v in adapter.suggest(where, given).items() if k not in given}
    if "annotations" in adapter.options and "annotations" not in given:
        given["annotations"] = data
    return given


def _inputs(value: Any) -> list[Path]:
    if isinstance(value, Path):
        return [value]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, Path)]
    return []


def _output_dir(study: Path, given: dict[str, Any]) -> Path:
    """``out`` beside the study, unless that is inside a folder the format reads: then a sibling ``<folder>-out``."""
    out = study.parent / "out"
    folders = [p for v in given.values() for p in _inputs(v) if p.is_dir()]
    if any(out == f or f in out.parents for f in folders):
        return study.parent.parent / f"{study.parent.name}-out"
    return out


def _read(adapter: Adapter, given: dict[str, Any], study: Path, quiet: bool) -> Inspection:
    """Read the data once with the format's adapter; what it found, or why it could not."""
    from ..config import ConfigError, Settings, absolute
    from ..run import read_corpus
    from .study_template import Inspection, inspect

    progress = make_progress(not quiet and sys.stderr.isatty())
    try:
        corpus = read_corpus(Settings(format=adapter.name, input=given, base=study.parent), progress)
    except (OSError, ValueError) as exc:  # every UnitizeError is a ValueError; an adapter may raise a plain one on odd data
        return Inspection(error=str(exc))
    if any(absolute(f.path, study.parent) == study for f in corpus.inputs):
        raise ConfigError(
            f"format {adapter.name} would read {study.name} as annotations in {study.parent}: "
            "put the annotation files in a folder of their own (DIR/annotations) or write the study elsewhere (--out-file)"
        )
    return inspect(corpus)


#: the last line of a study written from data init could not read: init may rewrite it until it is edited
_DRAFT = "# (a draft: the data could not be read; `unitize init` rewrites this file until you edit it) "


def _seal(text: str) -> str:
    """A draft study: ``text`` with a line holding the hash of the rest, so that init knows it unedited."""
    return text + _DRAFT + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] + "\n"


def _unedited_draft(study: Path) -> bool:
    """Whether ``study`` is a draft init wrote (``_seal``) that nobody has edited since."""
    try:
        text = study.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    body, _, last = text.rstrip("\n").rpartition("\n")
    return last.startswith(_DRAFT) and _seal(body + "\n") == text


def _shell(path: Path) -> str:
    text = os.path.relpath(path)
    return text if not any(c in text for c in " '\"$") else "'" + text.replace("'", "'\\''") + "'"


def run(args: argparse.Namespace) -> int:
    from ..adapters import available, get_adapter
    from ..config import CROWD_ABOVE, ConfigError, absolute
    from ..output import atomic_write_text
    from .study_template import render

    if not args.format:
        raise ConfigError(f"init needs --format; one of: {', '.join(available())} (unitize formats describes them)")
    adapter = get_adapter(args.format)
    folder = absolute(args.dir)
    if folder.is_file() and "annotations" in adapter.options and getattr(args, "annotations", None) is None:
        args.annotations = folder  # one file (a ZIP export, a JSONL, a CSV): its annotations; the study goes beside it
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"{args.dir} is not a folder; give the folder of your data (unitize init --format {adapter.name} DIR)")
    study = absolute(args.out_file or folder / "study.toml")
    if study.exists() and not args.force and not _unedited_draft(study):
        raise ConfigError(f"{_shell(study)} exists; give --force to overwrite it, or --out-file to write another file")
    inp, uni, items, out = _given(args, adapter, study)
    inp = _locate(adapter, folder, inp)
    placeholder = not study.exists()
    if placeholder:  # present while reading, so that a format that would read it is caught
        study.parent.mkdir(parents=True, exist_ok=True)
        study.touch()
    try:
        found = _read(adapter, inp, study, args.quiet)
        out = out or _output_dir(study, inp)
        steps = [f"unitize convert {_shell(study)}", f"unitize agree {_shell(out)}"]
        if found.kind != "items" and len(found.annotators) > CROWD_ABOVE:  # crowd data: alpha-U (the default summary) is NaN
            steps[1] += " --summary-metric alpha"
        fix = f"fix [input] below, then check it with: unitize validate {_shell(study)}"
        text = render(
            adapter,
            found,
            folder=study.parent,
            given_input=inp,
            given_unitize=uni,
            given_items=items,
            out=out,
            source=_shell(folder),
            next_steps=[fix, *steps] if found.error else steps,
        )
        atomic_write_text(study, _seal(text) if found.error else text)
    except BaseException:
        if placeholder:
            study.unlink(missing_ok=True)
        raise
    return _report(args, adapter, found, study, folder, inp, steps)


def _report(args: argparse.Namespace, adapter: Any, found: Any, study: Path, folder: Path, inp: dict[str, Any], steps: list[str]) -> int:
    """What init wrote and found, what to do next; the exit code (2 when the data could not be read)."""
    from .study_template import summary

    if args.quiet:
        print(study)
    else:
        print(f"wrote {_shell(study)} (format {adapter.name})")
        for line in summary(found):
            print(f"  {line}")
    if found.error:
        print_error(f"the data could not be read as {adapter.name}: {found.error}")
        print(f"Fix the [input] options in {_shell(study)}, then check them with: unitize validate {_shell(study)}", file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet and found.kind != "items" and len(found.annotators) == 1:
        root = Path(inp["annotations"]) if isinstance(inp.get("annotations"), (str, Path)) else folder
        deeper = annotator_folders(root if root.is_absolute() else study.parent / root)
        where = (f" The annotators' folders look to be in {_shell(deeper[0])} ({', '.join(deeper[1][:4])}"
                 f"{', …' if len(deeper[1]) > 4 else ''}): unitize init --format {adapter.name} {_shell(folder)} "
                 f"--annotations {_shell(deeper[0])} --force") if deeper else ""
        print(f"warning: one annotator found ({found.annotators[0]}); agreement needs two or more.{where}", file=sys.stderr)
    if not args.quiet:
        print(f"Next: {steps[0]}")
        print(f"Then: {steps[1]}")
    return EXIT_OK


def annotator_folders(root: Path, depth: int = 4) -> tuple[Path, list[str]] | None:
    """The shallowest folder below ``root`` (``root`` itself excluded) whose subfolders look like annotators' — two or more
    holding files of the same names — with those subfolders' names; None when there is none within ``depth`` levels."""
    level = [root]
    for _ in range(depth):
        below = sorted(p for d in level for p in _subfolders(d))
        for d in below:
            names = {sub.name: {f.name for f in sub.iterdir() if f.is_file()} for sub in _subfolders(d)}
            shared = [n for n, files in names.items() if any(files & other for m, other in names.items() if m != n)]
            if len(shared) >= 2:
                return d, sorted(shared)
        level = below
    return None


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")]
    except OSError:
        return []
