"""The settings of a study (:class:`Settings`): every key of every section, with its default, after reading."""

from __future__ import annotations

import codecs
import itertools
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..units.unitizers import Approach, Discontinuous, Mode
from .sections import (
    APPROACHES,
    ASSIGNMENT_AUTO,
    ASSIGNMENTS,
    DISCONTINUOUS,
    LAYERS_FROM,
    LAYOUTS,
    MODES,
    UNITIZE_OPTIONS,
    UNITS,
)

#: types of the [input] keys every adapter shares
INPUT_TYPES: dict[str, type] = {
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
        for key, kind in INPUT_TYPES.items():
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
