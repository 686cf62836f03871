"""The segment metrics in `unitize agree` end to end on the example corpus: Krippendorff's unitizing
family and span F1 against literal implementations over the segments table, alpha-U's per-label and
per-document rows, and the layers-together rows."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.agree.test_end_to_end import one, pick
from tests.conftest import EXAMPLE, ROOT
from tests.metrics.test_alphau import brute_force
from tests.metrics.test_spanf1 import literal as f1_literal
from tests.metrics.test_unitizing import literal as u_literal
from unitize import metrics as registry
from unitize.agree import measure
from unitize.schema import results_schema

RESULT_SCHEMA = results_schema()
UNITIZING = [m.name for m in registry.where(family=registry.Family.UNITIZING) if m.name not in ("alpha-u", "gamma")]
SPAN_F1 = [m.name for m in registry.where(family=registry.Family.SPAN)]
from unitize.cli import main

METRICS = ["alpha-u", *UNITIZING, *SPAN_F1]
GROUPS = ("ama", "icin", "ki", "ve")
ANNOTATORS = ("ayse", "burak", "cem")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    target = tmp_path_factory.mktemp("agree-unitizing") / "out"
    args = ["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--units", "word", "--modes", "separate,combined,labels", "-q"]
    assert main(args) == 0
    return target


@pytest.fixture(scope="module")
def results(out):
    return measure(out, METRICS, by_label=True, by_doc=True).to_pylist()


def continuum(out, group):
    """The group's documents (every annotator coded each in the example) with their starts, and L."""
    tokens = {r["doc_id"]: r["tokens"] for r in pq.read_table(out / "documents.parquet").to_pylist()}
    t = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet", filters=[("group", "=", group)], columns=["doc_id"])
    docs = sorted(set(t.column("doc_id").to_pylist()))
    starts = dict(zip(docs, np.cumsum([0] + [tokens[d] for d in docs])[:-1].tolist()))
    return docs, starts, tokens


def units_of(out, group, layers, labels: bool, docs=None):
    """Per annotator: (begin, end, value) on the continuum; layers after the first laid after it.
    The value is the label, or for 0/1 data one value for all layers (as their stacked matrices)."""
    all_docs, starts, tokens = continuum(out, group)
    docs = docs or all_docs
    base = {d: sum(tokens[x] for x in docs[:i]) for i, d in enumerate(docs)}
    length = sum(tokens[d] for d in docs)
    per = defaultdict(list)
    for k, layer in enumerate(layers):
        for s in pq.read_table(out / "segments" / "word.parquet").to_pylist():
            if s["group"] == group and s["layer"] == layer and s["doc_id"] in base:
                at = k * length + base[s["doc_id"]]
                per[s["annotator"]].append((at + s["unit_begin"], at + s["unit_end"], s["label"] if labels else "+".join(layers)))
    return [sorted(per[a]) for a in ANNOTATORS], length * len(layers)


def same(a, b):
    return (a is None or math.isnan(a)) and math.isnan(b) or a == pytest.approx(b, abs=1e-9)


@pytest.mark.parametrize("setting", ["word-interval", "word-interval-labels"])
def test_unitizing_family_equals_the_literal_definitions_on_the_segments(results, out, setting):
    labels = setting.endswith("labels")
    for group in GROUPS:
        for layer in ("Arg1", "Arg2", "Arg1+Arg2"):
            units, length = units_of(out, group, layer.split("+"), labels)
            want = u_literal(units, length)
            row = lambda metric: one(results, setting=setting, group=group, layer=layer, metric=metric, doc=None)  # noqa: E731
            assert same(row("u-alpha")["value"], want["u"]), (group, layer)
            assert same(row("|u-alpha")["value"], want["|u"])
            assert same(row("cu-alpha")["value"], want["cu"])
            assert json.loads(row("cu-alpha")["params"])["coverage"] == pytest.approx(want["coverage"])
            ku = pick(results, setting=setting, group=group, layer=layer, metric="ku-alpha", doc=None)
            assert {r["label"]: r["value"] for r in ku}.keys() == want["ku"].keys()
            assert all(same(r["value"], want["ku"][r["label"]]) for r in ku)
            assert row("u-alpha")["units_used"] == length


def test_unitizing_document_rows_are_each_document_alone(results, out):
    for group in GROUPS:
        docs, _, _ = continuum(out, group)
        for doc in docs:
            units, length = units_of(out, group, ["Arg1"], True, docs=[doc])
            got = one(results, setting="word-interval-labels", group=group, layer="Arg1", metric="u-alpha", doc=doc)
            assert same(got["value"], u_literal(units, length)["u"]) and got["units_used"] == length


def test_combined_setting_lays_the_layers_end_to_end(results):
    for metric in UNITIZING:
        for r in pick(results, setting="word-interval-combined", metric=metric, doc=None):
            both = one(results, setting="word-interval", group=r["group"], layer="Arg1+Arg2", metric=metric, doc=None, label=r["label"])
            assert same(r["value"], both["value"])


def test_span_f1_equals_the_literal_matchings_on_the_segments(results, out):
    for group in GROUPS:
        for layer in ("Arg1", "Arg1+Arg2"):
            units, length = units_of(out, group, layer.split("+"), True)
            want = f1_literal(units)
            for metric in SPAN_F1:
                rows = pick(results, setting="word-interval-labels", group=group, layer=layer, metric=metric, doc=None, label=None)
                assert [r["pair"] for r in rows] == ["ayse|burak", "ayse|cem", "burak|cem", "mean"]
                assert all(same(r["value"], w) for r, w in zip(rows, want[metric])), (group, layer, metric)
                assert rows[-1]["value"] == pytest.approx(np.nanmean(want[metric]))
                assert {r["units_used"] for r in rows} == {length}


