"""`unitize agree` for its users: the span metrics' continuum from the columns, breakdowns per
annotator and per document of crowd data, diagnostics, the screen summary, the plots."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from tests.conftest import EXAMPLE  # noqa: E402
from unitize.agree import columns  # noqa: E402
from unitize.agree.data import OutputData, sorted_codes  # noqa: E402
from unitize.agree.spans import Continuum  # noqa: E402
from unitize.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    target = tmp_path_factory.mktemp("agree-ux") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--modes", "separate,combined", "-q"]) == 0
    return target


def test_the_continuum_from_the_columns_is_the_matrix_one(out):
    """alpha-U and gamma need documents, units per document and who has data: counted from the
    Arrow columns in the statistics' pass, equal to what the matrix says."""
    data = OutputData(out)
    for name in ("word-interval", "char-boundary", "word-interval-combined"):
        setting = data.setting(name)
        for group, table, layers, codes in data.group_tables(setting):
            docs, doc = sorted_codes(table.column("doc_id"))
            g = columns.group_cells(setting, table, codes, len(layers), doc, len(docs))
            for i, layer in enumerate(layers):
                m = Continuum.of(next(x for x in data.matrices(setting, [group]) if x.layer == layer))
                used = g.units[i] > 0
                assert [d for d, u in zip(docs, used) if u] == m.docs
                assert np.array_equal(g.units[i][used], m.units)
                assert np.array_equal(g.presence[i][used], m.presence)
