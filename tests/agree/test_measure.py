"""`measure` from the sufficient statistics: every coding metric against the package-backed
backends on the example corpus, bootstrap intervals, and the CLI's usage errors and notes."""

from __future__ import annotations

import json
import logging
import math
import sys

import numpy as np
import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from unitize.agree import Options, agree, measure  # noqa: E402
from unitize.cli import main  # noqa: E402
from unitize.dataset.directory import OutputData  # noqa: E402
from unitize.metrics import backends, bootstrap  # noqa: E402
from unitize.metrics import coefficients as C  # noqa: E402
from unitize.metrics import stats as S  # noqa: E402

CODING = ["alpha", "fleiss", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent", "cochran-q"]


def test_every_coding_metric_matches_the_package_backends(out):
    rows = measure(out, CODING, settings=["word-interval", "word-interval-combined"]).to_pylist()
    data = OutputData(out)
    checked = 0
    for setting in ("word-interval", "word-interval-combined"):
        for m in data.matrices(data.setting(setting)):
            mine = {(r["metric"], r["pair"]): r for r in rows if (r["setting"], r["group"], r["layer"]) == (setting, m.group, m.layer)}
            assert mine[("alpha", None)]["value"] == pytest.approx(backends.krippendorff_alpha(m.values).value, abs=1e-12)
            assert mine[("fleiss", None)]["value"] == pytest.approx(backends.fleiss(m.values).value, abs=1e-12)
            for v in backends.cohen(m.values, m.annotators):
                r = mine[("cohen", v.pair)]
                assert r["value"] == pytest.approx(v.value, abs=1e-12, nan_ok=True)
                assert r["std_err"] == pytest.approx(v.std_err, abs=1e-12, nan_ok=True)
                assert (r["annotator_a"], r["annotator_b"]) == tuple(v.pair.split("|"))
            pairs = [r["value"] for (metric, pair), r in mine.items() if metric == "cohen"]
            assert mine[("cohen-mean", "mean")]["value"] == pytest.approx(np.nanmean(pairs))
            q = backends.cochran_q(m.values, m.binary)
            assert mine[("cochran-q", None)]["value"] == pytest.approx(q.value, abs=1e-9, nan_ok=True)
            checked += 1
    assert checked >= 8


def test_both_layers_come_from_the_sum_of_the_layer_statistics(out):
    rows = measure(out, ["alpha", "ac1"], settings=["word-interval"]).to_pylist()
    data = OutputData(out)
    for group, mats in data.by_group(data.setting("word-interval")):
        stacked = np.concatenate([m.values for m in mats])
        both = [r for r in rows if r["group"] == group and r["layer"] == "Arg1+Arg2"]
        assert {r["metric"]: r["value"] for r in both}["alpha"] == pytest.approx(backends.krippendorff_alpha(stacked).value, abs=1e-12)
        assert {r["units"] for r in both} == {stacked.shape[0]}


def test_bootstrap_interval_is_seeded_recorded_and_brackets_the_value(out):
    opts = Options(level=0.9, replicates=300, seed=11)
    first = measure(out, ["alpha", "fleiss", "cohen", "ac1"], settings=["word-interval"], ci=opts).to_pylist()
    again = measure(out, ["alpha", "fleiss", "cohen", "ac1"], settings=["word-interval"], ci=opts).to_pylist()
    assert [(r["ci_low"], r["ci_high"]) for r in first] == [(r["ci_low"], r["ci_high"]) for r in again]
    finite = [r for r in first if not math.isnan(r["value"])]
    assert finite and all(r["ci_low"] <= r["value"] + 1e-9 and r["value"] - 1e-9 <= r["ci_high"] for r in finite if r["ci_low"] is not None)
    record = json.loads(finite[0]["params"])["ci"]
    assert (record["level"], record["replicates"], record["seed"]) == (0.9, 300, 11)


def test_bootstrap_replicates_equal_resampling_the_units():
    """The multinomial over patterns is the unit bootstrap: one replicate by hand gives the same alpha."""
    rng = np.random.default_rng(5)
    data = rng.integers(0, 3, size=(40, 3)).astype(float)
    cols, dom = S.codes(data)
    s = S.from_codes(cols, dom, ["a", "b", "c"])
    draw = rng.integers(0, 40, size=40)
    by_hand = C.alpha(S.from_codes(*S.codes(data[draw], dom), ["a", "b", "c"]), "interval").value
    # the same draw as pattern counts
    key = [tuple(r) for r in np.stack([(data[draw] == v).sum(axis=1) for v in dom], axis=1)]
    units = np.array([key.count(tuple(p)) for p in s.patterns])
    assert float(C.alpha_from(s.with_units(units).coincidence(), dom, "interval")) == pytest.approx(by_hand, abs=1e-12)


def test_bootstrap_coverage_on_synthetic_data():
    """Two coders copy a true binary value with probability .7: the 90% interval covers the
    population alpha in about 90% of samples."""
    rng = np.random.default_rng(2024)

    def sample(n):
        truth = rng.integers(0, 2, n)
        coders = [np.where(rng.random(n) < 0.7, truth, rng.integers(0, 2, n)) for _ in range(2)]
        return S.from_codes([c.astype(np.int8) for c in coders], np.array([0.0, 1.0]), ["a", "b"])

    population = C.alpha(sample(2_000_000)).value
    hits = 0
    runs = 200
    for i in range(runs):
        s = sample(300)
        low, high = np.percentile(bootstrap.alpha_replicates(s, "nominal", Options(replicates=400, seed=i)), [5, 95])
        hits += low <= population <= high
    assert 0.84 <= hits / runs <= 0.96


def test_unknown_group_is_a_usage_error_listing_the_groups(out, tmp_path, capsys):
    assert main(["agree", str(out), "--groups", "nope", "--dest", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "ama, icin, ki, ve" in err


def test_gamma_without_the_package_is_a_usage_error(out, tmp_path, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pygamma(name, *args, **kw):
        if name.startswith("pygamma_agreement"):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pygamma)
    monkeypatch.setitem(sys.modules, "pygamma_agreement", None)  # where it is installed (and maybe imported): absent
    assert main(["agree", str(out), "--metric", "gamma", "--dest", str(tmp_path / "g")]) == 2
    assert "pip install 'unitize[gamma]'" in capsys.readouterr().err
    assert not (tmp_path / "g" / "results.parquet").exists()


def test_all_nan_run_says_why(out, tmp_path, capsys):
    assert main(["agree", str(out), "--metric", "cochran-q", "--settings", "word-interval-combined", "--dest", str(tmp_path / "q")]) == 0
    text = capsys.readouterr().out
    assert "every result is NaN" in text and "Cochran's Q needs binary (0/1) values" in text


def test_backend_logging_is_captured_not_printed(capsys):
    from unitize.metrics.segment import captured_logging as _captured_logging

    with _captured_logging() as messages:
        for _ in range(1700):
            logging.warning("CBC solver not installed. Using GLPK.")
    assert len(messages) == 1700
    assert "CBC" not in capsys.readouterr().err


def test_notes_print_one_line_per_logged_message():
    import pyarrow as pa

    from unitize.agree import RESULT_SCHEMA
    from unitize.cli.agree import notes

    row = {f.name: None for f in RESULT_SCHEMA}
    rows = [dict(row, metric="gamma", value=0.5, params=json.dumps({"messages": {"CBC solver not installed. Using GLPK.": 850}}))] * 2
    lines = notes(pa.Table.from_pylist(rows, schema=RESULT_SCHEMA))
    assert lines == ["note: pygamma-agreement logged 'CBC solver not installed. Using GLPK.' 1700 times (captured; see the gamma rows' params)"]


def test_cli_bootstrap_options(out, tmp_path):
    assert main(["agree", str(out), "--metric", "alpha", "--settings", "word-interval", "--bootstrap", "50", "--seed", "3",
                 "--dest", str(tmp_path / "b"), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha", "--ci", "1.5", "--dest", str(tmp_path / "c")]) == 2


def test_crowd_label_tables_counted_in_one_pass_equal_the_pivot(out, tmp_path, monkeypatch):
    """Long unit tables with string labels (and nulls): the one-pass value counts give the
    pivoted (dense) values for every metric defined on value counts."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from tests.agree.test_end_to_end import to_long, write_outdir
    from unitize.layouts import long as long_layout

    src = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet")
    m = json.loads(src.schema.metadata[b"unitize"])
    rng = np.random.default_rng(4)
    for a in m["annotators"]:
        labels = np.array(["none", "claim", "evidence"], dtype=object)[
            np.where(pc.fill_null(src.column(a), 0).to_numpy() == 1, rng.integers(1, 3, src.num_rows), 0)]
        labels[rng.random(src.num_rows) < 0.05] = None  # a label that did not apply
        src = src.set_column(src.schema.get_field_index(a), a, pa.array(labels.tolist(), pa.string()).dictionary_encode())
    long = to_long(src, m["annotators"], {**m, "layout": "long", "value": "label", "mode": "labels"})
    root = write_outdir(tmp_path / "labels", {"units/word-interval-labels/part-0.parquet": long})
    metrics = ["alpha", "fleiss", "ac1", "percent"]
    dense = {(r["group"], r["layer"], r["metric"]): r for r in measure(root, metrics).to_pylist()}
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 10)
    crowd = {(r["group"], r["layer"], r["metric"]): r for r in measure(root, metrics).to_pylist()}
    assert set(crowd) == set(dense)
    for key, row in crowd.items():
        assert row["value"] == pytest.approx(dense[key]["value"], abs=1e-12, nan_ok=True), key
        assert (row["units"], row["documents"], row["annotators"]) == (dense[key]["units"], dense[key]["documents"], 3), key
        if key[2] != "fleiss":
            assert row["units_used"] == dense[key]["units_used"], key
    assert sum(not math.isnan(r["value"]) for r in crowd.values()) >= 8


def test_per_label_rows_and_layers_with_different_labels(tmp_path):
    """--by-label: each label against the rest; the layers-together row renumbers each layer's labels."""
    import pyarrow as pa

    from tests.agree.test_end_to_end import meta, write_outdir

    rows = []
    for layer, labels in (("Arg1", ["a", "b"]), ("Arg2", ["b", "c"])):
        for u in range(12):
            x = labels[u % 2]
            rows.append({"group": "g", "doc_id": "d", "layer": layer, "unit": u, "begin": u, "end": u + 1,
                         "p": x, "q": x if u % 3 else labels[(u + 1) % 2]})
    table = pa.Table.from_pylist(rows).replace_schema_metadata(meta(annotators=["p", "q"], value="label", mode="labels"))
    root = write_outdir(tmp_path / "o", {"units/word-labels/part-0.parquet": table})
    result = agree(root, metrics=["alpha", "cohen"], by_label=True, summary_metric="alpha").results.to_pylist()
    both = [r for r in result if r["layer"] == "Arg1+Arg2" and r["metric"] == "alpha"]
    overall = [r for r in both if r["label"] is None][0]
    stacked = np.array([[ord(r["p"]), ord(r["q"])] for r in rows], dtype=float)
    assert overall["value"] == pytest.approx(backends.krippendorff_alpha(stacked).value, abs=1e-12)
    assert sorted(r["label"] for r in both if r["label"]) == ["a", "b", "c"]
    by = {r["label"]: r["value"] for r in both if r["label"]}
    indicator = (stacked == ord("b")).astype(float)
    assert by["b"] == pytest.approx(backends.krippendorff_alpha(indicator).value, abs=1e-12)
    assert {r["label"] for r in result if r["metric"] == "cohen" and r["layer"] == "Arg1"} == {None, "a", "b"}



def test_new_metrics_in_summary_and_plots(out, tmp_path):
    pytest.importorskip("matplotlib")
    res = agree(out, metrics=["ac1", "percent", "cohen-mean"], plot=True, dest=tmp_path / "p")
    assert res.summary_metric == "ac1"
    assert any(f.name.startswith("ac1_") and f.suffix == ".png" for f in res.files)
    assert "AC1WI_Arg1" in (tmp_path / "p" / "summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("as_labels", [False, True])
def test_per_document_rows_add_up_and_match_the_documents_rows(out, tmp_path, as_labels):
    """--by-doc: per document from the same statistics (the columns fast path for integers, the matrix
    path for labels); the documents' statistics add up to the layer's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.agree.test_end_to_end import write_outdir

    root = out
    if as_labels:
        src = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet")
        for a in json.loads(src.schema.metadata[b"unitize"])["annotators"]:
            col = pa.array([None if v is None else ("x" if v else "o") for v in src.column(a).to_pylist()], pa.string())
            src = src.set_column(src.schema.get_field_index(a), a, col)
        m = json.loads(src.schema.metadata[b"unitize"])
        src = src.replace_schema_metadata({b"unitize": json.dumps({**m, "value": "label", "mode": "labels"}).encode()})
        root = write_outdir(tmp_path / "labels", {"units/word-interval/part-0.parquet": src})
    rows = measure(root, ["alpha", "ac1"], settings=["word-interval"], by_doc=True).to_pylist()
    data = OutputData(root)
    checked = 0
    for mat in data.matrices(data.setting("word-interval")):
        per = {r["doc"]: r["value"] for r in rows
               if (r["group"], r["layer"], r["metric"]) == (mat.group, mat.layer, "alpha") and r["doc"]}
        assert set(per) == set(mat.docs)
        for i, d in enumerate(mat.docs):
            expected = backends.krippendorff_alpha(mat.values[mat.row_doc == i]).value
            assert per[d] == pytest.approx(expected, abs=1e-12, nan_ok=True)
            checked += 1
    assert checked >= 8
    both = [r for r in rows if r["layer"] == "Arg1+Arg2" and r["doc"]]
    assert both and all(r["label"] is None for r in rows)


def test_document_statistics_add_up_to_the_layer(out):
    from unitize.agree import columns
    from unitize.model.codes import sorted_codes

    data = OutputData(out)
    setting = data.setting("word-interval")
    for group, table, layers, codes in data.group_tables(setting):
        names, doc = sorted_codes(table.column("doc_id"))
        per_layer, per_doc = columns.group_stats(setting, table, codes, len(layers), doc, len(names))
        for s, docs in zip(per_layer, per_doc):
            total = sum((x for x in docs if x.n_units), S.from_codes([], np.zeros(0), ()))
            assert total.trimmed().equals(s)


def test_results_made_a_group_at_a_time_equal_the_rows_made_all_at_once(out):
    """measure() turns each group's rows into an Arrow batch at once (a --by-doc run's rows grow with the documents)
    and adds the across-approaches diagnostics to the compared rows afterwards: the table is the one a list of every
    row, diagnosed at the end, gives."""
    import pyarrow as pa

    from unitize import metrics as registry
    from unitize.agree import diagnostics
    from unitize.agree.measure import _setting_rows
    from unitize.metrics import MeasureOptions
    from unitize.schema import results_schema

    data = OutputData(out)
    metrics = registry.resolve(["alpha", "fleiss", "cohen"])
    options = MeasureOptions(by_doc=True, by_annotator=True)
    shared: dict = {}
    rows = [row for s in data.settings for row in _setting_rows(data, s, None, metrics, options, shared, None)]
    diagnostics.across_approaches(rows)
    expected = pa.Table.from_pylist(rows, schema=results_schema(data.traits.relations)).to_pylist()
    got = measure(out, ["alpha", "fleiss", "cohen"], by_doc=True, by_annotator=True).to_pylist()
    assert json.dumps(got) == json.dumps(expected)  # NaN as NaN
    across = [r for r in got if r["diagnostics"] and "only-disagreement" in r["diagnostics"]]
    assert across and len(got) > 10 * len(across)  # the patched rows are there, among many breakdown rows


def test_crowd_cells_read_no_segment(tmp_path, monkeypatch):
    """On crowd data the span metrics are NaN before any segment is placed (they need each annotator's own coding of
    every unit): agree reads no segment row for them (the 10x crowd span run read 6.5 M and peaked at 3.5 GiB)."""
    from tests.conftest import ROOT
    from unitize.dataset.segments import SegmentFile
    from unitize.layouts import long as long_layout

    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "crowd-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 0)  # every group too wide for a column per annotator: crowd cells
    monkeypatch.setattr(SegmentFile, "group", lambda *a: pytest.fail("segments read"))
    rows = [r for r in measure(out, ["alpha", "alpha-u"]).to_pylist() if r["metric"] == "alpha-u"]
    assert rows and all("needs each annotator's own coding" in r["reason"] for r in rows)
