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
import os
import re
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

UNITS = ("char", "word")
APPROACHES = ("interval", "boundary")
MODES = ("separate", "combined", "labels")
DISCONTINUOUS = ("extend", "keep", "drop")
LAYERS_FROM = ("layer", "label")
LAYOUTS = ("auto", "wide", "long")

#: [input] keys that hold paths, resolved against the config file's directory
PATH_KEYS = ("annotations", "texts", "parses")


class ConfigError(ValueError):
    """A configuration the run cannot start with (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    """Fully resolved settings of one run.

    ``input`` holds the adapter's options (paths absolute); ``pairs`` are the
    (unit, approach) settings to write, in order.
    """

    format: str = "datt"
    input: dict[str, Any] = field(default_factory=dict)
    pairs: tuple[tuple[str, str], ...] = (
        ("char", "interval"),
        ("char", "boundary"),
        ("word", "interval"),
        ("word", "boundary"),
    )
    layers: tuple[str, ...] = ("Arg1", "Arg2")
    modes: tuple[str, ...] = ("separate",)
    tokenizer: str = "spacy:xx"
    discontinuous: str = "extend"
    keep_missing: bool = False
    keep_mismatched: bool = False
    out: Path | None = None
    base: Path = field(default_factory=Path.cwd)
    source: str | None = None
    statistics: tuple[str, ...] = ()
    layers_from: str = "layer"
    layout: str = "auto"
    #: the [items] table for flat labels (format "labels"), parsed by unitize.items.parse_options
    items: dict[str, Any] = field(default_factory=dict)

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
        if not data["items"]:
            data.pop("items")  # span runs: settings as before flat labels existed
        if not with_output:
            data.pop("out")
            data.pop("source")
            data["input"].pop("workers", None)
        return data


def working_directory() -> Path:
    """The working directory as the user sees it: ``$PWD`` when it names it (symlinks kept), else the physical one."""
    logical = os.environ.get("PWD")
    if logical and os.path.isabs(logical):
        try:
            if os.path.samefile(logical, "."):
                return Path(logical)
        except OSError:
            pass
    return Path(os.getcwd())


def absolute(path: Path | str, base: Path | None = None) -> Path:
    """``path`` made absolute against ``base`` (default the working directory) and normalised, symlinks not resolved.

    Names in reports and the manifest are relative to the study file (or the working
    directory), so they must not change because a folder on the way is a symlink.
    """
    return Path(os.path.normpath(os.path.join(base if base is not None else working_directory(), path)))


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
}

_UNITIZE_KEYS = {
    "units",
    "approaches",
    "layers",
    "modes",
    "tokenizer",
    "discontinuous",
    "keep_missing",
    "keep_mismatched",
    "layers_from",
    "layout",
}
_OUTPUT_KEYS = {"dir"}


def _expect(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{where} must be a {names}, not {type(value).__name__} ({value!r})")
    return value


def _choices(values: Any, allowed: tuple[str, ...], where: str) -> tuple[str, ...]:
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
    unknown = set(data) - {"input", "unitize", "output", "items"}
    if unknown:
        raise ConfigError(f"unknown section(s) [{'], ['.join(sorted(unknown))}]; expected [input], [unitize], [output], [items]")
    inp = dict(_expect(data.get("input", {}), dict, "[input]"))
    uni = dict(_expect(data.get("unitize", {}), dict, "[unitize]"))
    out = dict(_expect(data.get("output", {}), dict, "[output]"))
    for table, keys, name in ((uni, _UNITIZE_KEYS, "unitize"), (out, _OUTPUT_KEYS, "output")):
        bad = set(table) - keys
        if bad:
            raise ConfigError(f"unknown key(s) in [{name}]: {', '.join(sorted(bad))}; known: {', '.join(sorted(keys))}")

    if "input" in data and "format" not in inp:
        raise ConfigError('[input] format is missing: name the input format, e.g. format = "datt" (`unitize formats` lists them)')
    fmt = _expect(inp.pop("format", "datt"), str, "[input] format")
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

    units = _choices(uni.get("units", list(UNITS)), UNITS, "[unitize] units")
    approaches = _choices(uni.get("approaches", list(APPROACHES)), APPROACHES, "[unitize] approaches")
    return Settings(
        format=fmt,
        input=inp,
        pairs=tuple((u, a) for u in units for a in approaches),
        layers=_strings(uni.get("layers", ["Arg1", "Arg2"]), "[unitize] layers"),
        modes=_choices(uni.get("modes", ["separate"]), MODES, "[unitize] modes"),
        tokenizer=_expect(uni.get("tokenizer", "spacy:xx"), str, "[unitize] tokenizer"),
        discontinuous=_choices(uni.get("discontinuous", "extend"), DISCONTINUOUS, "[unitize] discontinuous")[0],
        keep_missing=_expect(uni.get("keep_missing", False), bool, "[unitize] keep_missing"),
        keep_mismatched=_expect(uni.get("keep_mismatched", False), bool, "[unitize] keep_mismatched"),
        out=absolute(_expect(out["dir"], str, "[output] dir"), base) if "dir" in out else None,
        base=absolute(base),
        source=source,
        layers_from=_choices(uni.get("layers_from", "layer"), LAYERS_FROM, "[unitize] layers_from")[0],
        layout=_choices(uni.get("layout", "auto"), LAYOUTS, "[unitize] layout")[0],
        items=dict(_expect(data.get("items", {}), dict, "[items]")),
    )


def load_toml(path: Path) -> Settings:
    """Read a study TOML file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return from_mapping(data, base=absolute(path).parent, source=str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


# --- RAT's legacy configuration (Yalçınkaya 2010, Appendix F) -----------------

_RAT_SECTIONS = ("Work Path", "Connectives", "Annotators", "Out Directory", "Data Handle Method")
_RAT_STATISTICS = {"0": "cochran-q", "1": "fleiss-kappa", "2": "krippendorff-alpha"}
_RAT_METHOD = re.compile(r"^([01])-([01])-([0-2])$")


def load_rat(path: Path) -> Settings:
    """Read RAT's configuration file: work path, connectives, annotators, output, methods.

    ``[Data Handle Method]`` lines are ``{1=word,0=char}-{1=boundary,0=interval}-{0=QTest,
    1=FleissKappa,2=Krippendorff}``; the statistic is recorded for ``unitize agree``.
    Annotation files and raw texts are searched recursively under the work path.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"RAT configuration file not found: {path}") from None
    except UnicodeDecodeError:
        lines = path.read_text(encoding="latin-1").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the RAT configuration file {path}: {exc.strerror or exc}") from None
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, raw_line in enumerate(lines, 1):
        line = raw_line.split("//", 1)[0].strip()
        header = re.match(r"^\[([^\]]+)\]$", line)
        if header:
            current = header.group(1).strip()
            if current not in _RAT_SECTIONS:
                raise ConfigError(f"{path}:{number}: unknown RAT section [{current}]; expected {', '.join(_RAT_SECTIONS)}")
            sections.setdefault(current, [])
            continue
        if not line or (line.startswith("{") and line.endswith("}")):
            continue  # blank, or the wrapped tail of a comment such as {0=QTest, ...}
        if current is None:
            raise ConfigError(f"{path}:{number}: {line!r} comes before any [section]")
        sections[current].append(line)
    for name in ("Work Path", "Data Handle Method"):
        if not sections.get(name):
            raise ConfigError(f"{path}: section [{name}] is missing or empty")
    base = absolute(path).parent
    work = absolute(sections["Work Path"][0], base)
    pairs: list[tuple[str, str]] = []
    statistics: list[str] = []
    for method in sections["Data Handle Method"]:
        m = _RAT_METHOD.match(method)
        if not m:
            raise ConfigError(
                f"{path}: [Data Handle Method] {method!r} is not of the form U-A-S "
                "(U: 1=word 0=char, A: 1=boundary 0=interval, S: 0=QTest 1=Fleiss 2=Krippendorff)"
            )
        pair = ("word" if m.group(1) == "1" else "char", "boundary" if m.group(2) == "1" else "interval")
        if pair not in pairs:
            pairs.append(pair)
        stat = _RAT_STATISTICS[m.group(3)]
        if stat not in statistics:
            statistics.append(stat)
    inp: dict[str, Any] = {"annotations": work, "texts": work}
    if sections.get("Connectives"):
        inp["groups"] = sections["Connectives"]
    if sections.get("Annotators"):
        inp["annotators"] = sections["Annotators"]
    out_dir = sections.get("Out Directory")
    return Settings(
        format="datt",
        input=inp,
        pairs=tuple(pairs),
        tokenizer="spacy:tr",
        out=absolute(out_dir[0], base) if out_dir else None,
        base=base,
        source=str(path),
        statistics=tuple(statistics),
    )


def override(settings: Settings, **changes: Any) -> Settings:
    """Settings with the given fields replaced; ``None`` values are ignored."""
    changes = {k: v for k, v in changes.items() if v is not None}
    inp_changes = changes.pop("input", None)
    if inp_changes:
        changes["input"] = {**settings.input, **inp_changes}
    return replace(settings, **changes)
