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

from typing import TYPE_CHECKING

from ._version import __version__
from .config import ConfigError, Settings, load_rat, load_toml, override  # noqa: E402
from .errors import RunError  # noqa: E402
from .item_run import ItemsUnitized  # noqa: E402
from .matrices import Unitized  # noqa: E402
from .model import Corpus, Document, Finding, ItemLabel, Span, Submission  # noqa: E402
from .run import convert, read_corpus, summary, unitize, write_output  # noqa: E402

load_settings = load_toml

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

    from .dataset.directory import OutputData


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
