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
"""

from __future__ import annotations

from pathlib import Path

from ..agree.data import OutputData
from ..output import atomic_write_text
from .formats import (
    FORMATS,
    POSITIONS,
    Exported,
    csv_text,
    export_fleiss,
    export_long,
    export_pygamma,
    export_rat,
    export_reliability,
    safe_name,
)


def export(
    out: Path | str,
    to: str,
    dest: Path | str | None = None,
    *,
    settings: list[str] | None = None,
    groups: list[str] | None = None,
    positions: str = "units",
) -> tuple[Path, list[Exported]]:
    """Export an output directory to format ``to``; return the folder and the files written."""
    if to not in FORMATS:
        raise ValueError(f"unknown export format {to!r}; choose from {', '.join(FORMATS)}")
    data = OutputData(Path(out))
    dest = Path(dest) if dest is not None else data.path / "exports" / to
    dest.mkdir(parents=True, exist_ok=True)
    if to == "rat":
        files = export_rat(data, dest, settings, groups)
    elif to == "reliability-csv":
        files = export_reliability(data, dest, settings, groups)
    elif to in ("long-csv", "nltk"):
        files = export_long(data, dest, settings, groups, nltk=to == "nltk")
    elif to == "fleiss-table":
        files = export_fleiss(data, dest, settings, groups)
    else:
        files = export_pygamma(data, dest, groups, positions)
    index = [("file", "setting", "group", "layer", "rows", "left_out", "note")]
    index += [(f.path, f.setting, f.group, f.layer, f.rows, f.left_out, f.note) for f in files]
    atomic_write_text(dest / "index.csv", csv_text(index))
    return dest, files


__all__ = ["FORMATS", "POSITIONS", "Exported", "export", "safe_name"]
