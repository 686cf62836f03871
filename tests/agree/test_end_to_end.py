"""`unitize agree` and `unitize export` end to end: the example corpus, the reader contracts, edge cases.

Values are checked by independent routes: alpha-U by a literal implementation of
the formula over the segments, alpha by NLTK on the `nltk` export, Fleiss' kappa
and Cochran's Q by hand from the `fleiss-table` and `rat` exports.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from tests.conftest import EXAMPLE  # noqa: E402
from tests.metrics.test_alphau import brute_force  # noqa: E402
from tests.metrics.test_backends import K2011  # noqa: E402
from unitize.agree import agree, measure  # noqa: E402
from unitize.agree.summary import landis_koch, summary_rows  # noqa: E402
from unitize.cli import main  # noqa: E402
from unitize.errors import DataError  # noqa: E402
from unitize.export import export  # noqa: E402
from unitize.schema import setting_path


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    target = tmp_path_factory.mktemp("agree") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--modes", "separate,combined", "-q"]) == 0
    return target


@pytest.fixture(scope="module")
def results(out):
    return agree(out, plot=True).results.to_pylist()


def pick(rows, **eq):
    return [r for r in rows if all(r[k] == v for k, v in eq.items())]


def one(rows, **eq):
    [r] = pick(rows, **eq)
    return r


# --- the example corpus ---------------------------------------------------------------


def test_results_cover_every_setting_group_layer_and_metric(results, out):
    settings = sorted(p.name.removeprefix("setting=") for p in (out / "units").iterdir())
    assert sorted({r["setting"] for r in results}) == settings
    assert {r["group"] for r in results} == {"ama", "icin", "ki", "ve"}
    assert {r["layer"] for r in pick(results, setting="word-interval")} == {"Arg1", "Arg2", "Arg1+Arg2"}
    assert {r["layer"] for r in pick(results, setting="word-interval-combined")} == {"Arg1+Arg2"}
    assert {r["metric"] for r in results} == {"alpha-u", "alpha", "fleiss", "cohen", "cochran-q"}
    # 3 annotators: 3 Cohen pairs per (setting, group, layer)
    assert {r["pair"] for r in pick(results, metric="cohen")} == {"ayse|burak", "ayse|cem", "burak|cem"}
    failed = [r for r in results if r["reason"] is not None or math.isnan(r["value"])]
    assert {(r["mode"], r["metric"]) for r in failed} == {("combined", "cochran-q")}  # bit masks are not 0/1
    assert {r["reason"] for r in failed} == {"Cochran's Q needs binary (0/1) values"}
    r = one(results, setting="word-interval", group="ve", layer="Arg1", metric="alpha")
    assert (r["annotators"], r["documents"], r["units"], r["level"]) == (3, 2, 445, "nominal")


def _universe(out, setting, group):
    t = pq.read_table(out / setting_path(setting) / "part-00000.parquet", filters=[("group", "=", group)], columns=["doc_id", "layer"])
    docs = t.column("doc_id").cast(pa.string()).to_pylist()
    first = t.column("layer").cast(pa.string()).to_pylist()[0]
    return sorted({d for d, layer in zip(docs, t.column("layer").cast(pa.string()).to_pylist()) if layer == first})


def test_alpha_u_equals_the_literal_formula_on_the_segments(results, out):
    tokens = {r["doc_id"]: r["tokens"] for r in pq.read_table(out / "documents.parquet").to_pylist()}
    segments = pq.read_table(out / "segments" / "word.parquet").to_pylist()
    for group in ("ama", "icin", "ki", "ve"):
        docs = _universe(out, "word-interval", group)
        base = dict(zip(docs, np.cumsum([0] + [tokens[d] for d in docs])[:-1].tolist()))
        length = sum(tokens[d] for d in docs)
        for layer in ("Arg1", "Arg2"):
            per = defaultdict(list)
            for s in segments:
                if s["group"] == group and s["layer"] == layer and s["doc_id"] in base:
                    per[s["annotator"]].append((base[s["doc_id"]] + s["unit_begin"], base[s["doc_id"]] + s["unit_end"]))
            study = [(np.array([b for b, _ in sorted(per[a])]), np.array([e for _, e in sorted(per[a])])) for a in ("ayse", "burak", "cem")]
            do, de = brute_force(study, length)
            got = one(results, setting="word-interval", group=group, layer=layer, metric="alpha-u")
            assert got["value"] == pytest.approx(1 - do / de, abs=1e-12), (group, layer)
            assert got["units_used"] == length


def test_boundary_alpha_u_is_nominal_alpha(results):
    # every boundary unit has length one: alpha-U reduces to Krippendorff's nominal alpha on the 0/1 matrix
    for r in pick(results, setting="word-boundary", metric="alpha-u"):
        if "+" in r["layer"]:
            continue
        alpha = one(results, setting="word-boundary", group=r["group"], layer=r["layer"], metric="alpha")
        assert r["value"] == pytest.approx(alpha["value"], abs=1e-12)


def test_combined_setting_alpha_u_is_the_both_layers_value(results):
    for r in pick(results, setting="word-interval-combined", metric="alpha-u"):
        both = one(results, setting="word-interval", group=r["group"], layer="Arg1+Arg2", metric="alpha-u")
        assert r["value"] == pytest.approx(both["value"], abs=1e-12)


def test_alpha_agrees_with_nltk_on_the_nltk_export(results, out, tmp_path):
    agreement = pytest.importorskip("nltk.metrics.agreement")
    dest, files = export(out, "nltk", tmp_path / "nltk", settings=["word-interval"])
    assert [f.path for f in files] == ["word-interval/Arg1.tsv", "word-interval/Arg2.tsv"]
    lines = [line.split("\t") for line in (dest / "word-interval/Arg1.tsv").read_text(encoding="utf-8").splitlines()]
    for group in ("ama", "ki"):
        task = agreement.AnnotationTask(data=[tuple(x) for x in lines if x[1].startswith(group + "/")])
        got = one(results, setting="word-interval", group=group, layer="Arg1", metric="alpha")["value"]
        assert task.alpha() == pytest.approx(got, abs=1e-9)


def test_fleiss_by_hand_from_the_fleiss_table(results, out, tmp_path):
    dest, files = export(out, "fleiss-table", tmp_path / "f", settings=["char-interval"])
    for f in files:
        rows = list(csv.reader((dest / f.path).open(encoding="utf-8")))
        counts = np.array([[int(x) for x in r[1:]] for r in rows[1:]], dtype=float)
        n = counts.sum(axis=1)[0]
        p_j = counts.sum(axis=0) / counts.sum()
        p_i = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
        kappa = (p_i.mean() - (p_j**2).sum()) / (1 - (p_j**2).sum())
        got = one(results, setting="char-interval", group=f.group, layer=f.layer, metric="fleiss")
        assert got["value"] == pytest.approx(kappa, abs=1e-12)
        assert got["units_used"] == f.rows and f.left_out == 0


def test_cochran_by_hand_from_the_rat_files(results, out, tmp_path):
    dest, files = export(out, "rat", tmp_path / "rat", settings=["word-interval"])
    names = sorted(f.path for f in files)
    assert "word-interval/ama_asis_word_interval_3_Arg1.dat" in names
    assert "word-interval/ama_asis_word_interval_3_BothArg1Arg2.dat" in names
    assert len(names) == 12  # 4 groups × (Arg1, Arg2, both)
    for f in files:
        x = np.array([[int(v) for v in line.split(" ")] for line in (dest / f.path).read_text().splitlines()]).T
        assert x.shape[1] == 3
        k, col, row = x.shape[1], x.sum(axis=0), x.sum(axis=1)
        q = (k - 1) * (k * (col**2).sum() - col.sum() ** 2) / (k * row.sum() - (row**2).sum())
        layer = "Arg1+Arg2" if f.layer.startswith("Both") else f.layer
        got = one(results, setting="word-interval", group=f.group, layer=layer, metric="cochran-q")
        assert got["value"] == pytest.approx(q, abs=1e-9)
        assert got["df"] == 2


def test_summary_files_follow_table_22(results, out):
    dest = out / "agreement"
    md = (dest / "summary.md").read_text(encoding="utf-8")
    header = "| Connective | Annotator # | File # | Annotation # | AWB_Arg1 | AWB_Arg2 | AWI_Arg1 | AWI_Arg2 | ACB_Arg1 | ACB_Arg2 | ACI_Arg1 | ACI_Arg2 |"
    assert header in md
    rows = list(csv.DictReader((dest / "summary.csv").open(encoding="utf-8")))
    assert [r["Connective"] for r in rows] == ["ama", "icin", "ki", "ve", "Mean", "Perfect Agreement Cases", "Substantial Agreement Cases", "Moderate Agreement Cases"]
    ve = rows[3]
    value = one(results, setting="word-interval", group="ve", layer="Arg1", metric="alpha-u")["value"]
    assert ve["AWI_Arg1"] == f"{value:.3f}"
    assert ve["Annotator #"] == "3" and ve["File #"] == "2"
    awi = [one(results, setting="word-interval", group=g, layer="Arg1", metric="alpha-u")["value"] for g in ("ama", "icin", "ki", "ve")]
    assert rows[5]["AWI_Arg1"] == str(sum(v > 0.8 for v in awi))


def test_relations_are_counted_for_discourse_data_only(results, out, tmp_path):
    """relations: the most distinct records one annotator has in a group's segments, a discourse bank's relations.
    tdb-mini's, from its README's table less the pairs RAT's rule excludes (00001927/ama: no file for burak;
    00001971/ve: cem has one fewer): ama 3, icin 3, ki 1 + 1, ve 6 + 4, in every setting, layer and row, and in
    the summary's Annotation #. A span tool's records are entities and item labels have none: brat-mini's and
    labels-mini's results have no relations column (the report reads them, a subset run keeps the earlier rows)
    and their summaries no Annotation #."""
    from unitize.dataset import OutputData
    from unitize.report.study import results as report_results

    expected = {"ama": 3, "icin": 3, "ki": 2, "ve": 10}
    assert {(r["group"], r["relations"]) for r in results} == set(expected.items())
    with (out / "agreement" / "results.csv").open(encoding="utf-8") as fh:
        assert {(r["group"], r["relations"]) for r in csv.DictReader(fh)} == {(g, str(n)) for g, n in expected.items()}
    with (out / "agreement" / "summary.csv").open(encoding="utf-8") as fh:
        summary = {r["Connective"]: r["Annotation #"] for r in csv.DictReader(fh)}
    assert {g: summary[g] for g in expected} == {g: str(n) for g, n in expected.items()}
    for name in ("brat-mini", "labels-mini"):
        other = tmp_path / name
        assert main(["convert", str(EXAMPLE.parent / name / "study.toml"), "--out", str(other), "-q"]) == 0
        assert main(["agree", str(other), "-q"]) == 0
        whole = pq.read_table(other / "agreement" / "results.parquet")
        assert whole.num_rows and "relations" not in whole.column_names and "documents" in whole.column_names
        with (other / "agreement" / "results.csv").open(encoding="utf-8") as fh:
            assert next(csv.reader(fh)) == whole.column_names
        assert "Annotation #" not in (other / "agreement" / "summary.md").read_text(encoding="utf-8")
        shown = report_results(OutputData(other))
        assert shown is not None and "relations" not in shown["columns"] and len(shown["rows"]) == whole.num_rows
        first = whole.column("setting")[0].as_py()
        assert main(["agree", str(other), "--settings", first, "-q"]) == 0  # a subset run: the other settings' rows kept
        assert pq.read_table(other / "agreement" / "results.parquet").num_rows == whole.num_rows


