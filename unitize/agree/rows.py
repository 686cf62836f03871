"""One row of the results table from one measured value (:class:`~unitize.metrics.value.Value`) and its cell's columns."""

from __future__ import annotations

import json
import re
from typing import Any

from ..metrics.value import Value

#: the end of a reason that names a value by its code ("every unit the value 2")
_VALUE_CODE = re.compile(r"the value (\d+)$")


def in_words(reason: str | None, categories: list[str] | None) -> str | None:
    """A reason of label data naming the label, not its code (``the value 2`` -> ``the label 'PER'``)."""
    found = _VALUE_CODE.search(reason) if reason is not None and categories is not None else None
    if found is None or categories is None or reason is None or int(found.group(1)) >= len(categories):
        return reason
    return f"{reason[:found.start()]}the label {categories[int(found.group(1))]!r}"


def value_row(base: dict[str, Any], metric: str, v: Value, categories: list[str] | None) -> dict[str, Any]:
    """The row of ``v``: the cell's columns (``base``), overridden where the value rests on fewer documents or annotators."""
    params = dict(v.params)
    level = params.pop("level", None)
    a, b = v.pair.split("|", 1) if v.pair and "|" in v.pair else (None, None)
    return {
        **base,
        **({"documents": v.documents} if v.documents is not None else {}),
        **({"annotators": v.annotators} if v.annotators is not None else {"annotators": 2} if a is not None else {}),
        "metric": metric,
        "value": v.value,
        "reason": in_words(v.reason, categories),
        "units_used": v.units_used,
        "std_err": v.std_err,
        "df": v.df,
        "p_value": v.p_value,
        "pair": v.pair,
        "level": level,
        "params": json.dumps(params, sort_keys=True) if params else None,
        "ci_low": v.ci[0] if v.ci else None,
        "ci_high": v.ci[1] if v.ci else None,
        "annotator_a": a,
        "annotator_b": b,
        "label": v.label,
        "doc": v.doc,
        "annotator": v.annotator,
        "diagnostics": None,
    }
