"""``unitize export``: a unitize output directory in the shapes other tools read.

Formats (each writes into its own folder, plus ``index.csv`` naming every file
with its setting, group, layer, rows written and rows left out):

* ``rat`` — the RAT's binary format of annotations (Yalçınkaya 2010 §5.4):
  per setting and group, one ``.dat`` file per layer and one for all layers
  laid end to end (``Both<layers>``); one line per annotator (in the order of
  ``index.csv``), space-delimited 0/1 per unit. Only units every annotator
  coded are written (the RAT had no missing data).
* ``reliability-csv`` — coder × unit matrix per (setting, group, layer), a
  header of item names, missing values empty (R ``irr::kripp.alpha``,
  Krippendorff's calculators, ``krippendorff.alpha``).
* ``long-csv`` — ``coder,item,label`` rows per (setting, layer), items named
  ``group/doc/unit`` (``group/item`` for item labels); missing values are
  simply absent.
* ``nltk`` — the same triples, tab-separated without a header, as NLTK's
  ``AnnotationTask`` examples read them.
* ``pygamma`` — headerless ``annotator,category,start,end`` per (unit type,
  group) from the segments, category = layer (or the label for label data),
  positions in units (token numbers for words) or characters, the group's
  documents laid end to end; zero-length segments are never written.
* ``fleiss-table`` — subjects × categories counts per (setting, group, layer)
  (statsmodels ``fleiss_kappa``), only units with a complete set of raters.
* ``disagreements`` — one row per disagreement region (a maximal run of units
  of one document where the annotators' values are not all equal), per setting
  a CSV and a JSON lines file sorted for adjudication (:mod:`.disagreements`).
"""

from __future__ import annotations

from pathlib import Path

from ..dataset.directory import OutputData
from ..errors import DataError
from ..output import atomic_write_text, locks_output, refuse_foreign, staged_folder
from .disagreements import export_disagreements
from .formats import (
    FORMATS,
    POSITIONS,
    Exported,
    FileNames,
    csv_text,
    export_fleiss,
    export_long,
    export_pygamma,
    export_rat,
    export_reliability,
    safe_name,
)


@locks_output
def export(
    out: Path | str,
    to: str,
    dest: Path | str | None = None,
    *,
    settings: list[str] | None = None,
    groups: list[str] | None = None,
    positions: str = "units",
    per_document: bool | None = None,
) -> tuple[Path, list[Exported]]:
    """Export an output directory to format ``to``; return the folder and the files written.

    The folder is written beside its final place and swapped in whole, so it holds
    exactly the files its ``index.csv`` lists; a folder that holds other files (no
    ``index.csv`` of an earlier export) is never replaced.
    """
    if to not in FORMATS:
        raise ValueError(f"unknown export format {to!r}; choose from {', '.join(FORMATS)}")
    data = OutputData(Path(out))
    final = Path(dest) if dest is not None else data.path / "exports" / to
    refuse_foreign(final, lambda f: (f / "index.csv").is_file(), "an earlier export (no index.csv)")
    with staged_folder(final, "export") as staging:
        files = _write_format(data, to, staging, settings, groups, positions, per_document)
        if not files:
            raise DataError(f"nothing to export as {to} from {data.path}: {_why_nothing(data, to, settings, groups)}")
        index: list[tuple[object, ...]] = [("file", "setting", "group", "layer", "rows", "left_out", "note")]
        index += [(f.path, f.setting, f.group, f.layer, f.rows, f.left_out, f.note) for f in files]
        atomic_write_text(staging / "index.csv", csv_text(index))
    return final, files


def _write_format(data: OutputData, to: str, dest: Path, settings: list[str] | None, groups: list[str] | None, positions: str,
                  per_document: bool | None = None) -> list[Exported]:
    if settings:
        for name in settings:
            data.setting(name)  # an unknown setting is an error naming the known ones
    if groups:
        known = sorted({g for s in data.settings for g in data.groups(s)})
        unknown = [g for g in groups if g not in known]
        if unknown:
            raise DataError(f"no group {', '.join(map(repr, unknown))} in {data.path}; groups are: {', '.join(known)}")
    if to == "rat":
        return export_rat(data, dest, settings, groups)
    if to == "reliability-csv":
        return export_reliability(data, dest, settings, groups)
    if to in ("long-csv", "nltk"):
        return export_long(data, dest, settings, groups, nltk=to == "nltk")
    if to == "fleiss-table":
        return export_fleiss(data, dest, settings, groups)
    if to == "disagreements":
        return export_disagreements(data, dest, settings, groups)
    return export_pygamma(data, dest, groups, positions, per_document)


def _why_nothing(data: OutputData, to: str, settings: list[str] | None, groups: list[str] | None) -> str:
    if to == "rat" and not any(s.kind == "units" and s.value == "binary" for s in data.settings if not settings or s.name in settings):
        return "the RAT format holds 0/1 unit matrices only (settings of mode separate), and none is selected"
    if to == "pygamma":
        return "no segments (pygamma reads segments/<unit>.parquet, written by span runs)"
    return "the selected settings and groups hold no matrices"


__all__ = ["FORMATS", "POSITIONS", "Exported", "FileNames", "export", "safe_name"]
