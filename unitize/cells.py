"""CSV cells a spreadsheet will not run: a value from an input never becomes a formula.

A spreadsheet takes a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a TAB or
CR before one) as a formula: ``=HYPERLINK("http://evil.example","x")`` becomes a link,
``-2+3`` shows as ``1``. Every CSV unitize writes goes through :func:`cell` (or
:func:`neutral_table` for an Arrow table): such a cell, unless it is a plain number, gets a
leading ``'``, as OWASP recommends; a spreadsheet shows the value as text, without the ``'``.
The Parquet files beside keep every value as it was. A value that itself begins with ``'``
and a formula start gets one more ``'``, so :func:`value` gives every value back: the CSV
annotation tables unitize writes (``span-table``, ``labels``) are read back with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

#: what a spreadsheet may take for the start of a formula
FORMULA_START = "=+-@\t\r"
#: a plain number, which keeps its sign: -2, +3.5, -1e-05, -inf, -nan (as CSV writers spell them)
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)"
#: a cell that needs a leading ``'``: after any ``'`` it already has, a formula start and no plain number (so that
#: a value that itself begins ``'=`` gets one more, and :func:`value` gives every value back)
_RISKY = re.compile("'*[=+\\-@\t\r]")
_NUMBER_AFTER = re.compile(f"'*(?:{_NUMBER})")
#: the first characters of a cell :func:`cell` may change
_FIRST = frozenset(FORMULA_START + "'")


def _needs(text: str) -> bool:
    return _RISKY.match(text) is not None and _NUMBER_AFTER.fullmatch(text) is None


def cell(value: Any) -> Any:
    """``value`` as a CSV cell: a string a spreadsheet would run gets a leading ``'``; anything else as it is."""
    if isinstance(value, str) and value[:1] in _FIRST and _needs(value):
        return "'" + value
    return value


def value(text: str) -> str:
    """The value :func:`cell` wrote as ``text`` (its leading ``'`` gone where :func:`cell` added one)."""
    return text[1:] if text[:1] == "'" and _needs(text[1:]) else text


def row(values: Any) -> list[Any]:
    """A row of :func:`cell` values."""
    return [cell(v) for v in values]


def may_change(values: Sequence[Any]) -> bool:
    """Whether :func:`row` may change a row: one of its strings starts as a formula may (a first character each)."""
    return any(isinstance(v, str) and v[:1] in _FIRST for v in values)


def rows(table: Iterable[Sequence[Any]]) -> Iterator[Sequence[Any]]:
    """Each row as :func:`row` makes it; one :func:`may_change` would not change, as it is (the common case)."""
    for values in table:
        yield row(values) if may_change(values) else values


def neutral_table(table: pa.Table) -> pa.Table:
    """``table`` with every string cell as :func:`cell` makes it (the other columns as they are)."""
    columns = []
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            risky = pc.and_(pc.match_substring_regex(column, "^" + _RISKY.pattern),
                            pc.invert(pc.match_substring_regex(column, "^" + _NUMBER_AFTER.pattern + "$")))
            column = pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)
        columns.append(column)
    return pa.table(columns, names=table.column_names)
