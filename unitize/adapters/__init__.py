"""Input adapters, registered by name.

An adapter knows one input format and turns it into a :class:`~unitize.model.Corpus`.
Built-in adapters and third-party ones are found through the ``unitize.adapters``
entry-point group; each entry point names an :class:`Adapter` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Callable

from ..model import Corpus


class AdapterError(ValueError):
    """A usage error of an adapter: unknown format, bad option, unusable setting."""


@dataclass(frozen=True)
class Adapter:
    """A reader of one format.

    ``read`` takes keyword arguments only: the ``[input]`` table of the study
    configuration without ``format``, with paths already resolved, plus
    ``base`` (the directory that relative names in reports are relative to) and
    ``progress`` (a callable taking an iterable and a description, or ``None``).
    ``options`` lists the ``[input]`` keys it accepts, each with a one-line help.
    ``defaults`` are the unitization defaults suited to the format (e.g. ``group_by``).
    """

    name: str
    description: str
    read: Callable[..., Corpus]
    options: dict[str, str]
    defaults: dict[str, Any]


_BUILTIN = {
    "datt": "unitize.adapters.datt:ADAPTER",
    "pdtb3": "unitize.adapters.pdtb3:ADAPTER",
    "pdtb2": "unitize.adapters.pdtb2:ADAPTER",
    "conll16": "unitize.adapters.conll16:ADAPTER",
    "labels": "unitize.adapters.labels:ADAPTER",
}
_BUILTIN.update(
    {
        "brat": "unitize.adapters.brat:ADAPTER",
        "span-table": "unitize.adapters.span_table:ADAPTER",
        "webanno-tsv": "unitize.adapters.webanno_tsv:ADAPTER",
        "conll-bio": "unitize.adapters.conll_bio:ADAPTER",
        "doccano": "unitize.adapters.doccano:ADAPTER",
        "label-studio": "unitize.adapters.label_studio:ADAPTER",
    }
)


def _load(target: str) -> Adapter:
    module, _, attr = target.partition(":")
    obj = __import__(module, fromlist=[attr])
    return getattr(obj, attr)


def available() -> dict[str, str]:
    """Adapter names -> their entry-point targets (built-ins and installed plugins)."""
    found = dict(_BUILTIN)
    for ep in entry_points(group="unitize.adapters"):
        found.setdefault(ep.name, ep.value)
    return dict(sorted(found.items()))


def get_adapter(name: str) -> Adapter:
    """The adapter registered as ``name``."""
    targets = available()
    if name not in targets:
        raise AdapterError(f"unknown input format {name!r}; available: {', '.join(targets)}")
    adapter = _load(targets[name])
    if not isinstance(adapter, Adapter):
        raise AdapterError(f"entry point {targets[name]!r} for format {name!r} is not a unitize Adapter")
    return adapter
