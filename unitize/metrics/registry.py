"""Every metric of ``unitize agree``, declared once: the one table the rest of the code queries.

Adding a metric is one declaration here, its formula (in :mod:`.coefficients` for a coding
metric, :mod:`.segment` for a segment metric) and its published-value test
(``tests/metrics/test_published.py``); the summary, the plots, the diagnostics, the report's
bands, the bootstrap, the per-document rows and the CLI's choices follow from the declaration.
``tests/metrics/test_registry.py`` fails when a fact is missing or is stated outside this table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import UnitizeError
from . import bootstrap, coefficients, pairwise, perdoc, segment, spanf1
from .alttest import AltScore, AltTest, Term
from .cells import Cell, MeasureOptions
from .metric import (
    Band,
    Breakdown,
    CodingMetric,
    Family,
    Metric,
    PairMeanMetric,
    Resampling,
    Rows,
    Scale,
    SegmentMetric,
)
from .stats import Stats
from .unitizing import Variant
from .value import Value, nan

#: Krippendorff's standard: rely on .800 and above, tentative conclusions down to .667
KRIPPENDORFF = Band(
    "alpha",
    "Krippendorff (2004), Content Analysis, 2nd ed., p. 241",
    ((0.8, "reliable (α ≥ .800)", "✓"), (0.667, "tentative conclusions only (.667 ≤ α < .800)", "~"),
     (None, "unreliable: discard (α < .667)", "✗")),
)
#: Landis & Koch's bands for kappa
LANDIS_KOCH = Band(
    "kappa",
    "Landis & Koch (1977), Biometrics 33(1), p. 165",
    ((0.81, "almost perfect (.81–1)", "AP"), (0.61, "substantial (.61–.80)", "S"), (0.41, "moderate (.41–.60)", "M"),
     (0.21, "fair (.21–.40)", "F"), (0.0, "slight (0–.20)", "Sl"), (None, "poor (< 0)", "P")),
)

_ALL = frozenset(Breakdown)
_NO_ANNOTATOR = frozenset({Breakdown.LABEL, Breakdown.DOCUMENT})
_DOCUMENT = frozenset({Breakdown.DOCUMENT})
_NONE: frozenset[Breakdown] = frozenset()


# --- the coding formulas as the registry calls them: (statistics, level, 0/1 data) -> rows ---------------


def _alpha(s: Stats, level: str, binary: bool) -> list[Value]:
    v = coefficients.alpha(s, level)
    v.params.setdefault("level", level)
    if not s.annotators:
        v.params["from"] = "value counts"
    return [v]


def _gwet(s: Stats, level: str, binary: bool) -> list[Value]:
    v = coefficients.ac2(s, level)
    v.params.setdefault("level", level)
    return [v]


def _cohen(s: Stats) -> list[Value]:
    return coefficients.cohen(s)


def _unitizing(name: str, title: str, letter: str | None, rank: int | None, variant: Variant, help: str,
               rows: Rows = Rows.ONE) -> SegmentMetric:
    """A member of Krippendorff's unitizing family: what the family's members share, stated once."""
    return SegmentMetric(name=name, title=title, letter=letter, summary_rank=rank, help=help, family=Family.UNITIZING,
                         scale=Scale.COEFFICIENT, rows=rows, band=None, identity=True, breakdowns=_DOCUMENT,
                         resampling=Resampling.DOCUMENTS, formula=segment.unitizing_rows(variant))


def _span_f1(name: str, title: str, letter: str, rank: int, match: spanf1.Match, help: str, pair_mean: str | None = None) -> SegmentMetric:
    """A span-F1 metric (one matching): a value per annotator pair and their mean."""
    return SegmentMetric(name=name, title=title, letter=letter, summary_rank=rank, help=help, family=Family.SPAN,
                         scale=Scale.AGREEMENT, rows=Rows.PAIRS_AND_MEAN, pair_mean=pair_mean or f"{title}, mean over annotator pairs",
                         band=None, identity=True, breakdowns=_NO_ANNOTATOR, resampling=Resampling.DOCUMENTS,
                         formula=segment.f1_rows(match))


METRICS: tuple[Metric, ...] = (
    SegmentMetric(
        name="alpha-u", title="Krippendorff's alpha-U", called="alpha-U", letter="A", summary_rank=0, default=True,
        help="Krippendorff's alpha-U (1995/2004) on the segments: boundaries and values together",
        family=Family.UNITIZING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=KRIPPENDORFF, identity=True,
        breakdowns=_NO_ANNOTATOR, resampling=Resampling.DOCUMENTS, compared=True, formula=segment.alpha_u_rows,
        pairwise=segment.alpha_u_pairs,
    ),
    CodingMetric(
        name="alpha", title="Krippendorff's alpha", letter="a", summary_rank=1, default=True,
        help="Krippendorff's alpha on the unit matrix (nominal; items at their declared level)",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=KRIPPENDORFF, identity=False,
        breakdowns=_ALL, resampling=Resampling.UNITS, marginal=True, compared=True,
        formula=_alpha, levels=coefficients.LEVELS, replicates=bootstrap.alpha_replicates, bulk=perdoc.alpha_rows,
        pairwise=pairwise.alpha,
    ),
    CodingMetric(
        name="fleiss", title="Fleiss' kappa", letter="K", summary_rank=2, default=True,
        help="Fleiss' kappa over the units every annotator coded, with its standard error",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=LANDIS_KOCH, identity=False,
        breakdowns=_NO_ANNOTATOR, resampling=Resampling.UNITS, marginal=True, compared=True,
        formula=lambda s, level, binary: [coefficients.fleiss(s)], replicates=bootstrap.fleiss_replicates,
        bulk=perdoc.fleiss_rows, pairwise=pairwise.fleiss,
    ),
    CodingMetric(
        name="cohen", title="Cohen's kappa", letter=None, summary_rank=None, default=True,
        help="Cohen's kappa of every annotator pair, with its standard error",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.PAIRS, band=LANDIS_KOCH, identity=True,
        breakdowns=_ALL, resampling=Resampling.UNITS, marginal=True,
        formula=lambda s, level, binary: _cohen(s), replicates=bootstrap.pair_replicates(coefficients.kappa_only),
        bulk=perdoc.pair_rows("Cohen's kappa", coefficients.kappa_table),
    ),
    PairMeanMetric(
        name="cohen-mean", title="mean Cohen's kappa", letter="k", summary_rank=6, pair_mean="the mean of the pairs' Cohen's kappa",
        help="the mean of the annotator pairs' Cohen's kappa",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.MEAN, band=LANDIS_KOCH, identity=True,
        breakdowns=_ALL, resampling=Resampling.NONE, marginal=True, compared=True,
        formula=lambda s, level, binary: [coefficients.mean_of(_cohen(s), "Cohen's kappa")], of_pairs=_cohen, what="Cohen's kappa",
    ),
    CodingMetric(
        name="scott", title="Scott's pi", letter=None, summary_rank=None,
        help="Scott's pi of every annotator pair",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.PAIRS, band=LANDIS_KOCH, identity=True,
        breakdowns=_ALL, resampling=Resampling.UNITS, marginal=True,
        formula=lambda s, level, binary: coefficients.scott(s), replicates=bootstrap.pair_replicates(coefficients.scott_table),
        bulk=perdoc.pair_rows("Scott's pi", lambda t: (coefficients.scott_table(t), None)),
    ),
    CodingMetric(
        name="ac1", title="Gwet's AC1", letter="AC1", summary_rank=3,
        help="Gwet's AC1 (nominal), robust where one value dominates",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=KRIPPENDORFF, identity=False,
        breakdowns=_ALL, resampling=Resampling.UNITS, formula=_gwet, replicates=bootstrap.ac1_replicates,
    ),
    CodingMetric(
        name="ac2", title="Gwet's AC2", letter="AC2", summary_rank=4,
        help="Gwet's AC2: AC1 with the weights of the items' level of measurement",
        family=Family.CODING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=KRIPPENDORFF, identity=False,
        breakdowns=_ALL, resampling=Resampling.UNITS, formula=_gwet, levels=coefficients.LEVELS,
        replicates=bootstrap.ac2_replicates,
    ),
    CodingMetric(
        name="percent", title="percent agreement", letter="P", summary_rank=5,
        help="the share of agreeing pairs of values within units (not corrected for chance)",
        family=Family.CODING, scale=Scale.AGREEMENT, rows=Rows.ONE, band=None, identity=False,
        breakdowns=_ALL, resampling=Resampling.UNITS,
        formula=lambda s, level, binary: [coefficients.percent(s)], replicates=bootstrap.percent_replicates,
    ),
    CodingMetric(
        name="cochran-q", title="Cochran's Q", letter="Q", summary_rank=14, default=True,
        help="Cochran's Q test of the annotators' marginal homogeneity (0/1 data), with df and p-value",
        family=Family.CODING, scale=Scale.STATISTIC, rows=Rows.ONE, band=None, identity=True,
        breakdowns=_NONE, resampling=Resampling.NONE, formula=lambda s, level, binary: [coefficients.cochran_q(s, binary)],
        pairwise=pairwise.cochran_q,
    ),
    SegmentMetric(
        name="gamma", title="gamma", letter="G", summary_rank=7,
        help="Mathet et al.'s gamma (pygamma-agreement: pip install 'unitize[gamma]')",
        family=Family.UNITIZING, scale=Scale.COEFFICIENT, rows=Rows.ONE, band=KRIPPENDORFF, identity=True,
        breakdowns=_NONE, resampling=Resampling.NONE, compared=True, formula=segment.gamma_rows,
        requires=("pygamma_agreement", "gamma"),
    ),
    _unitizing("u-alpha", "Krippendorff's uα", "uA", 8, Variant.U, "Krippendorff's uα (2016): units, gaps and values together"),
    _unitizing("|u-alpha", "Krippendorff's |uα (units against gaps)", "buA", 9, Variant.BINARY,
               "Krippendorff's |uα: what is a unit and what a gap, values ignored"),
    _unitizing("cu-alpha", "Krippendorff's cuα (values of intersecting units)", "cuA", 10, Variant.CU,
               "Krippendorff's cuα: the values of intersecting units, with its coverage"),
    _unitizing("ku-alpha", "Krippendorff's (k)uα (per value)", None, None, Variant.K,
               "Krippendorff's (k)uα for every value k, with its coverage", rows=Rows.PER_VALUE),
    _span_f1("span-f1", "span F1, exact match", "F1", 11, spanf1.EXACT,
             "span F1 of every annotator pair, spans matched by value and exact extent, and their mean"),
    _span_f1("span-f1-overlap", "span F1, overlap match", "F1o", 12, spanf1.OVERLAP,
             "span F1, spans matched by value and a unit in common (one to one), and their mean"),
    _span_f1("unit-f1", "unit F1", "uF1", 13, spanf1.UNITS,
             "F1 over the units both annotators marked with the same value, and the pairs' mean",
             pair_mean="F1 over units marked alike, mean over annotator pairs"),
)

_BY_NAME = {m.name: m for m in METRICS}

#: the Alternative Annotator Test and its alignment scores (``unitize agree --candidates … --alt-test``); the first
#: score of a kind of data is its default
ALT_TEST = AltTest(
    name="alt-test", title="Alternative Annotator Test",
    source="Calderon, Reichart & Dror (2025), The Alternative Annotator Test for LLM-as-a-Judge, ACL 2025",
    help="can the candidate replace a human? each human left out in turn, the candidate and the human scored against the "
         "remaining humans; passed when the candidate wins against at least half of the humans",
    scores=(
        AltScore("accuracy", "accuracy", "item labels: the share of the remaining humans who gave the same label",
                 kind="items", term=Term.SAME),
        AltScore("neg-rmse", "negative RMSE", "numeric item labels: minus the root mean squared difference to the remaining humans",
                 kind="items", term=Term.SQUARED, root=True),
        AltScore("span-f1", "span F1", "span data: the mean over the remaining humans of the document's span F1 (exact match, "
                 "labels too in label settings; 1 when both marked nothing)", kind="units", term=Term.F1),
        AltScore("unit-accuracy", "unit accuracy", "span data: the mean over the remaining humans of the share of the document's "
                 "units (all its layers) coded alike", kind="units", term=Term.UNITS),
    ),
)


class UnknownMetric(UnitizeError):
    """A metric name that is not in the registry (a usage error: the message lists the choices)."""


def alt_scores() -> tuple[str, ...]:
    """The alt-test's alignment scores, by name."""
    return tuple(s.name for s in ALT_TEST.scores)


