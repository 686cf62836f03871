"""Every span format written as every other (the test fixtures of each): the elements the target holds read back
unchanged — records, and units of every setting where the target keeps the text — and exactly the others reported
``not-convertible``. The pinned counts are the matrix ``bench/convert_matrix.py --no-shared`` prints."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import fixtures, samples
from tests.conftest import needs_shared
from tests.writers.roundtrip import SPAN_FORMATS, cross

#: source (its fixtures) × target: elements read back unchanged / elements reported not-convertible; the targets in
#: SPAN_FORMATS order: brat, webanno-tsv, doccano, label-studio, conll-bio, span-table, quotes, spacy, huggingface, factgenie, xmi, datt,
#: pdtb2, pdtb3, conll16
MATRIX = """
brat              2/0    1/1    1/1    1/1    1/1    1/1    1/1    1/1    2/0    1/1    1/1    0/2    0/2    0/2    0/2
webanno-tsv       9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    0/9    0/9    0/9    0/9
doccano          16/0   16/0   16/0   16/0   16/0   16/0   16/0   16/0   16/0   16/0   16/0   0/16   0/16   0/16   0/16
label-studio      2/0    2/0    2/0    2/0    2/0    2/0    2/0    2/0    2/0    2/0    2/0    0/2    0/2    0/2    0/2
conll-bio         6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    0/6    0/6    0/6    0/6
span-table        6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    6/0    0/6    0/6    0/6    0/6
quotes           13/0   13/0   13/0   13/0   12/1   13/0   13/0   13/0   13/0   13/0   13/0   0/13   0/13   0/13   0/13
spacy             9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    9/0    0/9    0/9    0/9    0/9
huggingface      10/0    9/1    9/1    9/1    9/1    9/1    9/1    9/1   10/0    9/1    9/1   0/10   0/10   0/10   0/10
factgenie         6/1    7/0    7/0    7/0    6/1    7/0    7/0    7/0    7/0    7/0    7/0    0/7    0/7    0/7    0/7
xmi               3/0    3/0    3/0    3/0    3/0    3/0    3/0    3/0    3/0    3/0    3/0    0/3    0/3    0/3    0/3
datt              0/6    5/1    1/5    5/1    0/6    1/5    1/5    5/1    6/0    1/5    5/1    6/0    6/0    6/0    6/0
pdtb2             1/2    3/0    1/2    3/0    1/2    1/2    1/2    3/0    3/0    1/2    3/0    3/0    3/0    3/0    3/0
pdtb3             1/4    4/1    1/4    4/1    1/4    1/4    1/4    4/1    5/0    1/4    4/1    5/0    5/0    5/0    5/0
conll16           1/2    3/0    1/2    3/0    1/2    1/2    1/2    3/0    3/0    1/2    3/0    3/0    3/0    3/0    3/0
"""
PINNED = {
    line.split()[0]: {to: (int(cell.split("/")[0]), int(cell.split("/")[1])) for to, cell in zip(SPAN_FORMATS, line.split()[1:], strict=True)}
    for line in MATRIX.strip().splitlines()
}
PAIRS = [(s, t) for s in SPAN_FORMATS for t in SPAN_FORMATS if fixtures().get(s)]


def test_every_span_format_with_fixtures_is_pinned() -> None:
    assert set(PINNED) == {s for s in SPAN_FORMATS if fixtures().get(s)}
    assert all(set(row) == set(SPAN_FORMATS) for row in PINNED.values())


@pytest.mark.parametrize("source, to", PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_a_conversion_keeps_what_the_target_holds_and_reports_the_rest(source: str, to: str, tmp_path: Path) -> None:
    total = sum((cross(seed, to, tmp_path / str(i)) for i, seed in enumerate(fixtures()[source])), start=Counter())
    assert total["diff"] == 0, total
    assert (total["pass"], total["not-convertible"]) == PINNED[source][to]


@needs_shared
@pytest.mark.parametrize("source", [s for s in SPAN_FORMATS if s in ("brat", "webanno-tsv", "doccano", "label-studio", "conll-bio", "quotes")])
def test_shared_samples_convert_to_every_span_tool_without_a_difference(source: str, tmp_path: Path) -> None:
    seeds = samples().get(source, [])
    if not seeds:
        pytest.skip(f"../shared/corpora has no sample of {source}")
    for to in ("brat", "webanno-tsv", "doccano", "label-studio", "conll-bio", "span-table", "quotes", "spacy", "huggingface", "factgenie", "xmi"):
        for i, seed in enumerate(seeds):
            counts = cross(seed, to, tmp_path / f"{to}-{i}")
            assert counts["diff"] == 0, (to, seed.name, counts)
