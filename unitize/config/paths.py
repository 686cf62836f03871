"""Paths as the user wrote them: absolute and normalised, symlinks kept."""

from __future__ import annotations

import os
from pathlib import Path


def working_directory() -> Path:
    """The working directory as the user sees it: ``$PWD`` when it names it (symlinks kept), else the physical one."""
    logical = os.environ.get("PWD")
    if logical and os.path.isabs(logical):
        try:
            if os.path.samefile(logical, "."):
                return Path(logical)
        except OSError:
            pass
    return Path(os.getcwd())


def absolute(path: Path | str, base: Path | None = None) -> Path:
    """``path`` made absolute against ``base`` (default the working directory) and normalised, symlinks not resolved.

    Names in reports and the manifest are relative to the study file (or the working
    directory), so they must not change because a folder on the way is a symlink.
    """
    return Path(os.path.normpath(os.path.join(base if base is not None else working_directory(), path)))