def test_span_f1_per_label_rows_only_for_label_data(results):
    assert pick(results, setting="word-interval", metric="span-f1", label="EXPANSION: Conjunction") == []
    rows = pick(results, setting="word-interval-labels", group="ve", layer="Arg1", metric="unit-f1", label="EXPANSION: Conjunction")
    assert [r["pair"] for r in rows][-1] == "mean" and len(rows) == 4


def test_alpha_u_per_label_and_per_document_rows(results, out):
    for group in GROUPS:
        docs, _, _ = continuum(out, group)
        labels = pick(results, setting="word-interval-labels", group=group, layer="Arg1", metric="alpha-u", doc=None)
        assert labels[0]["label"] is None and all(r["label"] for r in labels[1:])
        for r in labels[1:]:
            units, length = units_of(out, group, ["Arg1"], True)
            study = [(np.array([b for b, _, v in u if v == r["label"]], dtype=np.int64),
                      np.array([e for _, e, v in u if v == r["label"]], dtype=np.int64)) for u in units]
            do, de = brute_force(study, length)
            assert r["value"] == pytest.approx(1 - do / de, abs=1e-12)
        for doc in docs:
            units, length = units_of(out, group, ["Arg1"], False, docs=[doc])
            study = [(np.array([b for b, _, _ in u], dtype=np.int64), np.array([e for _, e, _ in u], dtype=np.int64)) for u in units]
            do, de = brute_force(study, length)
            got = one(results, setting="word-interval", group=group, layer="Arg1", metric="alpha-u", doc=doc)
            assert got["value"] == pytest.approx(1 - do / de, abs=1e-12) if de else math.isnan(got["value"])
    # without --by-label and --by-doc: one alpha-U row per cell, as before
    plain = measure(out, ["alpha-u"], settings=["word-interval-labels"]).to_pylist()
    assert all(r["label"] is None and r["doc"] is None for r in plain) and len(plain) == 4 * 3


def test_schema_unchanged_and_item_data_is_nan_with_a_reason(out, tmp_path):
    assert RESULT_SCHEMA.names[-4:] == ["label", "doc", "annotator", "diagnostics"] and len(RESULT_SCHEMA) == 28
    labels = tmp_path / "labels"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"), "--out", str(labels), "-q"]) == 0
    rows = measure(labels, ["u-alpha", "span-f1"]).to_pylist()
    assert rows and all(math.isnan(r["value"]) and "item labels have none" in r["reason"] for r in rows)


def test_cli_takes_the_new_metric_names(out, tmp_path, capsys):
    args = ["agree", str(out), "--metric", "|u-alpha,ku-alpha,span-f1-overlap", "--settings", "word-interval-labels",
            "--dest", str(tmp_path / "a"), "--json"]
    assert main(args) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {x["metric"] for x in lines} == {"|u-alpha", "ku-alpha", "span-f1-overlap"}


def test_summary_and_plots_take_the_unitizing_family(out, tmp_path):
    pytest.importorskip("matplotlib")
    from unitize.agree import agree

    res = agree(out, metrics=["u-alpha", "|u-alpha", "cu-alpha"], summary_metric="|u-alpha", settings=["word-interval"],
                dest=tmp_path / "a", plot=True)
    summary = (tmp_path / "a" / "summary.md").read_text(encoding="utf-8")
    assert "| buAWI_Arg1 | buAWI_Arg2 |" in summary
    # 0/1 data has one value: cuα is NaN there, so not drawn
    assert {p.name for p in res.files if p.suffix == ".png"} == {f"{m}_{layer}.png" for m in ("u-alpha", "_u-alpha")
                                                                  for layer in ("Arg1", "Arg2", "Arg1+Arg2")}


def test_a_layers_placed_segments_are_shared_by_the_cells_of_its_group(out, monkeypatch) -> None:
    """Arg1, Arg2 and Arg1+Arg2 of a group place each layer's segments once (``Segments.per_group``) and match them
    once for span F1; the results, by label and by document too, are those of building them for every cell."""
    from unitize.agree import spans

    metrics = ["span-f1", "span-f1-overlap", "alpha-u", "u-alpha"]
    shared = measure(out, metrics, by_label=True, by_doc=True)
    built: list[tuple] = []

    def every_time(self, group, key, build):
        built.append(key)
        return build()

    monkeypatch.setattr(spans.Segments, "per_group", every_time)
    alone = measure(out, metrics, by_label=True, by_doc=True)
    assert shared.to_pylist() == alone.to_pylist()
    placed = [k for k in built if k[0] == "placed"]
    assert len(placed) > len({k for k in placed})  # the layers-together cells ask again for what a layer's cell placed


def test_span_f1_places_a_layer_once_for_the_interval_and_the_boundary_settings(out, monkeypatch) -> None:
    """Span F1 matches whole segments in both approaches: the settings of one unit type, measured group by group
    together, place each (group, layer)'s segments once (the continuum's key hashed once: ``spans.Hashed``)."""
    from unitize.agree import spans

    settings = ["word-interval", "word-boundary"]
    before = measure(out, ["span-f1"], settings=settings)
    placed: list[str] = []
    original = spans._place_layer

    def counted(segs, m, layer, *rest):
        placed.append(f"{m.group}/{layer}")
        return original(segs, m, layer, *rest)

    monkeypatch.setattr(spans, "_place_layer", counted)
    assert measure(out, ["span-f1"], settings=settings).to_pylist() == before.to_pylist()
    assert sorted(placed) == sorted(f"{g}/{layer}" for g in GROUPS for layer in ("Arg1", "Arg2"))
    key = spans.Hashed(("d1", b"\x01"))
    assert key == spans.Hashed(("d1", b"\x01")) and hash(key) == hash(("d1", b"\x01")) and key != ("d1", b"\x01")
