"""The package's version, at the ground floor: every module may ask it without importing the package.

It is read from the installed distribution's metadata the first time it is asked
(:func:`version`, or the attribute ``__version__``), never at import: reading it
imports :mod:`importlib.metadata`, which a command that neither prints nor writes
the version (``unitize --help``) need not pay for.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    __version__: str


@functools.cache
def version() -> str:
    """The installed unitize's version (``0.0.0+unknown`` when running from a source tree without installation)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("unitize")
    except PackageNotFoundError:
        return "0.0.0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
