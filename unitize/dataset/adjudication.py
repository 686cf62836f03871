"""What ``unitize adjudicate`` leaves in an output directory (``OUT/adjudication/``), named once and read back.

The adjudication (:mod:`unitize.adjudicate`) writes these files; the report reads them
through :func:`read_adjudication`, never through the adjudication package:

- ``units.parquet`` — per unit (item) of the adjudicated setting: the gold value, the votes
  for it, the annotators who coded it, the confidence, tied, and whether it is up for review;
- ``spans.parquet`` — the gold spans (unit data): runs of units whose gold holds one label;
- ``review.csv`` and ``review.jsonl`` — the review queue: regions of low confidence or tied
  votes, in the order of ``unitize export --to disagreements``, with their text;
- ``candidates.csv`` — with annotators who did not vote (the candidates of ``[roles]``): each scored
  against the gold (accuracy on units, exact span F1; :mod:`unitize.adjudicate.candidates`);
- ``summary.json`` — the method, its parameters, the setting and the counts.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..output.derived import ADJUDICATION_FILES as FILES
from ..output.derived import is_adjudication

#: the folder of an output directory that holds an adjudication
FOLDER = "adjudication"
UNITS, SPANS, REVIEW_CSV, REVIEW_JSONL, CANDIDATES, SUMMARY = FILES
#: the columns the review queue adds to a region's row (:data:`unitize.dataset.region_rows.COLUMNS`)
REVIEW_COLUMNS = ("gold", "confidence", "tied", "why")


def read_adjudication(out: Path, limit: int | None = None) -> dict[str, Any] | None:
    """``OUT/adjudication``'s summary and its review queue (the first ``limit`` rows), or None when absent."""
    folder = Path(out) / FOLDER
    if not is_adjudication(folder):
        return None
    try:
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
        rows: list[dict[str, Any]] = []
        with (folder / REVIEW_JSONL).open(encoding="utf-8") as fh:
            for line in fh:
                if limit is not None and len(rows) >= limit:
                    break
                rows.append(json.loads(line))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{folder} cannot be read ({exc}); run `unitize adjudicate {out}` again") from None
    candidates = []
    if (folder / CANDIDATES).is_file():
        with (folder / CANDIDATES).open(encoding="utf-8", newline="") as fh:
            candidates = [{k: v if k in ("setting", "candidate") else _number(v) for k, v in r.items()} for r in csv.DictReader(fh)]
    return {"summary": summary, "review": rows, "candidates": candidates}


def _number(text: str) -> Any:
    """A count or a share of candidates.csv as a number (empty: None)."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)
