"""unitize: turn multi-annotator annotations into unit matrices for inter-annotator agreement.

The Python API mirrors the CLI, one plain function per step::

    from unitize import load_settings, read_corpus, unitize, write_output

    settings = load_settings("study.toml")
    corpus = read_corpus(settings)            # adapter: files -> canonical model
    result = unitize(corpus, settings)        # validation, segments, matrices on demand
    table = result.matrix("ama", "Arg1", unit="word", approach="interval")
    manifest = write_output(result, settings.out)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

    from ._version import __version__
    from .config import ConfigError, Settings, load_rat, load_toml, override
    from .config import load_toml as load_settings
    from .dataset.directory import OutputData
    from .errors import RunError
    from .items.run import ItemsUnitized
    from .model import Corpus, Document, Finding, ItemLabel, Span, Submission
    from .run import convert, read_corpus, summary, unitize, write_output
    from .spans.matrices import Unitized

#: public name -> (module, its name there): imported when first asked, so that ``import unitize`` (and every
#: command, whose modules are below this package) does not load the whole run (pyarrow.compute, the layouts…)
_LAZY = {
    "__version__": ("._version", "__version__"),
    **{name: (".config", name) for name in ("ConfigError", "Settings", "load_rat", "load_toml", "override")},
    "load_settings": (".config", "load_toml"),
    "RunError": (".errors", "RunError"),
    "ItemsUnitized": (".items.run", "ItemsUnitized"),
    "Unitized": (".spans.matrices", "Unitized"),
    **{name: (".model", name) for name in ("Corpus", "Document", "Finding", "ItemLabel", "Span", "Submission")},
    **{name: (".run", name) for name in ("convert", "read_corpus", "summary", "unitize", "write_output")},
}


def __getattr__(name: str) -> Any:
    """A public name of the API, imported from its module on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def densify(out: Path | str | OutputData, setting: str, *, group: str | None = None, layer: str | None = None) -> pa.Table:
    """The dense wide rows of a setting of an output directory (a sparse one's implicit rows restored): a pyarrow Table.

    See :func:`unitize.dataset.directory.densify`.
    """
    from .dataset.directory import densify as _densify

    return _densify(out, setting, group=group, layer=layer)


__all__ = [
    "ConfigError",
    "Corpus",
    "Document",
    "Finding",
    "ItemLabel",
    "ItemsUnitized",
    "RunError",
    "Settings",
    "Span",
    "Submission",
    "Unitized",
    "__version__",
    "convert",
    "densify",
    "load_rat",
    "load_settings",
    "load_toml",
    "override",
    "read_corpus",
    "summary",
    "unitize",
    "write_output",
]
