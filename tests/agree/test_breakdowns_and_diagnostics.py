"""`unitize agree` for its users: the span metrics' continuum from the columns, breakdowns per
annotator and per document of crowd data, diagnostics, the screen summary, the plots."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from tests.conftest import EXAMPLE  # noqa: E402
from unitize.agree import columns  # noqa: E402
from unitize.agree.spans import Continuum  # noqa: E402
from unitize.cli import main  # noqa: E402
from unitize.dataset import OutputData  # noqa: E402
from unitize.model.codes import sorted_codes  # noqa: E402


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


# --- breakdowns ------------------------------------------------------------------------


def _against_others(values: np.ndarray, k: int) -> np.ndarray:
    """Two-coder data by hand: annotator k's value beside each other annotator's, units both coded."""
    rows = []
    for j in range(values.shape[1]):
        if j != k:
            both = ~np.isnan(values[:, k]) & ~np.isnan(values[:, j])
            rows.append(np.stack([values[both, k], values[both, j]], axis=1))
    return np.concatenate(rows)


def test_per_annotator_rows_are_each_annotator_against_the_others(out):
    from unitize.agree import measure
    from unitize.metrics import backends

    rows = measure(out, ["alpha", "cohen", "cohen-mean", "percent", "fleiss"], settings=["word-interval"], by_annotator=True).to_pylist()
    data = OutputData(out)
    checked = 0
    for m in data.matrices(data.setting("word-interval")):
        mine = [r for r in rows if (r["group"], r["layer"]) == (m.group, m.layer) and r["annotator"]]
        assert {r["metric"] for r in mine} == {"alpha", "cohen", "cohen-mean", "percent"}  # Fleiss' kappa has none
        for k, name in enumerate(m.annotators):
            by = {r["metric"]: r for r in mine if r["annotator"] == name}
            pooled = _against_others(m.values, k)
            assert by["alpha"]["value"] == pytest.approx(backends.krippendorff_alpha(pooled).value, abs=1e-12)
            assert by["alpha"]["units_used"] == pooled.shape[0]
            [kappa] = backends.cohen(pooled, [name, "(others)"])
            assert by["cohen"]["value"] == pytest.approx(kappa.value, abs=1e-12)
            assert by["cohen"]["pair"] is None and by["cohen"]["std_err"] == pytest.approx(kappa.std_err, abs=1e-12)
            assert by["percent"]["value"] == pytest.approx(np.mean(pooled[:, 0] == pooled[:, 1]), abs=1e-12)
            pairs = [r["value"] for r in rows if (r["group"], r["layer"], r["metric"]) == (m.group, m.layer, "cohen")
                     and r["pair"] and name in r["pair"].split("|")]
            assert by["cohen-mean"]["value"] == pytest.approx(np.mean(pairs), abs=1e-12)
            checked += 1
    assert checked == 4 * 2 * 3


def test_per_document_rows_of_crowd_data(out, tmp_path, monkeypatch):
    """--by-doc on crowd data (value counts per unit): each document's alpha equals the dense one."""
    import json

    import pyarrow.parquet as pq

    from tests.agree.test_end_to_end import to_long, write_outdir
    from unitize.agree import measure
    from unitize.layouts import long as long_layout

    src = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet")
    m = json.loads(src.schema.metadata[b"unitize"])
    root = write_outdir(tmp_path / "long", {"units/word-interval/part-0.parquet": to_long(src, m["annotators"], {**m, "layout": "long"})})
    dense = {(r["group"], r["layer"], r["doc"]): r for r in measure(out, ["alpha", "fleiss"], settings=["word-interval"], by_doc=True).to_pylist()
             if r["metric"] == "alpha"}
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 10)
    crowd = {(r["group"], r["layer"], r["doc"]): r for r in measure(root, ["alpha", "fleiss"], by_doc=True).to_pylist() if r["metric"] == "alpha"}
    assert set(crowd) == set(dense) and sum(1 for k in crowd if k[2]) >= 8
    for key, row in crowd.items():
        assert row["value"] == pytest.approx(dense[key]["value"], abs=1e-12, nan_ok=True), key
        assert row["units_used"] == dense[key]["units_used"]


