"""A study file read into :class:`~unitize.config.settings.Settings`: sections checked, keys typed, paths made
absolute against the file that names them; ``--set`` assignments applied; settings overridden by flags."""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ConfigError
from .options import toml_value
from .paths import absolute
from .sections import (
    APPROACHES,
    ASSIGNMENTS,
    DISCONTINUOUS,
    ITEMS_OPTIONS,
    LAYERS_FROM,
    LAYOUTS,
    MODES,
    OUTPUT_OPTIONS,
    PATH_KEYS,
    ROLES_OPTIONS,
    RUN_OPTIONS,
    UNITIZE_OPTIONS,
    UNITS,
)
from .settings import DEFAULT_FORMAT, INPUT_TYPES, Settings

SECTIONS = ("input", "unitize", "output", "items", "run", "roles")
_UNITIZE_KEYS = set(UNITIZE_OPTIONS)
_OUTPUT_KEYS = set(OUTPUT_OPTIONS)
_RUN_KEYS = set(RUN_OPTIONS)
_ROLES_KEYS = set(ROLES_OPTIONS)
_ITEMS_ONLY = set(ITEMS_OPTIONS) - {"groups"}  # [input] groups is a selection of groups


#: [input] keys of many formats, for messages about misplaced keys (config knows no format's own keys)
_INPUT_KEYS = {"format", *PATH_KEYS, *INPUT_TYPES, "annotators", "groups", "types", "sense_level", "layer", "columns", "roster", "item", "labels"}


def section_of(key: str) -> str | None:
    """The section a study key belongs in (``None`` when no section knows it)."""
    for name, keys in (("unitize", _UNITIZE_KEYS), ("output", _OUTPUT_KEYS), ("items", _ITEMS_ONLY), ("run", _RUN_KEYS),
                       ("roles", _ROLES_KEYS)):
        if key in keys:
            return name
    return "input" if key in _INPUT_KEYS else None


def _misplaced(keys: Iterable[str], here: str) -> None:
    """Raise for keys that belong in another section, naming it (``tokenizer belongs in [unitize]``)."""
    wrong = {key: section for key in keys if (section := section_of(key)) is not None and section != here}
    if wrong:
        where = "at the top of the file" if here == "" else f"in [{here}]"
        raise ConfigError(
            "; ".join(f"{key} belongs in [{section}]" for key, section in sorted(wrong.items()))
            + f" (found {where}); move it under the [{sorted(wrong.values())[0]}] line"
        )


_S = TypeVar("_S", bound=str)