def names() -> tuple[str, ...]:
    """Every metric's name, in the registry's order."""
    return tuple(_BY_NAME)


def get(name: str) -> Metric:
    """The metric called ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownMetric(f"unknown metric {name!r}; choose from {', '.join(_BY_NAME)}") from None


def resolve(chosen: Iterable[str | Metric]) -> list[Metric]:
    """Metrics from names (or metrics); unknown names are refused together."""
    chosen = list(chosen)
    unknown = [m for m in chosen if isinstance(m, str) and m not in _BY_NAME]
    if unknown:
        raise UnknownMetric(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(_BY_NAME)}")
    return [m if isinstance(m, Metric) else _BY_NAME[m] for m in chosen]


def default() -> tuple[str, ...]:
    """The metrics ``unitize agree`` computes when none are named."""
    return tuple(m.name for m in METRICS if m.default)


def summarizable() -> tuple[str, ...]:
    """Metrics with one value per layer: the summary can take them."""
    return tuple(m.name for m in METRICS if m.letter is not None)


def where(**facts: object) -> tuple[Metric, ...]:
    """The metrics whose facts equal the given ones, e.g. ``where(family=Family.SPAN)``."""
    return tuple(m for m in METRICS if all(getattr(m, k) == v for k, v in facts.items()))


def bands() -> tuple[Band, ...]:
    """Every interpretation band a metric is read on, each once, in the registry's order."""
    return tuple(dict.fromkeys(m.band for m in METRICS if m.band is not None))