# --- diagnostics ---------------------------------------------------------------------------


def _stats(columns, annotators=("a", "b", "c")):
    from unitize.metrics import stats as S

    cols = [np.array(c, dtype=np.int8) for c in columns]
    return S.from_codes(cols, np.array([0.0, 1.0, 2.0])[: max(int(max(c.max() for c in cols)) + 1, 1)], list(annotators))


def _setting(**kw):
    from pathlib import Path

    from unitize.dataset.model import Setting
    from unitize.layouts import WIDE

    base = dict(name="word-interval", path=Path("x"), kind="units", layout=WIDE, value="binary", unit="word",
                approach="interval", mode="separate", annotators=("a", "b", "c"))
    return Setting(**{**base, **kw})


def test_diagnostics_of_the_statistics():
    from unitize.agree.diagnostics import of_cell

    # 12 units coded by two annotators: 22 of the 24 values are 0; a marks nothing; b and c share no unit
    a = [0] * 12
    b = [1, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1]
    c = [-1] * 6 + [1, 0, 0, 0, 0, 0]
    found = {d.code: d for d in of_cell(_setting(), _stats([a, b, c]))}
    assert set(found) == {"too-few-units", "skewed-prevalence", "annotator-empty", "pair-no-shared-units"}
    assert found["too-few-units"].detail == "only 12 units coded by two or more annotators"
    assert found["skewed-prevalence"].detail == "0 is 91.7% of the values given"  # 22 of 24
    assert found["skewed-prevalence"].metrics == ("alpha", "fleiss", "cohen", "cohen-mean", "scott")
    assert found["annotator-empty"].detail == "a marked nothing here (0 everywhere)"
    assert found["pair-no-shared-units"].detail == "no unit in common: b|c"
    one = {d.code: d.detail for d in of_cell(_setting(), _stats([[1] * 40, [1] * 40, [1] * 40]))}
    assert one == {"one-category": "every value given is 1"}
    assert of_cell(_setting(), _stats([[0, 1] * 20, [0, 1] * 20, [1, 0] * 20])) == []
    # label data: "not annotated" is the not_annotated label, not the code 0
    labels = ["LOC", "O", "PER"]
    s = _stats([[1] * 20 + [0] * 20, [1] * 20 + [2] * 20, [1] * 40])
    found = {d.code: d.detail for d in of_cell(_setting(value="label", not_annotated="O"), s, lambda v: labels[int(v)])}
    assert found == {"annotator-empty": "c marked nothing here (O everywhere)"}


def test_diagnostics_in_the_results_and_on_screen(out, tmp_path, capsys):
    import json

    rows = measure_rows(out, ["alpha-u", "alpha", "fleiss", "cohen", "ac1"], settings=["char-interval", "char-boundary"], by_annotator=True)
    flagged = [r for r in rows if r["diagnostics"]]
    assert flagged and all(r["annotator"] is None and r["label"] is None and r["doc"] is None for r in flagged)
    [r] = [r for r in rows if (r["setting"], r["group"], r["layer"], r["metric"]) == ("char-boundary", "icin", "Arg2", "alpha-u")]
    [d] = json.loads(r["diagnostics"])
    assert d["code"] == "boundary-only-disagreement"
    assert d["detail"] == "alpha-u 0.949 on the interval approach (char-interval), 0.666 on the boundary approach (char-boundary)"
    [twin] = [x for x in rows if (x["setting"], x["group"], x["layer"], x["metric"]) == ("char-interval", "icin", "Arg2", "alpha-u")]
    assert json.loads(twin["diagnostics"]) == [d]
    skewed = [r for r in rows if r["diagnostics"] and "skewed-prevalence" in r["diagnostics"]]
    assert {r["metric"] for r in skewed} == {"alpha", "fleiss", "cohen"}  # not AC1, not alpha-U
    assert main(["agree", str(out), "--metric", "cochran-q", "--settings", "word-interval-combined", "--dest", str(tmp_path / "q")]) == 0
    text = capsys.readouterr().out
    assert "diagnostic all-nan: 4 of 4 cells (e.g. word-interval-combined ama Arg1+Arg2: Cochran's Q needs binary (0/1) values (cochran-q))" in text


