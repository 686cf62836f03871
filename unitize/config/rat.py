"""RAT's legacy configuration file (Yalçınkaya 2010, Appendix F) as :class:`~unitize.config.Settings`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..units.unitizers import Approach
from .paths import absolute
from .settings import Settings

_RAT_SECTIONS = ("Work Path", "Connectives", "Annotators", "Out Directory", "Data Handle Method")
_RAT_STATISTICS = {"0": "cochran-q", "1": "fleiss-kappa", "2": "krippendorff-alpha"}
_RAT_METHOD = re.compile(r"^([01])-([01])-([0-2])$")


def _sections(path: Path) -> dict[str, list[str]]:
    """The lines of every section of a RAT configuration file, comments and blank lines left out."""
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
    return sections


def _methods(path: Path, methods: list[str]) -> tuple[list[tuple[str, Approach]], list[str]]:
    """The (unit, approach) pairs and the statistics of the ``[Data Handle Method]`` lines, each once, in order."""
    pairs: list[tuple[str, Approach]] = []
    statistics: list[str] = []
    for method in methods:
        m = _RAT_METHOD.match(method)
        if not m:
            raise ConfigError(
                f"{path}: [Data Handle Method] {method!r} is not of the form U-A-S "
                "(U: 1=word 0=char, A: 1=boundary 0=interval, S: 0=QTest 1=Fleiss 2=Krippendorff)"
            )
        pair: tuple[str, Approach] = ("word" if m.group(1) == "1" else "char", "boundary" if m.group(2) == "1" else "interval")
        if pair not in pairs:
            pairs.append(pair)
        stat = _RAT_STATISTICS[m.group(3)]
        if stat not in statistics:
            statistics.append(stat)
    return pairs, statistics


def load_rat(path: Path) -> Settings:
    """Read RAT's configuration file: work path, connectives, annotators, output, methods.

    ``[Data Handle Method]`` lines are ``{1=word,0=char}-{1=boundary,0=interval}-{0=QTest,
    1=FleissKappa,2=Krippendorff}``; the statistic is recorded for ``unitize agree``.
    Annotation files and raw texts are searched recursively under the work path.
    """
    path = Path(path)
    sections = _sections(path)
    base = absolute(path).parent
    work = absolute(sections["Work Path"][0], base)
    pairs, statistics = _methods(path, sections["Data Handle Method"])
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
