"""The metrics of agreement: each declared once (:mod:`.registry`), with its formula, pure and I/O-free.

- :mod:`.registry` — every metric and every fact about it; what the rest of the code queries;
- :mod:`.metric` — what a metric is (:class:`Metric` and its facts) and how it is measured on a cell;
- :mod:`.cells` — the cell a metric is measured on, and the options of a measurement;
- coding metrics from the sufficient statistics: :mod:`.stats`, :mod:`.coefficients`,
  :mod:`.perdoc` (every document at once), :mod:`.bootstrap` (units resampled),
  :mod:`.backends` (the package-backed references the tests hold them against);
- segment metrics from the segments on a continuum: :mod:`.placed`, :mod:`.alphau`,
  :mod:`.unitizing`, :mod:`.spanf1`, :mod:`.segment`, :mod:`.spanboot` (documents resampled);
- :mod:`.alttest` — the Alternative Annotator Test (a candidate against each human), declared as
  ``ALT_TEST`` in the registry with its alignment scores.

``unitize agree`` (:mod:`unitize.agree`) reads the cells of an output directory and applies these.
"""

from .bootstrap import METHODS as CI_METHODS
from .bootstrap import Options
from .cells import Cell, GammaOptions, MeasureOptions, SegmentCell
from .metric import Band, Breakdown, CodingMetric, Family, Metric, Resampling, Rows, Scale, SegmentMetric
from .registry import (
    ALT_TEST,
    BREAKDOWN_COLUMNS,
    KRIPPENDORFF,
    LANDIS_KOCH,
    METRICS,
    UnknownMetric,
    alt_scores,
    bands,
    default,
    get,
    measure,
    names,
    resolve,
    summarizable,
    summary_metric,
    where,
    whole_mask,
    whole_row,
)
from .value import MissingDependency, Value, nan, require

__all__ = [
    "ALT_TEST",
    "BREAKDOWN_COLUMNS",
    "KRIPPENDORFF",
    "LANDIS_KOCH",
    "METRICS",
    "Band",
    "Breakdown",
    "Cell",
    "CodingMetric",
    "Family",
    "CI_METHODS",
    "GammaOptions",
    "MeasureOptions",
    "Metric",
    "MissingDependency",
    "Options",
    "Resampling",
    "Rows",
    "Scale",
    "SegmentCell",
    "SegmentMetric",
    "UnknownMetric",
    "Value",
    "alt_scores",
    "bands",
    "default",
    "get",
    "measure",
    "names",
    "nan",
    "require",
    "resolve",
    "summarizable",
    "summary_metric",
    "where",
    "whole_mask",
    "whole_row",
]
