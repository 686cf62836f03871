"""Entry-point groups: the names registered in one group and their targets, scanned once per process.

The adapter and writer registries (:mod:`unitize.adapters`, :mod:`unitize.writers`) each look
their group up here; the built-ins are entry points of unitize itself (pyproject.toml), plugins
those of other installed distributions. A scan imports nothing: a target is loaded (:func:`load`)
when its registry is asked for its name.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

__all__ = ["load", "rescan", "scan"]

#: group -> (name -> target), as scanned
_SCANNED: dict[str, dict[str, str]] = {}


def scan(group: str, builtin_prefix: str) -> dict[str, str]:
    """Name -> entry-point target (``module:attribute``) of every entry point in ``group``, in name order,
    scanned once per process; a built-in (a target starting with ``builtin_prefix``) wins a name a plugin
    repeats."""
    if group not in _SCANNED:
        found: dict[str, str] = {}
        for ep in sorted(entry_points(group=group), key=lambda ep: not ep.value.startswith(builtin_prefix)):
            found.setdefault(ep.name, ep.value)
        _SCANNED[group] = dict(sorted(found.items()))
    return dict(_SCANNED[group])


def rescan(group: str) -> None:
    """Forget what was scanned of ``group``: the next :func:`scan` reads the installed distributions again
    (after installing a plugin into a running process, and in tests)."""
    _SCANNED.pop(group, None)


def load(target: str) -> Any:
    """The object an entry-point target (``module:attribute``) names, its module imported."""
    module, _, attr = target.partition(":")
    return getattr(__import__(module, fromlist=[attr]), attr)