def measure_rows(out, metrics, **kw):
    from unitize.agree import measure

    return measure(out, metrics, **kw).to_pylist()


# --- what a user sees ------------------------------------------------------------------------


def test_plots_skip_cochran_and_explain_the_codes(out, tmp_path):
    pytest.importorskip("matplotlib")
    from unitize.agree import agree
    from unitize.agree.plots import _meaning

    res = agree(out, metrics=["alpha-u", "cochran-q"], plot=True, dest=tmp_path / "p", settings=["word-interval"], groups=["ve"])
    names = sorted(f.name for f in res.files if f.parent.name == "plots")
    assert names == [f"alpha-u_{x}.{e}" for x in ("Arg1+Arg2", "Arg1", "Arg2") for e in ("png", "svg")]  # n = 1: a point; no Q
    assert _meaning("AWI", "alpha-u") == "AWI: Krippendorff's alpha-U, words, interval"
    assert _meaning("AC1CBL", "ac1") == "AC1CBL: Gwet's AC1, characters, boundary, label matrix"
    assert _meaning("a_items-long", "alpha") == "a_items-long: items-long"


def test_summary_metric_and_wording_follow_the_data(out, tmp_path):
    from unitize.agree import agree

    brat = tmp_path / "brat"
    assert main(["convert", str(EXAMPLE.parent / "brat-mini" / "study.toml"), "--out", str(brat), "-q"]) == 0
    res = agree(brat, metrics=["alpha", "alpha-u"])
    assert (res.summary_metric, res.group) == ("alpha-u", "Group")
    md = (brat / "agreement" / "summary.md").read_text(encoding="utf-8")
    assert md.startswith("# Agreement summary: alpha-u per group\n")  # no thesis table named: an entity study is not a discourse bank
    assert "| Group | Annotator # | Document # | AWB_Entity | AWI_Entity | AWBL_Entity | AWIL_Entity |" in md
    assert md.rstrip().endswith("Columns: A = alpha-u; W/C = word/character units; B/I = boundary/interval approach; "
                                "L = the label matrix; after _ the layer.")
    labels = tmp_path / "labels"
    assert main(["convert", str(EXAMPLE.parent / "labels-mini" / "study.toml"), "--out", str(labels), "-q"]) == 0
    res = agree(labels, metrics=["alpha-u", "alpha", "fleiss"])
    assert res.summary_metric == "alpha"
    md = (labels / "agreement" / "summary.md").read_text(encoding="utf-8")
    assert "| Group | Annotator # | Item # | a_items | a_items-long |" in md and "| offensive | 3 | 12 | 0.769 | 0.769 |" in md
    crowd = tmp_path / "crowd"
    assert main(["convert", str(EXAMPLE.parent / "crowd-mini" / "study.toml"), "--out", str(crowd), "-q"]) == 0
    assert agree(crowd, metrics=["alpha-u", "alpha"]).summary_metric == "alpha"
    assert agree(out, metrics=["alpha", "alpha-u"]).group == "Connective"


