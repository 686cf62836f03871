"""``unitize examples``: list the bundled example studies, show one, copy one to a folder of your own."""

from __future__ import annotations

import argparse
import shutil
from importlib import resources
from pathlib import Path

from .common import EXIT_OK, EXIT_USAGE, print_error

HELP = "list the bundled example studies, or copy one to a folder to try unitize on it"
EXAMPLES = """examples:
  unitize examples                              # the bundled studies, one line each
  unitize examples brat-mini                    # where it is and what it holds (its README)
  unitize examples brat-mini --copy try-brat    # a copy to run and edit: then
  unitize convert try-brat/study.toml --out try-brat/out && unitize agree try-brat/out
"""


def examples_dir() -> Path:
    """The folder of the bundled example studies (inside the installed package)."""
    return Path(str(resources.files("unitize") / "examples"))


def bundled() -> dict[str, Path]:
    """Every bundled example study (a folder with a ``study.toml``) by name."""
    root = examples_dir()
    return {p.name: p for p in sorted(root.iterdir()) if (p / "study.toml").is_file()} if root.is_dir() else {}


def title(folder: Path) -> str:
    """The first line of an example's README without its ``# name:`` prefix."""
    readme = folder / "README.md"
    first = readme.read_text(encoding="utf-8").splitlines()[0] if readme.is_file() else folder.name
    return first.lstrip("# ").split(": ", 1)[-1]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="an example's name (default: list them)")
    p.add_argument("--copy", type=Path, metavar="DIR", help="copy the example to DIR (a new or empty folder)")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    studies = bundled()
    if args.name is None:
        if args.copy is not None:
            print_error("--copy needs an example's name: unitize examples NAME --copy DIR (`unitize examples` lists them)")
            return EXIT_USAGE
        width = max(map(len, studies), default=0)
        for name, study in studies.items():
            print(f"{name:<{width}}  {title(study)}")
        print("\nshow one: unitize examples NAME; try one: unitize examples NAME --copy DIR")
        return EXIT_OK
    folder = studies.get(args.name)
    if folder is None:
        print_error(f"no bundled example {args.name!r}; the examples are: {', '.join(studies)}")
        return EXIT_USAGE
    if args.copy is None:
        print(f"{args.name}: {folder}\n")
        readme = folder / "README.md"
        if readme.is_file():
            print(readme.read_text(encoding="utf-8").rstrip())
        print(f"\ntry it: unitize examples {args.name} --copy DIR, then unitize convert DIR/study.toml --out DIR/out")
        return EXIT_OK
    dest: Path = args.copy
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        print_error(f"{dest} exists and is not an empty folder; name a new folder for the copy")
        return EXIT_USAGE
    shutil.copytree(folder, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "out"))
    print(f"copied {args.name} to {dest}; next:\n  unitize convert {dest / 'study.toml'} --out {dest / 'out'}\n  unitize agree {dest / 'out'}")
    return EXIT_OK
