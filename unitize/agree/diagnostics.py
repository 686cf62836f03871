"""Diagnostics beside the numbers: what in the data makes a value undefined, unstable or misleading,
each with a plain-language suggestion.

Every diagnostic has a stable code. :func:`of_cell` finds them in the statistics of one (setting,
group, layer), :func:`all_nan` in its rows, :func:`across_approaches` between the interval and the
boundary setting of the same unit type; :func:`attach` writes them, as a JSON list of ``{code,
detail, suggestion}``, into the ``diagnostics`` column of the rows they concern (the rows without a
label, document or annotator breakdown); :func:`screen_lines` words one line per code for the
screen. The conditions, precisely:

- ``too-few-units``: fewer than :data:`MIN_UNITS` units are coded by two or more annotators (the
  units alpha, AC1/AC2 and percent agreement use).
- ``one-category``: every value given to a unit coded by two or more annotators is the same one.
- ``skewed-prevalence``: two or more values occur and the most frequent is at least
  :data:`PREVALENCE` of the values given to units coded by two or more annotators (on the rows of
  the marginal-based coefficients: alpha, Fleiss, Cohen, Scott).
- ``annotator-empty``: an annotator with data in the layer gave only the "not annotated" value
  (0 in 0/1 and bit-mask matrices, the ``not_annotated`` label, ``O``, in label matrices) while
  another annotator marked something.
- ``pair-no-shared-units``: two annotators with data coded no unit in common.
- ``annotator-partial``: an annotator with data coded fewer than half of the documents someone coded in the
  cell (span data; the coverage rule: a pair is measured on the documents both coded, uα and alpha on
  every unit two or more coded, alpha-U and gamma on the documents every annotator coded).
- ``boundary-only-disagreement``: for the same unit type, mode, group, layer and coefficient (of :data:`COMPARED`), the
  interval setting's value is at least :data:`GOOD` and the boundary setting's below :data:`POOR`
  (Krippendorff's .800 and .667); ``interval-only-disagreement`` is the reverse.
- ``all-nan``: every metric of the cell is NaN (the reasons are in ``reason``).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import metrics as registry
from ..dataset.model import Setting
from ..metrics import KRIPPENDORFF
from ..metrics.stats import Stats

#: fewer units coded by two or more annotators than this: ``too-few-units`` (a common rule of thumb)
MIN_UNITS = 30
#: the most frequent value's share at or above which prevalence is ``skewed-prevalence``
PREVALENCE = 0.9
#: Krippendorff (2004): reliable at .800 and above, tentative conclusions down to .667 (the registry's band)
GOOD, POOR = KRIPPENDORFF.lower_bounds()[:2]
#: coefficients whose chance term comes from the marginals (the kappa paradox)
MARGINAL = tuple(m.name for m in registry.where(marginal=True))
#: coefficients compared between the interval and the boundary approach (not AC1/AC2 or percent
#: agreement: the boundary approach leaves mostly 0s, which inflates them whatever the annotators did)
COMPARED = tuple(m.name for m in registry.where(compared=True))

SUGGESTIONS = {
    "too-few-units": "a value from so few units is unstable: add --ci to see how wide its interval is, "
    "or pool units (a coarser grouping, more documents)",
    "one-category": "chance-corrected coefficients are undefined with a single category: report percent "
    "agreement, and check that the layer was annotated and read",
    "skewed-prevalence": "alpha and kappa fall at high agreement when one value dominates (the kappa "
    "paradox): report Gwet's AC1 (--metric ac1; ac2 for ordered values) and percent agreement beside them",
    "annotator-empty": "an annotator who marked nothing drags agreement down: check that their files were "
    "read (unitize info, report.jsonl) before reading the values",
    "pair-no-shared-units": "this pair's Cohen's kappa and Scott's pi are NaN (no overlap in the design); "
    "alpha, Fleiss' kappa and AC1 still use every unit coded by two annotators",
    "annotator-partial": "pairs with this annotator rest on the documents both coded (the documents column says how many), "
    "u-alpha and alpha on every unit two annotators coded; alpha-U and gamma keep only the documents every annotator coded: "
    "measure without the annotator (--humans) or read u-alpha beside alpha-U",
    "boundary-only-disagreement": "annotators agree on what is inside the spans but not on where they begin "
    "and end: make the guidelines precise about span edges (punctuation, the first and the last word)",
    "interval-only-disagreement": "annotators begin and end spans at the same places but differ in what lies "
    "between (a span split by one annotator, nested or discontinuous spans merged by another): compare "
    "their segments (segments/*.parquet)",
    "all-nan": "nothing could be measured here: the reason column says why for each metric",
}
#: the order of the codes on screen
CODES = tuple(SUGGESTIONS)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    detail: str
    metrics: tuple[str, ...] | None = None  # the rows it concerns (None: every metric of the cell)

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail, "suggestion": SUGGESTIONS[self.code]}


def _empty_value(setting: Setting, s: Stats, label: Callable[[float], str] | None) -> int | None:
    """The domain index of the "not annotated" value, if the data have one."""
    if setting.kind != "units":
        return None
    if label is not None:
        names = [label(v) for v in s.domain]
        return names.index(setting.not_annotated) if setting.not_annotated in names else None
    zero = np.flatnonzero(s.domain == 0.0)
    return int(zero[0]) if zero.size else None


def of_cell(setting: Setting, s: Stats, label: Callable[[float], str] | None = None) -> list[Diagnostic]:
    """The diagnostics of one (setting, group, layer)'s statistics."""
    name = label or (lambda v: f"{v:g}")
    out = []
    pairable = s.raters >= 2
    n = int(s.units[pairable].sum())
    if 0 < n < MIN_UNITS:
        out.append(Diagnostic("too-few-units", f"only {n} unit{'s' * (n != 1)} coded by two or more annotators"))
    totals = s.units[pairable] @ s.patterns[pairable] if n else np.zeros(s.domain.size, np.int64)
    used = np.flatnonzero(totals)
    if used.size == 1:
        out.append(Diagnostic("one-category", f"every value given is {name(s.domain[used[0]])}"))
    elif used.size > 1:
        top = int(totals.argmax())
        share = totals[top] / totals.sum()
        if share >= PREVALENCE:
            out.append(Diagnostic("skewed-prevalence", f"{name(s.domain[top])} is {share:.1%} of the values given", MARGINAL))
    if s.annotators:
        counts = s.annotator_counts()
        has = np.flatnonzero(counts.sum(axis=1) > 0)
        empty = _empty_value(setting, s, label)
        if empty is not None:
            silent = [int(a) for a in has if counts[a].sum() == counts[a, empty]]
            if silent and len(silent) < has.size:
                names = ", ".join(s.annotators[a] for a in silent)
                out.append(Diagnostic("annotator-empty", f"{names} marked nothing here ({name(s.domain[empty])} everywhere)"))
        apart = [f"{s.annotators[i]}|{s.annotators[j]}" for x, i in enumerate(has) for j in has[x + 1:] if s.pairs[i, j].sum() == 0]
        if apart:
            out.append(Diagnostic("pair-no-shared-units", f"no unit in common: {', '.join(apart)}"))
    return out