def test_span_f1_in_the_summary_and_on_screen(out, tmp_path, capsys):
    """Span F1 is summarised by its pairs' mean, named as such, with the Landis & Koch bands
    flagged as made for chance-corrected coefficients."""
    from unitize.agree import measure

    assert main(["agree", str(out), "--metric", "span-f1,unit-f1", "--settings", "word-interval", "--dest", str(tmp_path / "f")]) == 0
    text = capsys.readouterr().out
    assert "summary (span-f1)" in text
    assert "span-f1 (span F1, exact match, mean over annotator pairs) over the 4 connectives" in text
    md = (tmp_path / "f" / "summary.md").read_text(encoding="utf-8")
    assert md.startswith("# Agreement summary: span-f1 (span F1, exact match, mean over annotator pairs) per connective")
    assert "| Connective | Annotator # | File # | Annotation # | F1WI_Arg1 | F1WI_Arg2 |" in md
    assert "span-f1 is not chance-corrected" in md
    means = {r["group"]: r["value"] for r in measure(out, ["span-f1"], settings=["word-interval"]).to_pylist()
             if r["layer"] == "Arg1" and r["pair"] == "mean"}
    for group, value in means.items():
        assert f"| {group} | " in md and f"| {value:.3f} |" in md
    assert main(["agree", str(out), "--metric", "unit-f1", "--settings", "word-interval", "--dest", str(tmp_path / "u")]) == 0
    assert "| uF1WI_Arg1 |" in (tmp_path / "u" / "summary.md").read_text(encoding="utf-8")


