"""What a metric is: every fact about it in one frozen declaration, and how it is measured on a cell.

A :class:`Metric` says what it is called (name, title, the summary's letter), what it rests on
(:class:`Family`), what its values mean (:class:`Scale`, :class:`Rows`, the :class:`Band` a report
reads them on), what it needs (annotator identity), what it offers (breakdowns, resampling) and
how the summary and the diagnostics treat it. :class:`CodingMetric` measures the sufficient
statistics of a cell (:mod:`.stats`), :class:`SegmentMetric` its segments (:mod:`.segment`); both
give :class:`~.value.Value` rows, never an exception. The declarations are in :mod:`.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from .bootstrap import Replicates, interval
from .cells import Cell, MeasureOptions, SegmentCell, SegmentFormula
from .coefficients import mean_of
from .perdoc import Bulk
from .stats import Stats
from .value import Value, nan


class Family(Enum):
    """What a metric is computed from."""

    CODING = "coding"  # the unit × annotator matrix (its sufficient statistics)
    UNITIZING = "unitizing"  # the segments on the continuum, chance-corrected (alpha-U, the uα family, gamma)
    SPAN = "span"  # the segments, matched between annotator pairs (span F1)


class Scale(Enum):
    """What a value means."""

    COEFFICIENT = "chance-corrected coefficient"
    AGREEMENT = "agreement not corrected for chance"  # percent agreement, F1
    STATISTIC = "test statistic"  # Cochran's Q: no bands, not plotted


class Rows(Enum):
    """The rows a metric gives a cell."""

    ONE = "one value"
    PAIRS = "one value per annotator pair"
    MEAN = "the mean over annotator pairs"
    PAIRS_AND_MEAN = "one value per annotator pair and their mean"
    PER_VALUE = "one value per value (label)"


class Breakdown(Enum):
    """Rows beside the cell's own: each label against the others, each annotator against the others, each document."""

    LABEL = "label"
    ANNOTATOR = "annotator"
    DOCUMENT = "document"


class Resampling(Enum):
    """What the bootstrap resamples for an interval (``--ci``)."""

    UNITS = "units"
    DOCUMENTS = "documents"
    NONE = "none"


@dataclass(frozen=True)
class Band:
    """An interpretation scale: ordered cuts ``(lower bound or None, name, mark)``, highest first, and its source."""

    name: str
    source: str
    cuts: tuple[tuple[float | None, str, str], ...]

    def lower_bounds(self) -> tuple[float, ...]:
        """The cuts' lower bounds, highest first (the last cut, open below, has none)."""
        return tuple(low for low, _, _ in self.cuts if low is not None)

    def of(self, value: float | None) -> tuple[str, str] | None:
        """(mark, name) of a value on this scale; None without a value."""
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return None
        for low, name, mark in self.cuts:
            if low is None or value >= low:
                return mark, name
        return None