def partial(annotators: list[str], presence: np.ndarray) -> list[Diagnostic]:
    """``annotator-partial`` of a cell's coverage ((documents, annotators) bool, documents no one coded left out)."""
    coded = presence.sum(axis=0)
    n = presence.shape[0]
    few = [f"{a} coded {int(k)} of {n} documents" for a, k in zip(annotators, coded.tolist()) if k > 0 and 2 * k < n]
    return [Diagnostic("annotator-partial", "; ".join(few))] if few else []


def attach(rows: list[dict[str, Any]], found: Iterable[Diagnostic]) -> None:
    """Add diagnostics to the overall rows (no label, document or annotator) they concern."""
    found = list(found)
    whole = [r for r in rows if registry.whole_row(r)] if found else []
    for d in found:
        for r in whole:
            if d.metrics is None or r["metric"] in d.metrics:
                listed = json.loads(r["diagnostics"]) if r.get("diagnostics") else []
                r["diagnostics"] = json.dumps(listed + [d.as_dict()], ensure_ascii=False)


def all_nan(rows: list[dict[str, Any]]) -> list[Diagnostic]:
    """``all-nan`` when every overall row of a cell is NaN, with the reasons."""
    mine = [r for r in rows if registry.whole_row(r)]
    if not mine or any(r["value"] == r["value"] for r in mine):
        return []
    reasons = Counter(r["reason"] for r in mine)
    return [Diagnostic("all-nan", "; ".join(f"{reason} ({', '.join(sorted({r['metric'] for r in mine if r['reason'] == reason}))})"
                                            for reason, _ in reasons.most_common(3)))]