def _expect(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{where} must be a {names}, not {type(value).__name__} ({value!r})")
    return value


def _choices(values: Any, allowed: tuple[_S, ...], where: str) -> tuple[_S, ...]:
    if isinstance(values, str):
        values = [values]
    _expect(values, list, where)
    for v in values:
        if v not in allowed:
            raise ConfigError(f"{where}: {v!r} is not one of {', '.join(allowed)}")
    if not values:
        raise ConfigError(f"{where} is empty")
    return tuple(dict.fromkeys(values))


def _strings(values: Any, where: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    _expect(values, list, where)
    for v in values:
        _expect(v, str, where)
    return tuple(values)


def from_mapping(data: dict[str, Any], *, base: Path, source: str | None = None) -> Settings:
    """Build settings from a parsed study table (TOML-shaped), paths relative to ``base``."""
    unknown = set(data) - set(SECTIONS)
    _misplaced(unknown, "")
    if unknown:
        raise ConfigError(f"unknown section(s) [{'], ['.join(sorted(unknown))}]; expected [input], [unitize], [output], [items], [run], [roles]")
    inp = dict(_expect(data.get("input", {}), dict, "[input]"))
    uni = dict(_expect(data.get("unitize", {}), dict, "[unitize]"))
    out = dict(_expect(data.get("output", {}), dict, "[output]"))
    run = dict(_expect(data.get("run", {}), dict, "[run]"))
    roles = dict(_expect(data.get("roles", {}), dict, "[roles]"))
    _misplaced(set(inp) & (_UNITIZE_KEYS | _OUTPUT_KEYS | _ITEMS_ONLY | _RUN_KEYS | _ROLES_KEYS), "input")
    for table, keys, name in ((uni, _UNITIZE_KEYS, "unitize"), (out, _OUTPUT_KEYS, "output"), (run, _RUN_KEYS, "run"),
                              (roles, _ROLES_KEYS, "roles")):
        bad = set(table) - keys
        _misplaced(bad, name)
        if bad:
            raise ConfigError(f"unknown key(s) in [{name}]: {', '.join(sorted(bad))}; known: {', '.join(sorted(keys))}")

    if "input" in data and "format" not in inp:
        raise ConfigError('[input] format is missing: name the input format, e.g. format = "datt" (`unitize formats` lists them)')
    fmt = _expect(inp.pop("format", DEFAULT_FORMAT), str, "[input] format")
    for key in PATH_KEYS:
        if key in inp:
            inp[key] = absolute(_expect(inp[key], str, f"[input] {key}"), base)
    if isinstance(inp.get("annotators"), dict):
        inp["annotators"] = {
            _expect(name, str, "[input.annotators] name"): absolute(_expect(path, str, f"[input.annotators] {name}"), base)
            for name, path in inp["annotators"].items()
        }
    for key in ("annotators", "groups", "types"):
        if key in inp and not isinstance(inp[key], dict):
            inp[key] = list(_strings(inp[key], f"[input] {key}"))

    def given(key: str) -> Any:
        return uni.get(key, UNITIZE_OPTIONS[key].default)

    units = _choices(given("units"), UNITS, "[unitize] units")
    approaches = _choices(given("approaches"), APPROACHES, "[unitize] approaches")
    return Settings(
        format=fmt,
        input=inp,
        pairs=tuple(itertools.product(units, approaches)),
        layers=_strings(given("layers"), "[unitize] layers"),
        modes=_choices(given("modes"), MODES, "[unitize] modes"),
        tokenizer=_expect(given("tokenizer"), str, "[unitize] tokenizer"),
        discontinuous=_choices(given("discontinuous"), DISCONTINUOUS, "[unitize] discontinuous")[0],
        keep_missing=_expect(given("keep_missing"), bool, "[unitize] keep_missing"),
        keep_mismatched=_expect(given("keep_mismatched"), bool, "[unitize] keep_mismatched"),
        out=absolute(_expect(out["dir"], str, "[output] dir"), base) if "dir" in out else None,
        partition_units=_expect(out["partition_units"], int, "[output] partition_units") if "partition_units" in out else None,
        base=absolute(base),
        source=source,
        layers_from=_choices(given("layers_from"), LAYERS_FROM, "[unitize] layers_from")[0],
        layout=_choices(given("layout"), LAYOUTS, "[unitize] layout")[0],
        assignment=_choices(given("assignment"), ASSIGNMENTS, "[unitize] assignment")[0],
        items=dict(_expect(data.get("items", {}), dict, "[items]")),
        executor=_expect(run["executor"], str, "[run] executor") if "executor" in run else None,
        roles={key: list(_strings(value, f"[roles] {key}")) for key, value in sorted(roles.items())},
    )


def read_study(path: Path) -> dict[str, Any]:
    """The tables of a study TOML file, as written (nothing resolved or checked)."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def apply_set(data: dict[str, Any], assignment: str) -> None:
    """Apply ``section.key=value`` (``--set``) to study tables; the value is read as TOML
    (``[\"a\", \"b\"]``, ``{doc = \"id\"}``, ``3``, ``true``), bare text as a string."""
    dotted, sep, text = assignment.partition("=")
    path = [p.strip() for p in dotted.split(".")]
    if not sep or len(path) < 2 or not all(path):
        section = section_of(dotted.strip())
        hint = f" (e.g. --set {section}.{dotted.strip()}={text or '...'})" if section else ""
        raise ConfigError(f"--set {assignment!r}: expected SECTION.KEY=VALUE{hint}")
    if path[0] not in SECTIONS:
        section = section_of(path[0])
        hint = f"; {path[0]} belongs in [{section}]: --set {section}.{dotted.strip()}={text}" if section else ""
        raise ConfigError(f"--set {assignment!r}: no section [{path[0]}]; sections are {', '.join(SECTIONS)}{hint}")
    table = data
    for name in path[:-1]:
        table = table.setdefault(name, {})
        if not isinstance(table, dict):
            raise ConfigError(f"--set {assignment!r}: {name} is not a table")
    try:
        table[path[-1]] = toml_value(text.strip())
    except ConfigError as exc:
        raise ConfigError(f"--set {assignment!r}: {exc}") from None


def load_toml(path: Path, sets: Iterable[str] = ()) -> Settings:
    """Read a study TOML file; ``sets`` are ``section.key=value`` changes (``--set``) applied first."""
    path = Path(path)
    data = read_study(path)
    for assignment in sets:
        apply_set(data, assignment)
    try:
        return from_mapping(data, base=absolute(path).parent, source=str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def override(settings: Settings, **changes: Any) -> Settings:
    """Settings with the given fields replaced; ``None`` values are ignored."""
    changes = {k: v for k, v in changes.items() if v is not None}
    inp_changes = changes.pop("input", None)
    if inp_changes:
        changes["input"] = {**settings.input, **inp_changes}
    return replace(settings, **changes)
