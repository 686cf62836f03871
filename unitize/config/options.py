"""Declared options: each with a type, a default, one line of help and an example, and their TOML forms."""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .paths import absolute

#: what an option's value may be (in TOML, and as a flag's text)
OPTION_TYPES = {
    "str": "TEXT",
    "path": "PATH",
    "int": "N",
    "float": "X",
    "bool": "true|false",
    "list": "A,B",
    "table": "KEY=VALUE,...",
    "toml": "TOML",
}
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


@dataclass(frozen=True)
class Option:
    """One key of a study file: its type, default, one line of help and an example.

    ``type`` is one of :data:`OPTION_TYPES`: ``str``, ``path`` (relative to the
    study file; on the command line, to the current directory), ``int``, ``float``, ``bool``,
    ``list`` (of ``item``; flag ``A,B``), ``table`` (names to ``item``; flag
    ``KEY=VALUE,KEY=VALUE``) or ``toml`` (any TOML value; the flag's text is
    TOML). ``default`` is ``None`` when there is none (or it is worked out from the
    data); ``example`` is a value shown by ``unitize formats`` and ``unitize init``.
    ``required``: the reader cannot do without it (no default then). ``minimum`` and ``maximum``
    bound a number (``int``, ``float``, or the items of a list or table of ``int``), inclusive;
    every number given must be finite (:meth:`check`).
    """

    type: str = "str"
    default: Any = None
    help: str = ""
    example: Any = None
    choices: tuple[str, ...] = ()
    item: str = "str"
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if self.type not in OPTION_TYPES:
            raise ValueError(f"option type {self.type!r} is not one of {', '.join(OPTION_TYPES)}")
        if self.item not in ("str", "int"):
            raise ValueError(f"option item type {self.item!r} is not str or int")
        if self.required and self.default is not None:
            raise ValueError("a required option has no default")

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`ConfigError` naming ``where`` when a number ``value`` is not of the declared type,
        not finite, or out of the declared bounds (values of other types are the reader's to check)."""
        numbers = {"int": [value], "float": [value]}.get(self.type)
        if numbers is None and self.item == "int" and self.type in ("list", "table"):
            numbers = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, list) else []
        for number in numbers or []:
            kind = "float" if self.type == "float" else "int"
            if isinstance(number, bool) or not isinstance(number, (int, float)) or (kind == "int" and not isinstance(number, int)):
                raise ConfigError(f"{where} must be {'a number' if kind == 'float' else 'a whole number'}, not {number!r}")
            if not math.isfinite(number):
                raise ConfigError(f"{where} must be a finite number, not {number!r}")
            if (self.minimum is not None and number < self.minimum) or (self.maximum is not None and number > self.maximum):
                raise ConfigError(f"{where} must be {self.range_text()}, not {number!r}")

    def range_text(self) -> str:
        """The declared bounds in words (``from 1 to 4,096``, ``at least 1``)."""
        if self.minimum is not None and self.maximum is not None:
            return f"from {_number(self.minimum)} to {_number(self.maximum)}"
        if self.minimum is not None:
            return f"at least {_number(self.minimum)}"
        return f"at most {_number(self.maximum)}" if self.maximum is not None else "a finite number"

    @property
    def metavar(self) -> str:
        return "|".join(self.choices) if self.choices and self.type == "str" else OPTION_TYPES[self.type]

    def parse(self, text: str) -> Any:
        """The value a flag's text stands for; raises :class:`ConfigError` saying what was expected."""
        text = text.strip()
        if self.type == "toml":
            return toml_value(text)
        if self.type == "path":
            if not text:
                raise ConfigError("an empty path")
            return absolute(Path(text).expanduser())
        if self.type == "bool":
            if text.lower() not in _TRUE + _FALSE:
                raise ConfigError(f"{text!r} is not true or false")
            return text.lower() in _TRUE
        if self.type == "int":
            return self._item(text, "int")
        if self.type == "float":
            try:
                number = float(text)
            except ValueError:
                raise ConfigError(f"{text!r} is not a number") from None
            if not math.isfinite(number):
                raise ConfigError(f"{text!r} is not a finite number")
            return number
        if self.type == "list":
            items = [self._item(v.strip(), self.item) for v in text.split(",") if v.strip()]
            if not items:
                raise ConfigError("an empty list")
            return self._checked(items)
        if self.type == "table":
            table: dict[str, Any] = {}
            for pair in (p for p in text.split(",") if p.strip()):
                key, sep, value = pair.partition("=")
                if not sep or not key.strip() or not value.strip():
                    raise ConfigError(f"{pair.strip()!r} is not KEY=VALUE")
                table[key.strip()] = self._item(value.strip(), self.item)
            if not table:
                raise ConfigError("an empty table")
            return table
        return self._checked([text])[0]

    def _checked(self, values: list[Any]) -> list[Any]:
        for value in values:
            if self.choices and value not in self.choices:
                raise ConfigError(f"{value!r} is not one of {', '.join(self.choices)}")
        return values

    @staticmethod
    def _item(text: str, kind: str) -> Any:
        if kind == "int":
            try:
                return int(text)
            except ValueError:
                raise ConfigError(f"{text!r} is not a whole number") from None
        return text


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dump_value(value: Any) -> str:
    """A value written in TOML (the inverse of :func:`toml_value`): strings, numbers, booleans, paths, lists, tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Path):
        value = value.as_posix()
    if isinstance(value, str):
        if "\\" in value and "'" not in value and not _CONTROL.search(value):
            return f"'{value}'"  # a literal string: regexes stay readable
        return dump_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dump_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dump_key(k)} = {dump_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def dump_key(key: str) -> str:
    """A TOML key: bare when it may be, else quoted."""
    return key if _BARE_KEY.match(key) else dump_string(key)


#: what a TOML string may not hold as itself: control characters (C0, DEL, C1) and lone surrogates
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
#: what a TOML basic string escapes: those, a quote and a backslash
_SPECIAL = re.compile(r'["\\\x00-\x1f\x7f-\x9f\ud800-\udfff]')
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    return "\\uFFFD" if 0xD800 <= ord(char) <= 0xDFFF else f"\\u{ord(char):04X}"


def dump_string(value: str) -> str:
    """A TOML basic string holding ``value`` exactly: quotes, backslashes and every control character escaped (a
    name from an input may hold any of them); a lone surrogate, which no TOML file can hold, as U+FFFD."""
    return '"' + _SPECIAL.sub(_escape, value) + '"'


def toml_value(text: str) -> Any:
    """A value written as in TOML (``["a", "b"]``, ``{doc = "id"}``, ``3``, ``true``);
    text that is not TOML and does not try to be (no leading quote or bracket) is a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError as exc:
        if text[:1] in "[{\"'":
            raise ConfigError(f"{text!r} is not a TOML value: {exc}") from None
        return text
