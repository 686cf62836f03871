"""The folders other commands make inside an output directory, and which files in them are unitize's.

``agreement/`` (``unitize agree``), ``exports/<format>/`` (``unitize export``),
``report/`` (``unitize report``), ``plan/`` (``unitize plan``), ``adjudication/``
(``unitize adjudicate``) and ``estimate/`` (``unitize estimate``) describe the data of the run they were made from: a new
``convert`` leaves unitize's files in them out of its output, and a new ``export``,
``report`` or ``adjudicate`` replaces its folder whole. A file a user put there
(``agreement/my-notes.md``, ``exports/my-own-analysis.R``) is not unitize's to
remove: :func:`user_files` names every file that is not unitize's, and it is
carried into the new output (:func:`carry_derived`, and ``staged_folder`` for an
export or report folder).

What unitize writes there, declared once:

- ``agreement/``: ``results.parquet``, ``results.csv``, ``summary.md``,
  ``summary.csv``, with candidates ``roles.csv`` and the alt-test's ``alt_test.csv``
  and ``alt_test_humans.csv``, and the plots, ``plots/<name>.png`` with
  ``plots/<name>.svg`` (always both);
- ``plan/``: ``plan.csv``, ``plan.png`` and ``plan.svg``, and ``ppi.csv`` (``unitize plan --ppi-width``);
- ``estimate/``: :data:`ESTIMATE_FILES`;
- ``exports/<format>/``: ``index.csv`` and every file it lists;
- ``report/`` whose ``index.html`` begins with :data:`REPORT_MARKER`:
  ``index.html``, ``data/overview.js``, ``data/docs/<n>.js``,
  ``data/items/<n>.js`` and ``plots/<name>.png``;
- ``adjudication/`` that holds a ``summary.json``: :data:`ADJUDICATION_FILES`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

#: the folders of an output directory made later from its data (names at its top level)
DERIVED = ("agreement", "exports", "report", "plan", "adjudication", "estimate")
#: the files ``unitize agree`` writes in its folder (besides the plots)
AGREEMENT_FILES = ("results.parquet", "results.csv", "summary.md", "summary.csv", "roles.csv", "alt_test.csv", "alt_test_humans.csv")
#: the files ``unitize plan`` writes in its folder
PLAN_FILES = ("plan.csv", "plan.png", "plan.svg", "ppi.csv")
#: the files ``unitize estimate`` writes in its folder
ESTIMATE_FILES = ("estimates.csv", "stability.csv", "stability_curve.csv", "unstable.csv", "prompts.csv", "prompt_spread.csv")
#: the files ``unitize adjudicate`` writes in its folder; the last, ``summary.json``, marks an adjudication
ADJUDICATION_FILES = ("units.parquet", "spans.parquet", "review.csv", "review.jsonl", "candidates.csv", "summary.json")
#: the first line of every report's index.html: how an earlier report is recognised
REPORT_MARKER = "<!-- unitize report -->"
#: the index every export folder holds, naming its files (column ``file``, relative to the folder)
EXPORT_INDEX = "index.csv"
_REPORT_DATA = re.compile(r"data/(overview\.js|docs/[0-9]+\.js|items/[0-9]+\.js)|plots/[^/]+\.png|index\.html")


def _files(folder: Path) -> list[str]:
    """Every file (or link, or unreadable entry) under ``folder``, relative, in POSIX form; links are not followed."""
    found = []
    for root, dirs, names in os.walk(folder):
        base = Path(root).relative_to(folder)
        found += [(base / n).as_posix() for n in names]
        found += [(base / d).as_posix() for d in dirs if (Path(root) / d).is_symlink()]
    return sorted(found)


def is_report(folder: Path) -> bool:
    """Whether ``folder`` holds a report unitize wrote (its ``index.html`` begins with the marker)."""
    try:
        with (folder / "index.html").open(encoding="utf-8") as fh:
            return fh.readline().strip() == REPORT_MARKER
    except (OSError, UnicodeDecodeError):
        return False


def is_adjudication(folder: Path) -> bool:
    """Whether ``folder`` holds an adjudication unitize wrote (its ``summary.json``)."""
    return (Path(folder) / ADJUDICATION_FILES[-1]).is_file()


def is_export(folder: Path) -> bool:
    return (folder / EXPORT_INDEX).is_file()


def _export_files(folder: Path) -> set[str]:
    try:
        with open(folder / EXPORT_INDEX, encoding="utf-8", newline="") as fh:
            listed = {row.get("file") or "" for row in csv.DictReader(fh)}
    except (OSError, UnicodeDecodeError, csv.Error):
        listed = set()
    return listed | {EXPORT_INDEX}


def _agreement_files(names: list[str]) -> set[str]:
    plots = {n for n in names if n.startswith("plots/") and n.count("/") == 1}
    pairs = {n for n in plots if n.endswith(".png") and n[:-4] + ".svg" in plots}
    return set(AGREEMENT_FILES) | pairs | {n[:-4] + ".svg" for n in pairs}


def user_files(folder: Path, kind: str | None = None) -> list[str]:
    """The files under ``folder`` (relative paths) that unitize did not write there.

    ``kind``: ``"agreement"``, ``"exports"``, ``"report"``, ``"plan"``, ``"adjudication"`` or ``"estimate"`` for
    those folders of an output directory; ``None`` for a folder an export, report or adjudication
    replaces (recognised by its index, marker or summary). A folder unitize does not recognise holds only the user's files.
    """
    if not folder.is_dir() or folder.is_symlink():
        return []
    names = _files(folder)
    if kind == "exports":
        out = []
        for entry in sorted(os.listdir(folder)):
            path = folder / entry
            if path.is_dir() and not path.is_symlink() and is_export(path):
                out += [f"{entry}/{n}" for n in user_files(path)]
            else:
                out += [n for n in names if n == entry or n.startswith(f"{entry}/")]
        return out
    if kind == "agreement":
        ours = _agreement_files(names)
    elif kind == "plan":
        ours = set(PLAN_FILES)
    elif kind == "estimate":
        ours = set(ESTIMATE_FILES)
    elif is_export(folder):
        ours = _export_files(folder)
    elif is_report(folder):
        ours = {n for n in names if _REPORT_DATA.fullmatch(n)}
    elif kind == "adjudication" or is_adjudication(folder):
        ours = set(ADJUDICATION_FILES)
    else:
        ours = set()
    return [n for n in names if n not in ours]


def listed_outputs(folder: Path) -> dict[str, str | None] | None:
    """The files the manifest of output ``folder`` lists as its outputs, with their sha256 (``None``: no readable
    manifest)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return {str(o["path"]): o.get("sha256") for o in manifest.get("outputs", [])}
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError):
        return None