#: a coding metric's rows from the statistics: (statistics, level of measurement, 0/1 data) -> rows
CodingFormula = Callable[[Stats, str, bool], "list[Value]"]


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One metric and every fact about it (see the module docstring)."""

    name: str  # as the CLI, the results table and the study file write it
    title: str  # as a person reads it: "Krippendorff's alpha"
    help: str  # one line for --help and the docs
    family: Family
    scale: Scale
    rows: Rows
    #: the summary column's letter (the thesis's Table 14: Q, K, A, …); None: no one value per layer to summarise
    letter: str | None
    #: the preference as the summary's metric when none is named (lower first); None: never by default
    summary_rank: int | None
    band: Band | None  # the scale a report reads values on
    identity: bool  # needs each annotator's own coding (undefined on crowd data counted per unit)
    breakdowns: frozenset[Breakdown]
    resampling: Resampling
    default: bool = False  # among the metrics ``unitize agree`` computes when none are named
    marginal: bool = False  # chance term from the value marginals: the skewed-prevalence diagnostic concerns it
    compared: bool = False  # compared between the interval and the boundary approach (diagnostics)
    #: how the summary's one value is made from the pairs' rows (Rows.MEAN and PAIRS_AND_MEAN)
    pair_mean: str | None = None
    #: an optional package it needs: (module, the unitize extra that installs it)
    requires: tuple[str, str] | None = None

    def measure(self, cell: Cell, options: MeasureOptions) -> list[Value]:
        """The metric's rows on one cell (breakdowns and intervals as ``options`` ask)."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class CodingMetric(Metric):
    """A metric of the unit × annotator matrix, from its sufficient statistics."""

    formula: CodingFormula
    levels: tuple[str, ...] = ("nominal",)  # the levels of measurement it honours (others: its first)
    replicates: Replicates | None = None  # resampling units: its value on bootstrap replicates
    bulk: Bulk | None = None  # per document: every document's rows at once
    #: many pairs of annotators alone at once (statistics, level, 0/1 data, annotator index pairs): per pair its row,
    #: or None for a pair it leaves to be measured alone (:mod:`.pairwise`)
    pairwise: Callable[[Stats, str, bool, Sequence[tuple[int, int]]], list[Value | None]] | None = None

    def level(self, level: str) -> str:
        return level if level in self.levels else self.levels[0]

    def values(self, s: Stats, level: str, binary: bool, options: MeasureOptions) -> list[Value]:
        """The formula's rows on ``s``, with their bootstrap intervals when asked."""
        values = self.formula(s, self.level(level), binary)
        if options.ci and self.replicates is not None:
            values = [interval(self.replicates, s, v, self.level(level), options.ci) for v in values]
        return values

    def measure(self, cell: Cell, options: MeasureOptions) -> list[Value]:
        s, level, binary = cell.stats, cell.level, cell.binary
        out = self.values(s, level, binary, options)
        if Breakdown.DOCUMENT in self.breakdowns and cell.per_doc:  # from each document's statistics
            out += self._per_doc(cell.per_doc, level, binary, options)
        if options.by_annotator and Breakdown.ANNOTATOR in self.breakdowns and cell.crowd is None:
            out += self._per_annotator(s, level, binary, options)
        if options.by_label and Breakdown.LABEL in self.breakdowns and not binary and s.domain.size > 1:
            for i, value in enumerate(s.domain):  # category-specific: this value or another
                out += [replace(v, label=cell.label(value)) for v in self.values(s.one_vs_rest(i), "nominal", True, options)]
        return out

    def _per_doc(self, per_doc: list[tuple[str, Stats]], level: str, binary: bool, options: MeasureOptions) -> list[Value]:
        """Per document, from each document's statistics (every document at once where the metric can)."""
        if not options.ci and self.bulk is not None:
            rows = self.bulk(per_doc, level)
            if rows is not None:
                return rows
        return [replace(v, doc=doc) for doc, s in per_doc for v in self.values(s, level, binary, options)]

    def _per_annotator(self, s: Stats, level: str, binary: bool, options: MeasureOptions) -> list[Value]:
        """Each annotator with data against the others: the metric on their pooled pairings
        (:meth:`Stats.against_others`)."""
        out = []
        for i in np.flatnonzero(s.annotator_counts().sum(axis=1) > 0):
            values = [replace(v, pair=None) for v in self.values(s.against_others(int(i)), level, binary, options)]
            out += [replace(v, annotator=s.annotators[i]) for v in values]
        return out


@dataclass(frozen=True, kw_only=True)
class PairMeanMetric(CodingMetric):
    """A coding metric whose value is the mean of a per-pair metric's values (the mean Cohen's kappa);
    per annotator, the mean of that annotator's pairs."""

    of_pairs: Callable[[Stats], list[Value]]  # the per-pair rows it averages
    what: str  # how a row names the pairs' metric: "Cohen's kappa"

    def _per_annotator(self, s: Stats, level: str, binary: bool, options: MeasureOptions) -> list[Value]:
        pairs = self.of_pairs(s)
        out = []
        for i in np.flatnonzero(s.annotator_counts().sum(axis=1) > 0):
            name = s.annotators[i]
            mine = [v for v in pairs if v.pair and name in v.pair.split("|")]
            out.append(replace(mean_of(mine, f"{self.what} with {name}"), annotator=name))
        return out


@dataclass(frozen=True, kw_only=True)
class SegmentMetric(Metric):
    """A metric of the segments on the continuum (the unitizing and span families)."""

    formula: SegmentFormula
    called: str | None = None  # how its messages name it, when not by its name ("alpha-U")
    #: many pairs of annotators alone at once, where it can (the pairs it leaves are measured one by one)
    pairwise: Callable[[SegmentCell, str, Sequence[tuple[str, str]]], dict[tuple[str, str], Value]] | None = None

    def measure(self, cell: Cell, options: MeasureOptions) -> list[Value]:
        name = self.called or self.name
        if cell.segments is None:
            return [nan(f"{name} needs segments on a continuum; item labels have none")]
        return self.formula(cell.segments(), options, name)