def test_convert_keeps_the_relations_and_agree_reads_no_record(results, out, tmp_path, monkeypatch):
    """convert keeps each group's relations in the segments file's metadata (every set of its layers); agree takes
    them from there and reads no record. An output written before (no such metadata) has them counted from its
    records, with the same results."""
    import shutil

    from unitize.dataset.segments import SegmentFile
    from unitize.units import relations

    for unit in ("char", "word"):
        kept = relations.from_metadata(pq.read_schema(out / "segments" / f"{unit}.parquet"))
        assert kept is not None and kept["ve"] == {frozenset({"Arg1"}): 10, frozenset({"Arg2"}): 10, frozenset({"Arg1", "Arg2"}): 10}
        assert {g: c[frozenset({"Arg1", "Arg2"})] for g, c in kept.items()} == {"ama": 3, "icin": 3, "ki": 2, "ve": 10}
    group = SegmentFile.group
    monkeypatch.setattr(SegmentFile, "group", lambda self, name: pytest.fail("records read") if "records" in self.columns else group(self, name))
    assert measure(out, ["alpha", "fleiss"]).select(["group", "layer", "relations"]).to_pylist() \
        == [{k: r[k] for k in ("group", "layer", "relations")} for r in results if r["metric"] in ("alpha", "fleiss") and r["pair"] is None
            and r["label"] is None and r["doc"] is None and r["annotator"] is None]
    monkeypatch.undo()
    before = tmp_path / "before"
    shutil.copytree(out, before, ignore=shutil.ignore_patterns("agreement"))
    for unit in ("char", "word"):
        path = before / "segments" / f"{unit}.parquet"
        table = pq.read_table(path)
        pq.write_table(table.replace_schema_metadata({k: v for k, v in table.schema.metadata.items() if k != relations.KEY}), path)
        assert relations.from_metadata(pq.read_schema(path)) is None
    assert json.dumps(agree(before, plot=True).results.to_pylist()) == json.dumps(results)  # NaN as NaN