def keep_edited(src: Path, dst: Path, editable: tuple[str, ...], listed: dict[str, str | None]) -> None:
    """Give ``dst`` each file of ``editable`` that unitize wrote in ``src`` and the user has edited since (its
    sha256 is no longer the one ``src``'s manifest recorded: ``listed``, :func:`listed_outputs`), in place of the
    one ``dst`` holds."""
    for relative in editable:
        old, recorded = src / relative, listed.get(relative)
        if recorded is None or not old.is_file() or old.is_symlink():
            continue
        if hashlib.sha256(old.read_bytes()).hexdigest() != recorded:
            new = dst / relative
            if os.path.lexists(new):
                new.unlink()
            carry_file(old, new, link=True)


def carry_unlisted(src: Path, dst: Path, folders: tuple[str, ...], listed: dict[str, str | None], *, link: bool) -> None:
    """Give ``dst`` the files inside ``src``'s ``folders`` that its manifest does not list (``listed``,
    :func:`listed_outputs`: a user's ``annotation.conf`` in a brat folder unitize wrote, a hand-made ``.ann``), at
    the same places, where ``dst`` lacks them: hard links (else copies) with ``link``, else moved. Without a
    readable manifest (nothing listed) every file of the folders is the user's."""
    for folder in folders:
        if not (src / folder).is_dir() or (src / folder).is_symlink():
            continue
        for relative in _files(src / folder):
            if f"{folder}/{relative}" not in listed:
                carry_file(src / folder / relative, dst / folder / relative, link)


def carry_file(source: Path, target: Path, link: bool) -> None:
    """One file of the user's carried to ``target`` (its folders made) unless something is there: hard-linked
    (else copied) with ``link``, else moved."""
    if os.path.lexists(target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if not link:
        os.rename(source, target)
        return
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, target, follow_symlinks=False)


def carry_derived(src: Path, dst: Path, *, link: bool) -> None:
    """Give ``dst`` (a new output directory) the user's files inside ``src``'s derived folders, at the same
    places, where ``dst`` lacks them: hard links (else copies) with ``link``, else moved."""
    for kind in DERIVED:
        folder = src / kind
        for relative in user_files(folder, kind):
            carry_file(folder / relative, dst / kind / relative, link)
