"""The metric registry is the one place a metric's facts live (unitize/metrics/registry.py).

The walk over the registry fails when a declaration lacks a fact or states two that contradict
each other; the scan of the package fails when a metric's name is written as a string anywhere
else — the sign of a fact declared outside the registry (a table keyed by metric names, an
if-chain on a name).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize import metrics
from unitize.metrics import Breakdown, CodingMetric, Family, Resampling, Rows, Scale, SegmentMetric

PACKAGE = ROOT / "unitize"
REGISTRY = PACKAGE / "metrics" / "registry.py"
#: modules that may write a metric's name, and why
ALLOWED = {
    PACKAGE / "config" / "rat.py": "RAT's legacy configuration names its statistics in its own words, recorded as read",
}


def test_the_alt_test_is_declared_with_a_default_score_for_each_kind_of_data() -> None:
    alt = metrics.ALT_TEST
    assert (alt.epsilon, alt.q, alt.min_instances, alt.passing) == (0.2, 0.05, 30, 0.5)
    assert [alt.default_score(kind).name for kind in ("items", "units")] == ["accuracy", "span-f1"]
    assert len(set(metrics.alt_scores())) == len(alt.scores) and all(len(s.help) > 10 for s in alt.scores)


@pytest.mark.parametrize("m", metrics.METRICS, ids=lambda m: m.name)
def test_every_declaration_is_complete_and_consistent(m: metrics.Metric) -> None:
    assert m.name and m.title and len(m.help) > 10 and m.help == m.help.strip()
    assert isinstance(m.family, Family) and isinstance(m.scale, Scale) and isinstance(m.rows, Rows)
    assert isinstance(m.resampling, Resampling) and m.breakdowns <= frozenset(Breakdown)
    # the family says which kind of metric measures it
    assert isinstance(m, CodingMetric) == (m.family is Family.CODING)
    assert isinstance(m, SegmentMetric) == (m.family is not Family.CODING)
    # resampling: units for a coding metric with replicates, documents for a segment metric
    if isinstance(m, CodingMetric):
        assert (m.replicates is not None) == (m.resampling is Resampling.UNITS)
        assert m.levels and m.levels[0] == "nominal"
    else:
        assert m.resampling in (Resampling.DOCUMENTS, Resampling.NONE)
    # a summary column only for one value per layer; a default summary rank only with a letter
    assert (m.letter is not None) == (m.rows in (Rows.ONE, Rows.MEAN, Rows.PAIRS_AND_MEAN))
    assert m.summary_rank is None or m.letter is not None
    assert (m.pair_mean is not None) == (m.rows in (Rows.MEAN, Rows.PAIRS_AND_MEAN))
    # a test statistic is read on no band; a band only for chance-corrected coefficients
    assert m.band is None or m.scale is Scale.COEFFICIENT
    assert m.requires is None or len(m.requires) == 2


def test_names_letters_and_ranks_are_unique() -> None:
    names = [m.name for m in metrics.METRICS]
    letters = [m.letter for m in metrics.METRICS if m.letter]
    ranks = [m.summary_rank for m in metrics.METRICS if m.summary_rank is not None]
    assert len(set(names)) == len(names) and len(set(letters)) == len(letters) and len(set(ranks)) == len(ranks)
    assert metrics.default() == ("alpha-u", "alpha", "fleiss", "cohen", "cochran-q")
    assert [b.name for b in metrics.bands()] == ["alpha", "kappa"]


def test_the_summary_metric_is_the_first_by_rank_with_a_value() -> None:
    rows = [{"metric": "alpha-u", "value": float("nan")}, {"metric": "alpha", "value": 0.5}, {"metric": "fleiss", "value": 0.4}]
    assert metrics.summary_metric(["fleiss", "alpha", "alpha-u"], rows) == "alpha"
    assert metrics.summary_metric(["fleiss", "alpha-u"], rows) == "fleiss"
    assert metrics.summary_metric(["cohen", "scott"], rows) is None  # per pair only: no summary
    assert metrics.summary_metric(["alpha-u", "alpha"]) == "alpha-u"  # no results yet: the first by rank
    rows[0]["value"] = 0.7
    assert metrics.summary_metric(["alpha", "alpha-u"], rows) == "alpha-u"


def test_unknown_metrics_are_refused_with_the_choices() -> None:
    with pytest.raises(metrics.UnknownMetric, match="unknown metric.*'kappa'.*choose from alpha-u"):
        metrics.get("kappa")
    with pytest.raises(metrics.UnknownMetric, match="unknown metric\\(s\\) x, y"):
        metrics.resolve(["alpha", "x", "y"])


def _literals(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """Metric names written as a string constant in a module (not as a keyword argument's value)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keyword_values = {id(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names and id(node) not in keyword_values]


def test_no_metric_is_named_outside_the_registry() -> None:
    names = set(metrics.names()) | set(metrics.alt_scores()) | {metrics.ALT_TEST.name}
    found = {path.relative_to(ROOT).as_posix(): hits for path in sorted(PACKAGE.rglob("*.py"))
             if path != REGISTRY and path not in ALLOWED and (hits := _literals(path, names))}
    assert not found, f"metric names written outside unitize/metrics/registry.py (declare the fact there): {found}"


def test_the_scan_sees_a_name() -> None:
    """The scan would catch a table keyed by metric names (so the test above can fail)."""
    source = 'LETTERS = {"alpha": "a"}\nmethod(name="fleiss")\n'
    tmp = ROOT / "tests" / "metrics" / "_scan_probe.py"
    try:
        tmp.write_text(source, encoding="utf-8")
        assert _literals(tmp, set(metrics.names())) == [(1, "alpha")]
    finally:
        tmp.unlink()