def test_plots_are_png_and_svg_per_metric_and_layer(results, out):
    plots = sorted(p.name for p in (out / "agreement" / "plots").iterdir())
    assert "alpha-u_Arg1.png" in plots and "alpha-u_Arg1.svg" in plots and "fleiss_Arg2.svg" in plots
    assert (out / "agreement" / "plots" / "alpha-u_Arg1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_results_parquet_and_csv_agree(results, out):
    table = pq.read_table(out / "agreement" / "results.parquet")
    assert table.num_rows == len(results)
    with (out / "agreement" / "results.csv").open(encoding="utf-8") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == len(results)


def test_cli_agree_json_lines_and_usage_errors(out, capsys, tmp_path):
    assert main(["agree", str(out), "--metric", "alpha-u,fleiss", "--settings", "word-interval", "--dest", str(tmp_path / "a"), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4 * 3 * 2 and {x["metric"] for x in lines} == {"alpha-u", "fleiss"}
    assert main(["agree", str(tmp_path / "missing")]) == 2
    assert main(["agree", str(out), "--settings", "nope", "--dest", str(tmp_path / "b")]) == 2
    assert main(["agree", str(out), "--metric", "cohen", "--summary-metric", "alpha", "--dest", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c" / "results.parquet").exists()
    with pytest.raises(SystemExit) as exc:
        main(["agree", str(out), "--metric", "kappa"])
    assert exc.value.code == 2
    assert main(["export", str(out), "--to", "pygamma", "--dest", str(tmp_path / "g")]) == 0
    assert "files written" in capsys.readouterr().out


# --- the Table 22 summary on the thesis's own values ----------------------------------

TABLE_22 = {  # connective: (AWB_Arg1, AWB_Arg2, AWI_Arg1, AWI_Arg2)
    "ama": (0.854, 0.915, 0.847, 0.871), "amaçla": (0.806, 0.944, 0.939, 0.841), "amacıyla": (0.722, 0.914, 0.831, 0.978),
    "ayrıca": (0.631, 0.813, 0.723, 0.950), "çünkü": (0.910, 0.951, 0.915, 0.938), "dahası": (0.777, 0.905, 0.853, 0.706),
    "dolayı": (0.935, 0.957, 0.970, 0.998), "dolayısıyla": (0.781, 0.963, 0.851, 0.983), "fakat": (0.813, 0.913, 0.920, 0.884),
    "hem ... hem": (0.833, 0.953, 0.870, 0.982), "için": (0.802, 0.926, 0.671, 0.919), "karşın": (0.827, 0.894, 0.969, 0.952),
    "ne ... ne": (1.000, 0.987, 1.000, 0.956), "oysa": (0.803, 0.925, 0.888, 0.957), "örneğin": (0.885, 0.898, 0.951, 0.953),
    "rağmen": (0.713, 0.755, 0.642, 0.651), "tersine": (0.730, 1.000, 0.932, 1.000), "ve": (0.694, 0.832, 0.854, 0.898),
    "veya": (0.963, 0.985, 0.942, 0.998), "ya da": (0.837, 0.977, 0.913, 0.988), "yandan": (0.573, 0.669, 0.644, 0.941),
    "yoksa": (0.918, 0.983, 0.832, 0.972),
}


def test_summary_reproduces_table_22_counts_and_means():
    rows = []
    for group, values in TABLE_22.items():
        for (approach, layer), v in zip([("boundary", "Arg1"), ("boundary", "Arg2"), ("interval", "Arg1"), ("interval", "Arg2")], values):
            rows.append({"setting": f"word-{approach}", "unit": "word", "approach": approach, "mode": "separate", "group": group,
                         "layer": layer, "metric": "alpha-u", "value": v, "annotators": 3, "documents": 1, "relations": 1})
    table = pa.Table.from_pylist(rows)
    columns, body, footer = summary_rows(table, "alpha-u")
    assert columns[4:] == ["AWB_Arg1", "AWB_Arg2", "AWI_Arg1", "AWI_Arg2"]
    mean, perfect, substantial, moderate = footer
    # the thesis: averages 0.809, 0.912, 0.862, 0.923; perfect 14 20 18 20; substantial 7 2 4 2; moderate 1 0 0 0
    assert [round(mean[c], 3) for c in columns[4:]] == [0.809, 0.912, 0.862, 0.923]
    assert [perfect[c] for c in columns[4:]] == [14, 20, 18, 20]
    assert [substantial[c] for c in columns[4:]] == [7, 2, 4, 2]
    assert [moderate[c] for c in columns[4:]] == [1, 0, 0, 0]
    assert landis_koch([0.8, 0.81, 0.6, 0.41, 0.4, float("nan")]) == {"Perfect": 1, "Substantial": 1, "Moderate": 2}


# --- the reader contracts: long layout, label values, item labels ------------------------


def write_outdir(root: Path, tables: dict[str, pa.Table], segments: dict[str, pa.Table] | None = None, documents: pa.Table | None = None) -> Path:
    """A minimal output directory: manifest + the given tables (relative path -> table)."""
    root.mkdir(parents=True)
    for rel, table in {**tables, **{f"segments/{u}.parquet": t for u, t in (segments or {}).items()}}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / rel)
    if documents is not None:
        pq.write_table(documents, root / "documents.parquet")
    manifest = {"tool": {"name": "unitize", "version": "test"}, "settings": {"layers": ["Arg1", "Arg2"]}, "summary": {}, "accounting": {}, "outputs": [], "inputs": []}
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def meta(**kw) -> dict[bytes, bytes]:
    return {b"unitize": json.dumps(kw).encode()}


def to_long(wide: pa.Table, annotators: list[str], metadata: dict) -> pa.Table:
    keys = ["group", "doc_id", "layer", "unit", "begin", "end"]
    parts = []
    for a in annotators:
        col = wide.column(a)
        keep = pa.compute.is_valid(col)
        part = wide.select(keys).filter(keep)
        part = part.append_column("annotator", pa.array([a] * part.num_rows, pa.string()))
        parts.append(part.append_column("value", col.filter(keep)))
    long = pa.concat_tables(parts)
    return long.replace_schema_metadata({b"unitize": json.dumps(metadata).encode()})


def test_long_layout_gives_the_same_results_as_wide(out, tmp_path):
    src = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet")
    m = json.loads(src.schema.metadata[b"unitize"])
    shuffled = to_long(src, m["annotators"], {**m, "layout": "long"})
    shuffled = shuffled.take(np.random.default_rng(1).permutation(shuffled.num_rows))
    root = write_outdir(
        tmp_path / "long",
        {"units/word-interval/part-0.parquet": shuffled},
        segments={"word": pq.read_table(out / "segments" / "word.parquet")},
    )
    metrics = ["alpha-u", "alpha", "fleiss", "cochran-q"]
    wide = measure(out, metrics, settings=["word-interval"]).to_pylist()
    long = measure(root, metrics).to_pylist()
    assert len(wide) == len(long) == 4 * 3 * 4
    for a, b in zip(wide, long):
        assert (a["group"], a["layer"], a["metric"]) == (b["group"], b["layer"], b["metric"])
        assert a["value"] == pytest.approx(b["value"], abs=1e-12)


def k2011_items(levels: dict[str, str], long: bool) -> pa.Table:
    coders = ["A", "B", "C", "D"]
    texts = [[None if np.isnan(v) else str(int(v)) for v in K2011[:, k]] for k in range(4)]
    dict_type = pa.dictionary(pa.int32(), pa.string())
    groups = list(levels)
    if not long:
        cols = {"group": pa.array([g for g in groups for _ in range(12)]).cast(dict_type),
                "item": pa.array([f"u{i:02d}" for _ in groups for i in range(1, 13)])}
        for k, c in enumerate(coders):
            cols[c] = pa.array(texts[k] * len(groups)).cast(dict_type)
        return pa.table(cols).replace_schema_metadata(meta(kind="items", annotators=coders, levels=levels))
    rows = [(g, f"u{i + 1:02d}", c, texts[k][i]) for g in groups for k, c in enumerate(coders) for i in range(12) if texts[k][i] is not None]
    table = pa.table({n: [r[j] for r in rows] for j, n in enumerate(("group", "item", "annotator", "value"))})
    return table.replace_schema_metadata(meta(kind="items", layout="long", levels=levels))


@pytest.mark.parametrize("long", [False, True])
def test_item_labels_use_the_declared_level(tmp_path, long):
    levels = {"k-interval": "interval", "k-nominal": "nominal", "k-ordinal": "ordinal"}
    root = write_outdir(tmp_path / "items", {"units/items/part-0.parquet": k2011_items(levels, long)})
    rows = agree(root, plot=True).results.to_pylist()
    alpha = {r["group"]: r for r in pick(rows, metric="alpha")}
    assert alpha["k-nominal"]["value"] == pytest.approx(0.743, abs=0.0005)
    assert alpha["k-ordinal"]["value"] == pytest.approx(0.815, abs=0.0005)
    assert alpha["k-interval"]["value"] == pytest.approx(0.849, abs=0.0005)
    assert alpha["k-interval"]["level"] == "interval" and alpha["k-nominal"]["unit"] == "item"
    au = one(rows, group="k-nominal", metric="alpha-u")
    assert math.isnan(au["value"]) and "item labels have none" in au["reason"]
    assert one(rows, group="k-nominal", metric="cochran-q")["reason"] == "Cochran's Q needs binary (0/1) values"
    assert one(rows, group="k-nominal", metric="fleiss")["units_used"] == 8
    assert len(pick(rows, group="k-nominal", metric="cohen")) == 6
    # the summary falls back to a metric with values: no alpha-U rows for items, so the table is empty but written
    assert (root / "agreement" / "summary.md").is_file()
    dest, files = export(root, "long-csv")
    lines = list(csv.reader((dest / "items" / "items.csv").open(encoding="utf-8")))
    assert lines[0] == ["coder", "item", "label"]
    assert ["A", "k-interval/u01", "1"] in lines and len(lines) == 1 + 3 * 41
    dest, files = export(root, "reliability-csv")
    rel = list(csv.reader((dest / "items" / "k-nominal_items.csv").open(encoding="utf-8")))
    assert rel[0][:3] == ["coder", "k-nominal/u01", "k-nominal/u02"]
    assert rel[3][1] == ""  # coder C did not label u01
    with pytest.raises(DataError, match="RAT format holds 0/1 unit matrices only"):
        export(root, "rat")  # no 0/1 unit data: nothing in the RAT format, and no empty folder
    assert not (root / "exports" / "rat").exists()
    dest, files = export(root, "fleiss-table")
    f = next(f for f in files if f.group == "k-nominal")
    assert (f.rows, f.left_out) == (8, 4)


def test_label_values_are_categories(tmp_path):
    dict_type = pa.dictionary(pa.int32(), pa.string())
    a = ["PER", "PER", None, "ORG", None, None]
    b = ["PER", "ORG", None, "ORG", None, "LOC"]
    t = pa.table({
        "group": pa.array(["g"] * 6).cast(dict_type), "doc_id": pa.array(["d"] * 6).cast(dict_type),
        "layer": pa.array(["NE"] * 6).cast(dict_type), "unit": pa.array(range(6), pa.int32()),
        "begin": pa.array(range(6), pa.int32()), "end": pa.array(range(1, 7), pa.int32()),
        "x": pa.array(a).cast(dict_type), "y": pa.array(b).cast(dict_type),
    }).replace_schema_metadata(meta(annotators=["x", "y"], unit="word", approach="interval", mode="labels", value="label"))
    root = write_outdir(tmp_path / "labels", {"units/word-interval-labels/part-0.parquet": t})
    rows = measure(root, ["alpha", "cochran-q", "alpha-u"]).to_pylist()
    alpha = one(rows, metric="alpha")
    assert alpha["units_used"] == 3 and alpha["value"] == pytest.approx(_nominal_alpha([["PER", "PER"], ["PER", "ORG"], ["ORG", "ORG"], [None, "LOC"]]), abs=1e-12)
    assert one(rows, metric="cochran-q")["reason"] == "Cochran's Q needs binary (0/1) values"
    assert one(rows, metric="alpha-u")["reason"] == "no segments/word.parquet in the output directory"


def _nominal_alpha(units: list[list[str | None]]) -> float:
    """Krippendorff's nominal alpha by the coincidence matrix, by hand."""
    from collections import Counter

    o = Counter()
    for u in units:
        vals = [v for v in u if v is not None]
        if len(vals) < 2:
            continue
        for i, x in enumerate(vals):
            for j, y in enumerate(vals):
                if i != j:
                    o[(x, y)] += 1 / (len(vals) - 1)
    n_c = Counter()
    for (x, _), w in o.items():
        n_c[x] += w
    n = sum(n_c.values())
    d_o = sum(w for (x, y), w in o.items() if x != y)
    d_e = sum(n_c[x] * n_c[y] for x in n_c for y in n_c if x != y) / (n - 1)
    return 1 - d_o / d_e


def test_degenerate_groups_give_nan_with_reasons_not_crashes(tmp_path):
    dict_type = pa.dictionary(pa.int32(), pa.string())
    n = 4

    def block(group, x, y):
        return {"group": [group] * n, "doc_id": ["d"] * n, "layer": ["Arg1"] * n, "unit": list(range(n)),
                "begin": list(range(n)), "end": list(range(1, n + 1)), "x": x, "y": y}

    parts = [block("alone", [0, 1, 1, 0], [None] * n), block("same", [0, 0, 0, 0], [0, 0, 0, 0])]
    cols = {k: sum((p[k] for p in parts), []) for k in parts[0]}
    t = pa.table({
        **{k: pa.array(cols[k]).cast(dict_type) for k in ("group", "doc_id", "layer")},
        **{k: pa.array(cols[k], pa.int32()) for k in ("unit", "begin", "end")},
        "x": pa.array(cols["x"], pa.uint8()), "y": pa.array(cols["y"], pa.uint8()),
    }).replace_schema_metadata(meta(annotators=["x", "y"], unit="char", approach="interval", mode="separate"))
    seg = pa.table({"unit_type": ["char"], "group": ["alone"], "doc_id": ["d"], "layer": ["Arg1"], "annotator": ["x"], "label": [None],
                    "unit_begin": pa.array([1], pa.int32()), "unit_end": pa.array([3], pa.int32()), "begin": pa.array([1], pa.int32()),
                    "end": pa.array([3], pa.int32()), "extended": [False], "snapped": [False], "merged": pa.array([1], pa.int32()),
                    "records": [["f#1"]]})
    root = write_outdir(tmp_path / "degenerate", {"units/char-interval/part-0.parquet": t}, segments={"char": seg})
    assert main(["agree", str(root), "-q"]) == 0
    rows = pq.read_table(root / "agreement" / "results.parquet").to_pylist()
    assert all(math.isnan(r["value"]) and r["reason"] for r in rows)
    assert one(rows, group="alone", metric="alpha-u")["reason"] == "fewer than two annotators with data"
    assert one(rows, group="same", metric="alpha-u")["reason"] == "no annotator marked a unit (no expected disagreement)"
    assert one(rows, group="same", metric="alpha")["reason"].startswith("no variation")
    assert one(rows, group="alone", metric="alpha")["reason"] == "fewer than two annotators with data"
    summary = list(csv.reader((root / "agreement" / "summary.csv").open(encoding="utf-8")))
    # a manifest naming no format has the default (RAT's) traits: relations counted, x's one record "f#1"
    assert summary[0][:4] == ["Group", "Annotator #", "Document #", "Annotation #"] and summary[1][:5] == ["alone", "1", "1", "1", "NaN"]


def test_pygamma_export_positions_and_zero_length(tmp_path):
    seg = pa.table({"unit_type": ["word"] * 3, "group": ["g"] * 3, "doc_id": ["d1", "d2", "d2"], "layer": ["Arg1"] * 3,
                    "annotator": ["x", "x", "y"], "label": [None] * 3,
                    "unit_begin": pa.array([2, 0, 1], pa.int32()), "unit_end": pa.array([4, 1, 1], pa.int32()),
                    "begin": pa.array([10, 0, 5], pa.int32()), "end": pa.array([20, 4, 5], pa.int32()),
                    "extended": [False] * 3, "snapped": [False] * 3, "merged": pa.array([1] * 3, pa.int32()), "records": [["f#1"]] * 3})
    docs = pa.table({"doc_id": ["d1", "d2"], "chars": [30, 12], "tokens": [6, 3]})
    units = pa.table({"group": ["g"], "doc_id": ["d1"], "layer": ["Arg1"], "unit": pa.array([0], pa.int32()), "begin": pa.array([0], pa.int32()),
                      "end": pa.array([1], pa.int32()), "x": pa.array([0], pa.uint8()), "y": pa.array([0], pa.uint8())}
                     ).replace_schema_metadata(meta(annotators=["x", "y"], unit="word", approach="interval", mode="separate"))
    root = write_outdir(tmp_path / "pg", {"units/word-interval/part-0.parquet": units}, segments={"word": seg}, documents=docs)
    dest, files = export(root, "pygamma")
    assert (dest / "word" / "g.csv").read_text() == "x,Arg1,2,4\nx,Arg1,6,7\n"  # d2 starts after d1's 6 tokens
    assert (files[0].rows, files[0].left_out) == (2, 1)  # y's zero-length segment is never written
    dest, _ = export(root, "pygamma", tmp_path / "chars", positions="chars")
    assert (dest / "word" / "g.csv").read_text() == "x,Arg1,10,20\nx,Arg1,30,34\n"


def test_gamma_is_seeded_and_records_its_settings(out, tmp_path):
    pytest.importorskip("pygamma_agreement")
    first = measure(out, ["gamma"], settings=["word-interval"], groups=["ama"]).to_pylist()
    again = measure(out, ["gamma"], settings=["word-interval"], groups=["ama"]).to_pylist()
    assert [r["layer"] for r in first] == ["Arg1", "Arg2", "Arg1+Arg2"]
    assert [r["value"] for r in first] == [r["value"] for r in again]
    assert all(0 < r["value"] <= 1 and r["reason"] is None for r in first)
    params = json.loads(first[0]["params"])
    logged = params.pop("messages", {})  # what pygamma-agreement logged (e.g. "CBC solver not installed"), captured
    assert params == {"alpha": 1.0, "beta": 1.0, "fast": True, "n_samples": 30, "positions": "units on the continuum", "seed": 4577}
    assert all(isinstance(k, str) and n >= 1 for k, n in logged.items())


def test_gamma_equals_pygamma_called_directly(out):
    """The gamma rows are pygamma-agreement's gamma on the same continuum (the documents every
    annotator coded laid end to end, positions in words), same dissimilarity, samples and seed."""
    pytest.importorskip("pygamma_agreement", reason="pygamma-agreement is not installed (pip install 'unitize[gamma]')")
    from pyannote.core import Segment
    from pygamma_agreement import CombinedCategoricalDissimilarity, Continuum

    rows = measure(out, ["gamma"], settings=["word-interval"], groups=["ama"], gamma={"n_samples": 10, "seed": 7}).to_pylist()
    tokens = {r["doc_id"]: r["tokens"] for r in pq.read_table(out / "documents.parquet").to_pylist()}
    docs = _universe(out, "word-interval", "ama")
    base = dict(zip(docs, np.cumsum([0] + [tokens[d] for d in docs])[:-1].tolist()))
    segments = [s for s in pq.read_table(out / "segments" / "word.parquet").to_pylist() if s["group"] == "ama" and s["doc_id"] in base]
    for layer in ("Arg1", "Arg2"):
        c = Continuum()
        for a in ("ayse", "burak", "cem"):
            for b, e in sorted((base[s["doc_id"]] + s["unit_begin"], base[s["doc_id"]] + s["unit_end"])
                               for s in segments if s["layer"] == layer and s["annotator"] == a):
                c.add(a, Segment(float(b), float(e)), layer)
        np.random.seed(7)
        want = c.compute_gamma(CombinedCategoricalDissimilarity(alpha=1.0, beta=1.0), n_samples=10, fast=True)
        got = one(rows, layer=layer)
        assert got["value"] == pytest.approx(float(want.gamma), abs=1e-9), layer
        assert got["units_used"] == sum(tokens[d] for d in docs)


def test_gamma_without_segments_or_package_is_nan_with_reason(tmp_path):
    root = write_outdir(tmp_path / "items", {"units/items/part-0.parquet": k2011_items({"k": "nominal"}, False)})
    [r] = measure(root, ["gamma"]).to_pylist()
    assert math.isnan(r["value"]) and r["reason"] in (
        "gamma needs segments on a continuum; item labels have none",
        "pygamma-agreement is not installed (pip install 'unitize[gamma]')",
    )


def test_not_applicable_item_labels_are_missing_for_every_level(tmp_path):
    """A conditional level an annotator never reached ('#n/a') is measured as missing, even for interval levels."""
    import krippendorff

    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "a.csv").write_text("ID,offensive,score\n1,OFF,3\n2,OFF,4\n3,NON,\n4,OFF,2\n", encoding="utf-8")
    (tmp_path / "annotations" / "b.csv").write_text("ID,offensive,score\n1,OFF,3\n2,NON,\n3,NON,\n4,OFF,1\n", encoding="utf-8")
    (tmp_path / "study.toml").write_text(
        '[input]\nformat = "labels"\nshape = "per-annotator"\nannotations = "annotations"\nitem = "ID"\n'
        'labels = ["offensive", "score"]\n\n[items.groups.score]\nlevel = "interval"\n'
        'applies_when = {level = "offensive", value = "OFF"}\nreach = "any"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha", "--quiet"]) == 0
    rows = {r["group"]: r for r in csv.DictReader(open(out / "agreement" / "results.csv", encoding="utf-8"))}
    nan = float("nan")
    expected = krippendorff.alpha(np.array([[3, 4, 2], [3, nan, 1]]), level_of_measurement="interval")
    assert float(rows["score"]["value"]) == pytest.approx(expected)
    assert rows["score"]["units_used"] == "2"


def test_crowd_long_layout_is_measured_from_value_counts(out, tmp_path, monkeypatch):
    """Above the dense limit, alpha and Fleiss come from value counts per unit and equal the dense values;
    identity-based metrics are NaN with the reason."""
    from unitize.layouts import long as long_layout

    src = pq.read_table(out / "units" / "setting=word-interval" / "part-00000.parquet")
    m = json.loads(src.schema.metadata[b"unitize"])
    long = to_long(src, m["annotators"], {**m, "layout": "long"})
    root = write_outdir(tmp_path / "long", {"units/word-interval/part-0.parquet": long},
                        segments={"word": pq.read_table(out / "segments" / "word.parquet")})
    metrics = ["alpha", "fleiss", "cohen", "cochran-q", "alpha-u"]
    dense = measure(root, metrics).to_pylist()
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 10)
    slots = measure(root, metrics).to_pylist()
    by = lambda rows: {(r["group"], r["layer"], r["metric"], r["pair"]): r for r in rows}  # noqa: E731
    dense, slots = by(dense), by(slots)
    for key, row in slots.items():
        if key[2] in ("alpha", "fleiss"):
            assert row["value"] == pytest.approx(dense[key]["value"], abs=1e-12, nan_ok=True)
            assert row["annotators"] == 3
        else:
            assert math.isnan(row["value"]) and "value counts" in row["reason"]
    assert any(k[2] == "alpha" and not math.isnan(r["value"]) for k, r in slots.items())


def test_crowd_item_tables_with_not_applicable_labels(tmp_path, monkeypatch):
    """Long item matrices measured from value counts give the dense values, '#n/a' missing in both."""
    from unitize.layouts import long as long_layout

    out = tmp_path / "out"
    assert main(["convert", str(EXAMPLE.parent / "labels-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    metrics = ["alpha", "fleiss"]
    dense = {(r["setting"], r["group"], r["metric"]): r for r in measure(out, metrics, settings=["items-long"]).to_pylist()}
    monkeypatch.setattr(long_layout, "DENSE_CELLS", 1)
    counted = {(r["setting"], r["group"], r["metric"]): r for r in measure(out, metrics, settings=["items-long"]).to_pylist()}
    assert set(counted) == set(dense) and any(k[1] == "target" for k in counted)
    for key, row in counted.items():
        if key[2] == "alpha":
            assert row["value"] == pytest.approx(dense[key]["value"], abs=1e-12, nan_ok=True), key
            assert row["units_used"] == dense[key]["units_used"]
