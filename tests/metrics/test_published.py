"""Every metric of the registry, measured through its declaration, reproduces a published value.

Each metric is taken from ``unitize.metrics`` by name and measured on a :class:`~unitize.metrics.Cell`
as ``unitize agree`` measures it, so what is tested is the declaration (formula, level,
bindings) and not only the formula. :data:`PUBLISHED` names, per metric, the source and the
test; ``test_every_metric_has_a_published_value`` fails when a metric is added without one.
Where no publication gives a number (span F1 with overlap matching), the reference is named
for what it is: a hand-counted case.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from tests.metrics.test_backends import FLEISS_1971, K2011, cochran_1950, cohen_table
from tests.metrics.test_alphau import k2004
from tests.metrics.test_unitizing import book, placed
from unitize import metrics
from unitize.metrics import Cell, MeasureOptions, SegmentCell
from unitize.metrics import stats as S
from unitize.metrics.placed import Placed
from unitize.metrics.value import Value

#: metric -> (source, the test below that reproduces it)
PUBLISHED = {
    "alpha": ("Krippendorff (2011), reliability data of 4 coders × 12 units: .743 / .815 / .849 / .797", "test_alpha"),
    "fleiss": ("Fleiss (1971: 379): kappa = .430", "test_fleiss"),
    "cohen": ("Cohen (1960: 45): kappa = .492; irrCAC kappa2.table on Gwet's abstractors: .7964094", "test_cohen_and_its_mean"),
    "cohen-mean": ("Cohen (1960: 45), one pair: the mean is its kappa, .492", "test_cohen_and_its_mean"),
    "scott": ("irrCAC scott2.table on Gwet's (2014) abstractors table: .7962397", "test_scott_and_gwet"),
    "ac1": ("irrCAC gwet.ac1.table (Gwet 2014, abstractors): .8493305; gwet.ac1.raw on Krippendorff's data: .77544",
            "test_scott_and_gwet"),
    "ac2": ("irrCAC: AC2 at the nominal level is AC1, .77544 on Krippendorff's data", "test_scott_and_gwet"),
    "percent": ("irrCAC pa2.table (Gwet 2014, abstractors): .89", "test_scott_and_gwet"),
    "cochran-q": ("Cochran (1950), 69 swabs on four media: Q = 8.05, df 3", "test_cochran_q"),
    "alpha-u": ("Krippendorff (2004: 254): alpha-U = .8591", "test_alpha_u"),
    "u-alpha": ("Krippendorff (2019), Fig. 12.11: uα = .510", "test_unitizing_family"),
    "|u-alpha": ("Krippendorff (2019), Fig. 12.11: |uα = .413", "test_unitizing_family"),
    "cu-alpha": ("Krippendorff (2019), Fig. 12.11: cuα = .724", "test_unitizing_family"),
    "ku-alpha": ("Krippendorff (2019), Fig. 12.11: (k)uα 1, 0, 0, 0, 1, 1 for 1–6", "test_unitizing_family"),
    "span-f1": ("bratiaa's published instance-based report on its example project (tests/metrics/test_spanf1.py) and "
                "a hand-counted case", "test_span_f1"),
    "span-f1-overlap": ("no published value: a hand-counted case (two short spans inside one long span: one match)",
                        "test_span_f1"),
    "unit-f1": ("bratiaa's published token-based report (tests/metrics/test_spanf1.py) and a hand-counted case", "test_span_f1"),
    "gamma": ("pygamma-agreement, the reference implementation of Mathet et al. (2015), called directly "
              "(tests/agree/test_end_to_end.py; skipped where it is not installed)", "test_gamma_is_declared_against_pygamma"),
}


def test_every_metric_has_a_published_value() -> None:
    assert set(PUBLISHED) == set(metrics.names())
    for metric, (source, test) in PUBLISHED.items():
        assert source and callable(globals().get(test)), (metric, test)


def cell(values: np.ndarray, names: list[str] | None = None, level: str = "nominal", binary: bool = False) -> Cell:
    cols, dom = S.codes(values)
    s = S.from_codes(cols, dom, names or [f"c{i}" for i in range(values.shape[1])])
    return Cell(stats=s, level=level, binary=binary, crowd=None)


def measured(name: str, c: Cell, options: MeasureOptions | None = None) -> list[Value]:
    return metrics.measure(metrics.get(name), c, options or MeasureOptions())


def one(name: str, c: Cell) -> Value:
    (v,) = [v for v in measured(name, c) if v.pair in (None, "mean")]
    return v


#: Gwet's (2014) abstractors table (irrCAC's ``cont3x3abstractors``): 100 subjects, 2 raters, 3 categories
ABSTRACTORS = cohen_table([(13, 0, 0), (20, 1, 1), (7, 1, 2), (4, 2, 1), (56, 2, 2)])
#: Cohen (1960: 45), 200 units, 3 categories
COHEN_1960 = cohen_table([(88, 1, 1), (14, 1, 2), (18, 1, 3), (10, 2, 1), (40, 2, 2), (10, 2, 3), (2, 3, 1), (6, 3, 2), (12, 3, 3)])


@pytest.mark.parametrize("level, value", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_alpha(level: str, value: float) -> None:
    v = one("alpha", cell(K2011, level=level))
    assert v.value == pytest.approx(value, abs=0.0005) and v.units_used == 11 and v.params["level"] == level


def test_fleiss() -> None:
    v = one("fleiss", cell(FLEISS_1971))
    assert v.value == pytest.approx(0.430, abs=0.0005) and v.units_used == 30


def test_cohen_and_its_mean() -> None:
    c = cell(COHEN_1960, ["a", "b"])
    (k,) = measured("cohen", c)
    assert k.value == pytest.approx(0.492, abs=0.0005) and k.pair == "a|b"
    assert one("cohen-mean", c).value == k.value
    assert measured("cohen", cell(ABSTRACTORS, ["a", "b"]))[0].value == pytest.approx(0.7964094, abs=1e-7)


def test_scott_and_gwet() -> None:
    c = cell(ABSTRACTORS, ["a", "b"])
    assert measured("scott", c)[0].value == pytest.approx(0.7962397, abs=1e-7)
    assert one("ac1", c).value == pytest.approx(0.8493305, abs=1e-7)
    assert one("percent", c).value == pytest.approx(0.89)
    k = cell(K2011)
    assert one("ac1", k).value == pytest.approx(0.77544, abs=1e-5)
    assert one("ac2", k).value == one("ac1", k).value


def test_cochran_q() -> None:
    v = one("cochran-q", cell(cochran_1950(), binary=True))
    assert v.value == pytest.approx(8.05, abs=0.005) and v.df == 3 and v.units_used == 69


def segment_cell(layers: dict[str, Placed], labelled: bool) -> Cell:
    """A cell whose segments are given, placed (one :class:`Placed` per layer)."""
    memo: dict = {}

    def place(name: str, approach: str | None) -> list[Placed]:
        return list(layers.values())

    def remember(key: tuple, build):
        if key not in memo:
            memo[key] = build()
        return memo[key]

    segs = SegmentCell(group="g", layers=tuple(layers), approach="interval", labelled=labelled, place=place, memo=remember, shared={})
    stats = S.from_codes([np.zeros(1, np.int16)], np.zeros(1), ["x"])
    return Cell(stats=stats, level="nominal", binary=not labelled, crowd=None, segments=lambda: segs)


def _labelled(study: dict[str, list[tuple[np.ndarray, np.ndarray]]], length: int) -> Placed:
    """A labelled layer from per-category, per-annotator (begins, ends)."""
    per: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for category, annotators in study.items():
        for a, (b, e) in enumerate(annotators):
            per[a] += [(int(x), int(y), category) for x, y in zip(b, e)]
    return placed([sorted(per[a]) for a in sorted(per)], length)


def test_alpha_u() -> None:
    v = one("alpha-u", segment_cell({"L": _labelled(k2004(), 300)}, labelled=True))
    assert v.value == pytest.approx(0.8591, abs=0.0005)


def test_unitizing_family() -> None:
    c = segment_cell({"L": book()}, labelled=True)
    assert round(one("u-alpha", c).value, 3) == 0.510
    assert one("|u-alpha", c).value == pytest.approx(0.413, abs=0.002)
    assert round(one("cu-alpha", c).value, 3) == 0.724
    ku = {v.label: v.value for v in measured("ku-alpha", c)}
    assert [ku[k] for k in "123456"] == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0] and math.isnan(ku["7"])


def test_span_f1() -> None:
    """Two short spans of a inside one long span of b: no exact match, one overlap match, 7 of 8 units alike."""
    c = segment_cell({"L": placed([[(0, 3, "x"), (4, 8, "x")], [(0, 8, "x")]], 8)}, labelled=True)
    assert one("span-f1", c).value == 0.0
    assert one("span-f1-overlap", c).value == pytest.approx(2 * 1 / 3)
    assert one("unit-f1", c).value == pytest.approx(2 * 7 / 15)


def test_gamma_is_declared_against_pygamma() -> None:
    """gamma's declaration: its package, and the check against pygamma-agreement called directly."""
    import tests.agree.test_end_to_end as agree_tests

    assert metrics.get("gamma").requires == ("pygamma_agreement", "gamma")
    assert any(name.startswith("test_gamma") for name in dir(agree_tests))
