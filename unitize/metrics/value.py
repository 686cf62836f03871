"""One measured value and what it rests on (:class:`Value`), the NaN that says why a metric cannot be
measured (:func:`nan`), and the optional packages some metrics need (:func:`require`)."""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..errors import UnitizeError


@dataclass
class Value:
    """One measured value and what it rests on."""

    value: float
    reason: str | None = None
    units_used: int | None = None
    std_err: float | None = None
    df: float | None = None
    p_value: float | None = None
    pair: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    ci: tuple[float, float] | None = None  # bootstrap confidence interval (see agree.bootstrap)
    label: str | None = None  # category-specific rows: the value measured against all others
    doc: str | None = None  # per-document rows: the document
    annotator: str | None = None  # per-annotator rows: the annotator measured against the others
    documents: int | None = None  # the documents the value rests on, where fewer than the cell's (a pair's common documents)
    annotators: int | None = None  # the annotators the value rests on, where fewer than the cell's (a pair: 2)


def of_doc(v: Value, doc: str) -> Value:
    """``v``'s copy for document ``doc`` (``dataclasses.replace`` without its per-call introspection: a ``--by-doc``
    run makes one per document, metric and cell)."""
    out = copy.copy(v)
    out.doc = doc
    return out


class MissingDependency(UnitizeError):
    """A metric's package is not installed."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(f"{module} is not installed: pip install 'unitize[{extra}]'") from None


def nan(reason: str, **kw: Any) -> Value:
    return Value(float("nan"), reason=reason, **kw)
