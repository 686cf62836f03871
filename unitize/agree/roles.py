"""Roles: humans and candidates (models) among a study's annotators, and the agreement each comparison needs.

A candidate is an annotator with the role *candidate* — a model's output, read like any other
annotator's — not a data path of its own. Candidates come in **families**: the runs of one model
(``gpt-run1`` … ``gpt-run5``). A candidate spec (``[roles] candidates`` of the study file, or
``unitize agree --candidates``) is

- an annotator's name (a family of one, named after it);
- ``FAMILY=A+B+C`` — the runs A, B, C of the family FAMILY;
- a range ``NAME1..5`` — the runs NAME1 … NAME5, family NAME (``gpt-run1..5``: family ``gpt-run``).

The humans are ``[roles] humans`` (or ``--humans``), else every annotator that is not a candidate.
With roles, ``unitize agree`` measures the humans alone (the results table), and beside it
(:func:`comparisons`) every pair of a human and an annotator (human–human: the human ceiling;
candidate–human) and each family's runs together (run-to-run stability), each with the metrics and
intervals asked for, into ``roles.csv``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import pyarrow as pa

from ..dataset import OutputData
from ..errors import RunError

#: the kinds of comparison a row of roles.csv is
HUMAN_HUMAN, CANDIDATE_HUMAN, STABILITY = "human-human", "candidate-human", "stability"
_RANGE = re.compile(r"^(?P<name>.*?)(?P<first>\d+)\.\.(?P<last>\d+)$")
#: the columns of roles.csv
COLUMNS = ("setting", "group", "layer", "metric", "comparison", "family", "annotator_a", "annotator_b", "pair", "value", "reason",
           "ci_low", "ci_high", "units")


@dataclass
class Roles:
    """The humans and the candidate families of a study (annotators by name, each family's runs in order)."""

    humans: list[str]
    families: dict[str, list[str]] = field(default_factory=dict)

    @property
    def candidates(self) -> list[str]:
        return [run for runs in self.families.values() for run in runs]

    def family_of(self, candidate: str) -> str:
        return next(name for name, runs in self.families.items() if candidate in runs)


def _few(names: Sequence[str], shown: int = 10) -> str:
    """Names for a message: the first ``shown`` and how many more."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown:,} more" if len(names) > shown else "")


def parse_candidates(specs: Sequence[str], annotators: int | None = None) -> dict[str, list[str]]:
    """Candidate specs (see the module docstring) → family → runs; a range of more runs than the study's
    ``annotators`` (when given) is refused before it is spelled out."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, members = spec.partition("=")
        if sep:
            runs = [r.strip() for r in members.split("+") if r.strip()]
        elif (m := _RANGE.match(spec)) is not None:
            first, last = int(m["first"]), int(m["last"])
            if last < first:
                raise RunError(f"candidate range {spec!r} runs backwards; write it low..high, e.g. gpt-run1..5")
            if annotators is not None and last - first + 1 > annotators:
                raise RunError(f"candidate range {spec[:80]!r} names {last - first + 1:,} runs, more than the {annotators:,} "
                               "annotators of the study; give the range of runs there are, e.g. gpt-run1..5")
            name, runs = m["name"].rstrip("-_. ") or spec, [f"{m['name']}{k}" for k in range(first, last + 1)]
        else:
            runs = [spec]
        if not name.strip() or not runs:
            raise RunError(f"candidate {spec!r}: give an annotator, FAMILY=A+B, or a range NAME1..5")
        family = out.setdefault(name.strip(), [])
        had = set(family)
        family.extend(r for r in dict.fromkeys(runs) if r not in had)
    return out


def resolve(data: OutputData, candidates: Sequence[str] | None = None, humans: Sequence[str] | None = None) -> Roles | None:
    """The roles of a study: the ones given here, else the study file's (``[roles]``, in the manifest); None
    without candidates. A candidate or human that is not an annotator, a run in two roles, or fewer than
    two humans is a clear error."""
    declared = (data.manifest.get("settings") or {}).get("roles") or {}
    specs = list(candidates) if candidates else list(declared.get("candidates") or [])
    if not specs:
        if humans:
            raise RunError("--humans without candidates: name the candidates (--candidates NAME[,NAME]) or [roles] candidates")
        return None
    known = sorted({a for s in data.settings for a in s.annotators})
    families = parse_candidates(specs, len(known))
    runs = [r for rs in families.values() for r in rs]
    known_set = set(known)
    unknown = [r for r in runs if r not in known_set]
    if unknown:
        raise RunError(f"candidate(s) {_few(unknown)} are not annotators of {data.path}; the annotators are {_few(known, 50)}")
    if len(set(runs)) != len(runs):
        raise RunError(f"a run is in two candidate families: {', '.join(sorted({r for r in runs if runs.count(r) > 1}))}")
    chosen = list(humans) if humans else list(declared.get("humans") or [a for a in known if a not in runs])
    bad = [h for h in chosen if h not in known_set]
    if bad:
        raise RunError(f"human(s) {_few(bad)} are not annotators of {data.path}; the annotators are {_few(known, 50)}")
    both = [h for h in chosen if h in runs]
    if both:
        raise RunError(f"{', '.join(both)} cannot be both a human and a candidate")
    if len(chosen) < 2:
        raise RunError(f"fewer than two humans ({', '.join(chosen) or 'none'}): comparing a candidate with humans needs at "
                       "least two; name them with --humans or [roles] humans")
    return Roles(chosen, families)


def comparisons(roles: Roles) -> list[tuple[str, str, tuple[str, ...]]]:
    """(comparison, family, the annotators measured together): every human pair, every candidate with every
    human, and each family of two or more runs."""
    out: list[tuple[str, str, tuple[str, ...]]] = [(HUMAN_HUMAN, "", (a, b)) for a, b in combinations(roles.humans, 2)]
    out += [(CANDIDATE_HUMAN, family, (c, h)) for family, runs in roles.families.items() for c in runs for h in roles.humans]
    out += [(STABILITY, family, tuple(runs)) for family, runs in roles.families.items() if len(runs) > 1]
    return out


def rows_of(results: pa.Table, comparison: str, family: str, annotators: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of roles.csv from one comparison's results table (whole cells and their pairs, no breakdowns)."""
    out = []
    for r in results.to_pylist():
        if r["label"] is not None or r["doc"] is not None or r["annotator"] is not None:
            continue
        a, b = annotators if len(annotators) == 2 else (r["annotator_a"], r["annotator_b"])  # a pair: the candidate first
        out.append({"setting": r["setting"], "group": r["group"], "layer": r["layer"], "metric": r["metric"], "comparison": comparison,
                    "family": family or None, "annotator_a": a, "annotator_b": b, "pair": r["pair"], "value": r["value"],
                    "reason": r["reason"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "units": r["units_used"]})
    return out


def ceiling(rows: list[dict[str, Any]], metric: str) -> list[str]:
    """On screen: per setting and layer, the mean of ``metric`` over the human pairs, over each candidate's
    pairs with the humans, and each family's stability (whole-cell rows; pairs' means where a metric has pairs)."""
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in rows:
        if r["metric"] != metric or r["value"] is None or r["value"] != r["value"] or r["pair"] not in (None, "mean"):
            continue
        if r["comparison"] == STABILITY and r["pair"] is None and any(x["pair"] == "mean" for x in rows if x["metric"] == metric):
            continue
        who = "humans" if r["comparison"] == HUMAN_HUMAN else (r["annotator_a"] if r["comparison"] == CANDIDATE_HUMAN else f"{r['family']} runs")
        cells.setdefault((r["setting"], r["layer"]), {}).setdefault(who, []).append(float(r["value"]))
    lines = [f"human ceiling ({metric}: mean over pairs; candidates with each human; runs with each other):"] if cells else []
    for (setting, layer), by in sorted(cells.items()):
        shown = ", ".join(f"{who} {sum(v) / len(v):.3f}" for who, v in by.items())
        lines.append(f"  {setting} {layer}: {shown}")
    return lines
