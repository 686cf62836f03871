"""Study settings: from a TOML file, from command-line flags, or from RAT's legacy config.

A study file looks like::

    [input]
    format = "datt"
    annotations = "annotations"
    texts = "texts"
    encoding_fallback = "windows-1254"

    [unitize]
    units = ["char", "word"]
    approaches = ["interval", "boundary"]
    layers = ["Arg1", "Arg2"]
    tokenizer = "spacy:tr"
    discontinuous = "extend"

    [output]
    dir = "out"

Paths are relative to the file that names them.
"""

from __future__ import annotations

import codecs
import itertools
import tomllib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ConfigError
from ..units.unitizers import Approach, Discontinuous, Mode
from .options import OPTION_TYPES, Option, dump_key, dump_value, toml_value
from .paths import absolute, working_directory
from .sections import (
    APPROACHES,
    ASSIGNMENT_AUTO,
    ASSIGNMENT_PER_DOCUMENT,
    ASSIGNMENTS,
    CROWD_ABOVE,
    DISCONTINUOUS,
    ITEM_GROUP_OPTIONS,
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

#: the input format of a study that names none
DEFAULT_FORMAT = "datt"


def _default(key: str) -> Any:
    """The default of a [unitize] key: its declaration in :data:`UNITIZE_OPTIONS` is the one place it is stated."""
    default = UNITIZE_OPTIONS[key].default
    return tuple(default) if isinstance(default, list) else default


@dataclass(frozen=True)
class Settings:
    """Fully resolved settings of one run.

    ``input`` holds the adapter's options (paths absolute); ``pairs`` are the
    (unit, approach) settings to write, in order. The defaults of the [unitize]
    fields are those of :data:`~unitize.config.sections.UNITIZE_OPTIONS`.
    """

    format: str = DEFAULT_FORMAT
    input: dict[str, Any] = field(default_factory=dict)
    pairs: tuple[tuple[str, Approach], ...] = tuple(itertools.product(_default("units"), _default("approaches")))
    layers: tuple[str, ...] = _default("layers")
    modes: tuple[Mode, ...] = _default("modes")
    tokenizer: str = _default("tokenizer")
    discontinuous: Discontinuous = _default("discontinuous")
    keep_missing: bool = _default("keep_missing")
    keep_mismatched: bool = _default("keep_mismatched")
    out: Path | None = None
    base: Path = field(default_factory=Path.cwd)
    source: str | None = None
    statistics: tuple[str, ...] = ()
    layers_from: str = _default("layers_from")
    layout: str = _default("layout")
    #: who annotates which document: "all", "per-document" or "auto" (see config.sections)
    assignment: str = _default("assignment")
    #: [output] partition_units: character units per work partition of the writer (None: the default, PARTITION_UNITS)
    partition_units: int | None = None
    #: the [items] table for flat labels (format "labels"), parsed by unitize.items.parse_options
    items: dict[str, Any] = field(default_factory=dict)
    #: [run] executor: where the run's tasks go (unitize.runtime.executors); not a setting of the results, so it
    #: stays out of resolved() (the manifest's run section records it)
    executor: str | None = None
    #: the [roles] table: "humans" and "candidates" (lists of names or candidate specs), for unitize agree
    roles: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Reject settings a run cannot start with, whether they came from TOML, flags or code."""
        for name, allowed in (("layers", None), ("modes", MODES)):
            values = getattr(self, name)
            if not values:
                raise ConfigError(f"{name} is empty")
            if len(set(values)) != len(values):
                raise ConfigError(f"{name} lists a value twice: {', '.join(values)}")
            if allowed and not set(values) <= set(allowed):
                raise ConfigError(f"{name}: {', '.join(sorted(set(values) - set(allowed)))} not one of {', '.join(allowed)}")
        if len(set(self.pairs)) != len(self.pairs) or not self.pairs:
            raise ConfigError("the (unit, approach) settings are empty or repeat one")
        for unit, approach in self.pairs:
            if unit not in UNITS or approach not in APPROACHES:
                raise ConfigError(f"unknown setting {unit}-{approach}")
        if "combined" in self.modes and len(self.layers) > 8:
            raise ConfigError("mode 'combined' holds at most 8 layers (one bit each in a uint8)")
        if self.discontinuous not in DISCONTINUOUS:
            raise ConfigError(f"discontinuous must be one of {', '.join(DISCONTINUOUS)}, not {self.discontinuous!r}")
        if self.layers_from not in LAYERS_FROM:
            raise ConfigError(f"layers_from must be one of {', '.join(LAYERS_FROM)}, not {self.layers_from!r}")
        if self.layout not in LAYOUTS:
            raise ConfigError(f"layout must be one of {', '.join(LAYOUTS)}, not {self.layout!r}")
        if self.assignment not in ASSIGNMENTS:
            raise ConfigError(f"assignment must be one of {', '.join(ASSIGNMENTS)}, not {self.assignment!r}")
        if self.partition_units is not None and (
            isinstance(self.partition_units, bool) or not isinstance(self.partition_units, int) or self.partition_units < 1
        ):
            raise ConfigError(f"[output] partition_units must be a positive integer, not {self.partition_units!r}")
        for key, kind in _INPUT_TYPES.items():
            if key in self.input and not isinstance(self.input[key], kind):
                raise ConfigError(f"[input] {key} must be a {kind.__name__}, not {self.input[key]!r}")
        if "workers" in self.input and (isinstance(self.input["workers"], bool) or self.input["workers"] < 1):
            raise ConfigError("[input] workers must be a positive integer")
        for key in ("annotators", "groups"):
            values = self.input.get(key)
            if key == "annotators" and isinstance(values, dict):
                if not values or not all(isinstance(k, str) and k and isinstance(v, Path) for k, v in values.items()):
                    raise ConfigError("[input.annotators] must map non-empty annotator names to directories")
                continue
            if values is not None:
                if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
                    raise ConfigError(f"[input] {key} must be a list of non-empty strings")
                if len(set(values)) != len(values):
                    raise ConfigError(f"[input] {key} lists a name twice: {', '.join(values)}")
        for key in ("encoding", "encoding_fallback"):
            if key in self.input:
                try:
                    codecs.lookup(self.input[key])
                except LookupError:
                    raise ConfigError(f"[input] {key}: unknown encoding {self.input[key]!r}") from None

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u for u, _ in self.pairs))

    def resolved(self, *, with_output: bool = True) -> dict[str, Any]:
        """The settings as plain JSON-ready data, paths relative to ``base``.

        ``with_output=False`` leaves out the output directory (for metadata inside
        data files, which must not depend on where they are written).
        """
        data = asdict(self)
        data["input"] = {k: _rel(v, self.base) for k, v in sorted(self.input.items())}
        data["pairs"] = [list(p) for p in self.pairs]
        data["layers"] = list(self.layers)
        data["modes"] = list(self.modes)
        data["statistics"] = list(self.statistics)
        data["out"] = _rel(self.out, self.base) if self.out else None
        data.pop("base")
        data.pop("executor")
        if not data["roles"]:
            data.pop("roles")  # no roles: settings as before roles existed
        if not data["items"]:
            data.pop("items")  # span runs: settings as before flat labels existed
        if data["partition_units"] is None:
            data.pop("partition_units")  # the default: settings as before work partitions existed
        if data["assignment"] == ASSIGNMENT_AUTO:
            data.pop("assignment")  # the default: settings as before the assignment was a setting
        if not with_output:
            data.pop("partition_units", None)  # where rows go, not what they hold
            data.pop("out")
            data.pop("source")
            data["input"].pop("workers", None)
        return data


def _rel(value: Any, base: Path) -> Any:
    if isinstance(value, dict):
        return {k: _rel(v, base) for k, v in sorted(value.items())}
    if isinstance(value, Path):
        try:
            return value.relative_to(base).as_posix() or "."
        except ValueError:
            return value.as_posix()
    return value


#: types of the [input] keys every adapter shares
_INPUT_TYPES: dict[str, type] = {
    "encoding": str,
    "encoding_fallback": str,
    "filename_pattern": str,
    "workers": int,
    "annotator": str,
    "group_by": str,
    "glob": str,
    "parses": Path,
    "names": dict,  # file name -> the name it stands for, per kind (a study file written by unitize; unitize.names)
}

SECTIONS = ("input", "unitize", "output", "items", "run", "roles")
_UNITIZE_KEYS = set(UNITIZE_OPTIONS)
_OUTPUT_KEYS = set(OUTPUT_OPTIONS)
_RUN_KEYS = set(RUN_OPTIONS)
_ROLES_KEYS = set(ROLES_OPTIONS)
_ITEMS_ONLY = set(ITEMS_OPTIONS) - {"groups"}  # [input] groups is a selection of groups


#: [input] keys of many formats, for messages about misplaced keys (config knows no format's own keys)
_INPUT_KEYS = {"format", *PATH_KEYS, *_INPUT_TYPES, "annotators", "groups", "types", "sense_level", "layer", "columns", "roster", "item", "labels"}


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


from .rat import load_rat  # noqa: E402,F401  (it builds Settings, defined above)

__all__ = [
    "APPROACHES",
    "ITEM_GROUP_OPTIONS",
    "ITEMS_OPTIONS",
    "ASSIGNMENTS",
    "ASSIGNMENT_AUTO",
    "ASSIGNMENT_PER_DOCUMENT",
    "CROWD_ABOVE",
    "DISCONTINUOUS",
    "LAYERS_FROM",
    "LAYOUTS",
    "MODES",
    "OPTION_TYPES",
    "PATH_KEYS",
    "ROLES_OPTIONS",
    "RUN_OPTIONS",
    "UNITS",
    "ConfigError",
    "Option",
    "Settings",
    "absolute",
    "apply_set",
    "dump_key",
    "dump_value",
    "from_mapping",
    "load_rat",
    "load_toml",
    "override",
    "toml_value",
    "working_directory",
]