def summary_metric(computed: Sequence[str], rows: Iterable[dict] | None = None) -> str | None:
    """The summary's metric when none is named: of the metrics computed that a summary can take, the
    first by summary rank that has a value in ``rows`` (results rows of whole cells) — alpha-U for
    span data, alpha where alpha-U has none (item labels, crowd data) — else the first by rank."""
    rankable = [(m.summary_rank, m) for m in resolve(n for n in computed if n in _BY_NAME) if m.summary_rank is not None]
    ranked = [m for _, m in sorted(rankable, key=lambda pair: pair[0])]
    if not ranked:
        return None
    if rows is not None:
        valued = {r["metric"] for r in rows if whole_row(r) and r.get("value") is not None and r["value"] == r["value"]}
        for m in ranked:
            if m.name in valued:
                return m.name
    return ranked[0].name


#: the results columns that say a row is a breakdown of its (setting, group, layer): set on a breakdown's row
BREAKDOWN_COLUMNS = ("label", "doc", "annotator")


def whole_row(row: dict) -> bool:
    """A results row of a whole (setting, group, layer): no label, document or annotator breakdown."""
    return row.get("label") is None and row.get("doc") is None and row.get("annotator") is None  # BREAKDOWN_COLUMNS, unrolled


def whole_mask(rows: Any) -> Any:
    r"""Which rows of a results table or record batch are :func:`whole_row`\ s, as an Arrow boolean array (a breakdown
    column the rows lack is null throughout): the rows of a ``--by-doc`` run are never made Python objects for it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    whole = pa.array([True] * rows.num_rows, pa.bool_())
    for name in BREAKDOWN_COLUMNS:
        if name in rows.schema.names:
            whole = pc.and_(whole, pc.is_null(rows.column(name)))
    return whole


def measure(metric: Metric, cell: Cell, options: MeasureOptions) -> list[Value]:
    """A metric's rows on one cell; on crowd data counted per unit, a metric that needs each
    annotator's own coding is a NaN that says so."""
    if cell.crowd is not None and metric.identity:
        crowd = ", ".join(m.name for m in METRICS if not m.identity)
        return [nan(f"{cell.crowd} annotators, a few per unit: measured from value counts per unit ({crowd}); "
                    f"{metric.name} needs each annotator's own coding of every unit")]
    return metric.measure(cell, options)
