"""How a group reads a raw label: trimmed, case-folded, mapped, numbers made canonical, sets sorted."""

from __future__ import annotations

import math
import re

from .options import SET_JOIN, GroupSpec


def number_text(value: str) -> str | None:
    """The canonical text of a number (``"1.0"`` → ``"1"``, ``" 2.50"`` → ``"2.5"``), or ``None``."""
    try:
        number = float(value)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() else repr(number)


class InvalidLabel(Exception):
    """A label the group cannot hold; ``code`` is the finding code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def _one(spec: GroupSpec, value: str) -> str | None:
    if spec.strip:
        value = value.strip()
    if spec.casefold:
        value = value.casefold()
    value = spec.mapping.get(value, value)
    if not value.strip():
        return None
    if spec.level != "nominal":
        number = number_text(value)
        if number is not None:
            value = number
        elif spec.level == "interval" or spec.values is None:
            raise InvalidLabel("label-not-numeric", f"{value!r} is not a number ({spec.level} level)")
    return value


def canonical(spec: GroupSpec, value: str | None) -> str | None:
    """A raw label as the group keeps it: trimmed, case-folded, mapped, numbers canonical, sets sorted.

    Raises :class:`InvalidLabel` for a value the group cannot hold.
    """
    if value is None:
        return None
    if spec.multi:
        parts = list(re.split("|".join(map(re.escape, {spec.separator, SET_JOIN})), value))
        kept = sorted({c for c in (_one(spec, p) for p in parts) if c is not None})
        if spec.values is not None:
            bad = [c for c in kept if c not in spec.values]
            if bad:
                raise InvalidLabel("label-undeclared", f"{', '.join(map(repr, bad))} not among the declared values {', '.join(spec.values)}")
        return SET_JOIN.join(kept) or None
    result = _one(spec, value)
    if result is not None and spec.values is not None and result not in _declared(spec):
        raise InvalidLabel("label-undeclared", f"{result!r} is not among the declared values {', '.join(spec.values)}")
    return result


def _declared(spec: GroupSpec) -> tuple[str, ...]:
    if spec.values is None or spec.level == "nominal":
        return spec.values or ()
    return tuple(number_text(v) or v for v in spec.values)


def numbers(spec: GroupSpec, present: set[str]) -> tuple[dict[str, float], list[str]] | None:
    """For ordinal and interval groups: each value's number and the values in order.

    Numeric labels are their own number; declared non-numeric ordinal labels are
    numbered by their position in ``values`` (1, 2, …).
    """
    if spec.level == "nominal":
        return None
    declared = list(_declared(spec))
    out: dict[str, float] = {}
    for i, v in enumerate(declared):
        n = number_text(v)
        out[v] = float(n) if n is not None else float(i + 1)
    for v in present - set(out):
        out[v] = float(v)
    order = declared if declared and not all(number_text(v) is not None for v in declared) else sorted(out, key=out.__getitem__)
    return dict(sorted(out.items(), key=lambda kv: (kv[1], kv[0]))), order
