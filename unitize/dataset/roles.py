"""Roles: humans and candidates (models) among the annotators of an output directory.

A candidate is an annotator with the role *candidate* — a model's output, read like any other
annotator's. Candidates come in **families**: the runs of one model (``gpt-run1`` … ``gpt-run5``).
A candidate spec (``[roles] candidates`` of the study file, or ``--candidates``) is

- an annotator's name (a family of one, named after it);
- ``FAMILY=A+B+C`` — the runs A, B, C of the family FAMILY;
- a range ``NAME1..5`` — the runs NAME1 … NAME5, family NAME (``gpt-run1..5``: family ``gpt-run``).

The humans are ``[roles] humans`` (or ``--humans``), else every annotator that is not a candidate.
:func:`resolve` reads them for every consumer: ``agree`` measures the humans alone and compares the
candidates with them (:mod:`unitize.agree.roles`), ``adjudicate`` lets the humans vote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RunError
from .directory import OutputData

#: the kinds of comparison a row of roles.csv is
HUMAN_HUMAN, CANDIDATE_HUMAN, STABILITY = "human-human", "candidate-human", "stability"

_RANGE = re.compile(r"^(?P<name>.*?)(?P<first>\d+)\.\.(?P<last>\d+)$")


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


def annotators_of(data: OutputData) -> list[str]:
    """Every annotator of an output directory, of any setting, sorted."""
    return sorted({a for s in data.settings for a in s.annotators})


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
    known = annotators_of(data)
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


def ceiling_values(rows: list[dict[str, Any]], metric: str) -> dict[tuple[str, str], dict[str, list[float]]]:
    """Per (setting, layer): the values of ``metric`` over the human pairs (``humans``), over each candidate's pairs with
    the humans (the candidate's name) and each family's stability (``<family> runs``) — whole-cell rows; a pair's row
    where the comparison has no mean."""
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    # a family of more than two runs has a mean over its pairs; a comparison of two annotators its one pair's row
    means = {(r["setting"], r["layer"], r["comparison"], r["family"]) for r in rows if r["metric"] == metric and r["pair"] == "mean"}
    for r in rows:
        if r["metric"] != metric or r["value"] is None or r["value"] != r["value"] or r["annotator_a"] is None and r["comparison"] != STABILITY:
            continue
        if r["pair"] not in (None, "mean") and (r["setting"], r["layer"], r["comparison"], r["family"]) in means:
            continue
        if r["comparison"] == STABILITY and r["pair"] is None and any(x["pair"] == "mean" for x in rows if x["metric"] == metric):
            continue
        who = "humans" if r["comparison"] == HUMAN_HUMAN else (r["annotator_a"] if r["comparison"] == CANDIDATE_HUMAN else f"{r['family']} runs")
        cells.setdefault((r["setting"], r["layer"]), {}).setdefault(who, []).append(float(r["value"]))
    return cells