def test_screen_table_and_lines(out, tmp_path, capsys):
    assert main(["agree", str(out), "--metric", "alpha-u,alpha", "--settings", "word-interval", "--groups", "ama,ve",
                 "--bootstrap", "200", "--seed", "3", "--dest", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert "alpha-u over the 2 connectives (mean, min, max; n = connectives with a value):" in text
    [line] = [x for x in text.splitlines() if x.strip().startswith("word-interval  Arg1 ")]
    fields = line.split()
    assert fields[:3] == ["word-interval", "Arg1", "2"]
    from unitize.agree import measure

    rows = measure(out, ["alpha-u"], settings=["word-interval"], groups=["ama", "ve"]).to_pylist()
    values = [r["value"] for r in rows if r["layer"] == "Arg1"]
    assert fields[3:6] == [f"{np.mean(values):.3f}", f"{min(values):.3f}", f"{max(values):.3f}"]
    assert fields[-3:] == ["(of", "the", "mean)"]  # several groups: the interval of the mean over them
    assert main(["agree", str(out), "--metric", "alpha", "--settings", "word-interval", "--groups", "ve", "--bootstrap", "200",
                 "--dest", str(tmp_path / "t")]) == 0
    text = capsys.readouterr().out
    [line] = [x for x in text.splitlines() if x.strip().startswith("word-interval  Arg1 ")]
    [r] = [r for r in measure(out, ["alpha"], settings=["word-interval"], groups=["ve"], ci=_opts(200)).to_pylist() if r["layer"] == "Arg1"]
    assert line.endswith(f"{r['ci_low']:.3f} – {r['ci_high']:.3f}")  # one group: its bootstrap interval


def _opts(n):
    from unitize.agree import Options

    return Options(level=0.95, replicates=n, seed=0)


def test_progress_goes_over_each_settings_groups(out, tmp_path):
    from unitize.agree import agree

    seen = []

    def progress(items, desc):
        seen.append((desc, len(items)))
        return items

    agree(out, metrics=["alpha"], settings=["word-interval", "char-boundary"], progress=progress, dest=tmp_path / "p")
    assert seen == [("agree word-interval", 4), ("agree char-boundary", 4)]


def test_the_results_table_follows_its_contract(out, tmp_path, monkeypatch):
    """schemas/results.arrow.json documents every column of results.parquet, in order, and every key a
    result row has (none is dropped on the way into the table)."""
    import importlib
    import json

    from tests.conftest import ROOT
    from unitize.agree import RESULT_SCHEMA

    measure_module = importlib.import_module("unitize.agree.measure")

    spec = json.loads((ROOT / "schemas" / "results.arrow.json").read_text(encoding="utf-8"))
    assert [(f["name"], f["type"]) for f in spec["fields"]] == [(f.name, str(f.type)) for f in RESULT_SCHEMA]
    assert all(f["description"] for f in spec["fields"])
    keys: set[str] = set()
    rows_of = measure_module._rows

    def spy(*args, **kw):
        rows = rows_of(*args, **kw)
        keys.update(k for r in rows for k in r)
        return rows

    monkeypatch.setattr(measure_module, "_rows", spy)
    measure_module.measure(out, ["alpha", "cohen"], settings=["word-interval"])
    assert keys == set(RESULT_SCHEMA.names)


def test_every_span_metric_is_the_same_from_the_columns_continuum_and_the_matrix(out, monkeypatch):
    """The merge of the unitizing family with the continuum from the columns: alpha-U (with its
    per-label and per-document rows), the uα family and span F1 place the segments on the cell's
    Continuum; from the statistics pass (no matrix) they equal what the matrix gives."""
    import importlib

    measure_module = importlib.import_module("unitize.agree.measure")

    metrics = ["alpha-u", "u-alpha", "|u-alpha", "cu-alpha", "ku-alpha", "span-f1", "span-f1-overlap", "unit-f1"]
    keys = ("setting", "group", "layer", "metric", "pair", "label", "doc", "value", "reason", "units_used", "params")

    def rows() -> list[tuple]:
        table = measure_module.measure(out, metrics, by_label=True, by_doc=True)
        return sorted(tuple(str(r[k]) for k in keys) for r in table.to_pylist())

    matrices: list[str] = []
    data_matrix = measure_module.data_matrix
    monkeypatch.setattr(measure_module, "data_matrix", lambda *a, **k: matrices.append(a[0].name) or data_matrix(*a, **k))
    fast = rows()
    assert not matrices  # the columns give the statistics and the continuum: no matrix
    built: list[int] = []
    original = measure_module._Cell.continuum

    def from_matrix(self):
        built.append(1)
        return Continuum.of(self.matrix())

    monkeypatch.setattr(measure_module._Cell, "continuum", from_matrix)
    assert rows() == fast and built
    monkeypatch.setattr(measure_module._Cell, "continuum", original)
    assert any(r[3] == "u-alpha" and r[7] != "nan" for r in fast)


def test_per_document_coding_statistics_are_built_only_for_a_coding_metric(out, monkeypatch):
    """``--by-doc`` with span metrics alone: their per-document rows come from the segments, so no document's
    coding statistics are made (they were, for nothing: a third of such a run's time); with a coding metric, they are."""
    import importlib

    measure_module = importlib.import_module("unitize.agree.measure")
    made: list[int] = []
    per_doc = columns._per_doc
    monkeypatch.setattr(columns, "_per_doc", lambda *a, **k: made.append(1) or per_doc(*a, **k))
    original = columns.group_cells
    asked: list[bool] = []
    monkeypatch.setattr(columns, "group_cells", lambda *a, **k: asked.append(bool(a[6] if len(a) > 6 else k.get("by_doc"))) or original(*a, **k))
    spans = measure_module.measure(out, ["alpha-u", "u-alpha"], settings=["word-interval"], by_doc=True).to_pylist()
    assert asked and not any(asked) and not made
    assert {r["metric"] for r in spans if r["doc"] is not None} == {"alpha-u", "u-alpha"}
    coding = measure_module.measure(out, ["alpha", "u-alpha"], settings=["word-interval"], by_doc=True).to_pylist()
    assert any(asked) and {r["metric"] for r in coding if r["doc"] is not None} == {"alpha", "u-alpha"}


def test_the_whole_rows_of_one_metric_are_its_cells_values_and_pair_means():
    import pyarrow as pa

    from unitize.agree.summary import whole_rows

    results = pa.table({
        "metric": ["span-f1", "span-f1", "span-f1", "span-f1", "alpha-u", "alpha-u"],
        "pair": ["a|b", "mean", "mean", None, None, None],
        "doc": [None, None, "d1", None, None, "d1"],
        "label": [None] * 6,
        "annotator": [None] * 6,
        "value": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
    })
    assert [r["value"] for r in whole_rows(results, metric="span-f1")] == [0.6, 0.8]  # not a pair's, not a document's
    assert whole_rows(results, ["value"], metric="alpha-u") == [{"value": 0.9}]
    assert [r["value"] for r in whole_rows(results.drop_columns(["pair"]), metric="alpha-u")] == [0.9]
    assert len(whole_rows(results)) == 4