def compared(row: dict[str, Any]) -> bool:
    """Whether :func:`across_approaches` compares the row: a whole cell's (or its pairs' mean) coefficient of
    :data:`COMPARED` on the interval or the boundary approach."""
    return row["metric"] in COMPARED and row["approach"] in ("interval", "boundary") and registry.whole_row(row) and row["pair"] in (None, "mean")


def across_approaches(rows: list[dict[str, Any]]) -> None:
    """``boundary-only-disagreement`` / ``interval-only-disagreement`` between the interval and the
    boundary setting of the same unit type, mode, group, layer and coefficient (attached to both rows)."""
    by: dict[tuple, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if compared(r):
            by[(r["unit"], r["mode"], r["group"], r["layer"], r["metric"])][r["approach"]] = r
    for (_, _, _, _, metric), two in by.items():
        if len(two) < 2:
            continue
        i, b = two["interval"]["value"], two["boundary"]["value"]
        if not (np.isfinite(i) and np.isfinite(b)):
            continue
        code = "boundary-only-disagreement" if i >= GOOD > POOR > b else "interval-only-disagreement" if b >= GOOD > POOR > i else None
        if code:
            d = Diagnostic(code, f"{metric} {i:.3f} on the interval approach ({two['interval']['setting']}), "
                                 f"{b:.3f} on the boundary approach ({two['boundary']['setting']})", (metric,))
            attach([two["interval"], two["boundary"]], [d])


def redo_across_approaches(rows: list[dict[str, Any]]) -> None:
    """:func:`across_approaches` anew on rows measured in several runs (its earlier findings removed first)."""
    codes = ("boundary-only-disagreement", "interval-only-disagreement")
    for r in rows:
        if r.get("diagnostics"):
            listed = [d for d in json.loads(r["diagnostics"]) if d["code"] not in codes]
            r["diagnostics"] = json.dumps(listed, ensure_ascii=False) if listed else None
    across_approaches(rows)


def screen_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per diagnostic code: in how many cells, an example, the suggestion."""
    cells: dict[str, dict[tuple, str]] = defaultdict(dict)
    total = set()
    for r in rows:
        if not registry.whole_row(r):
            continue
        key = (r["setting"], r["group"], r["layer"])
        total.add(key)
        for d in json.loads(r["diagnostics"]) if r.get("diagnostics") else ():
            cells[d["code"]].setdefault(key, d["detail"])
    out = []
    for code in CODES:
        if code in cells:
            (setting, group, layer), detail = next(iter(cells[code].items()))
            n = len(cells[code])
            out.append(f"diagnostic {code}: {n} of {len(total)} cells (e.g. {setting} {group} {layer}: {detail}). "
                       f"{SUGGESTIONS[code][0].upper()}{SUGGESTIONS[code][1:]}.")
    return out
