"""Output format 2 and 3: Hive-partitioned work partitions, universe/tokens tables, the sparse layout read back dense,
format 1 still read, newer formats refused, the partition tasks small and executor-independent."""

from __future__ import annotations

import json
import math
import pickle
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import unitize
from tests.conftest import CORPORA, ROOT, ted_turkish_pair
from unitize.agree import METRICS, measure
from unitize.cli import main
from unitize.dataset.directory import OutputData
from unitize.output.parts import PartTask, partitions, write_partition
from unitize.schema import setting_path

EXAMPLES = ROOT / "unitize" / "examples"
FIXTURE_V1 = ROOT / "tests" / "fixtures" / "format1-brat"
TED = CORPORA / "ted-mdb"


def convert(study: Path | None, out: Path, *args: str) -> Path:
    argv = ["convert", *([str(study)] if study else []), "--out", str(out), "--quiet", *args]
    assert main(argv) == 0
    return out


def data_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def manifest(out: Path) -> dict:
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    m.pop("run")
    return m


def results(out: Path, metrics: list[str]) -> list[dict]:
    rows = measure(out, metrics).to_pylist()
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]


def metrics_available() -> list[str]:
    try:
        import pygamma_agreement  # noqa: F401
    except ImportError:
        return [m for m in METRICS if m != "gamma"]
    return list(METRICS)


# --- the layout on disk ------------------------------------------------------------------


def test_partitions_close_once_they_hold_enough_units():
    assert partitions([5, 5, 5, 5], 10) == [(0, 2), (2, 4)]
    assert partitions([12, 1, 1], 10) == [(0, 1), (1, 3)]
    assert partitions([3], 10) == [(0, 1)]
    assert partitions([], 10) == [(0, 0)]


def test_every_setting_has_every_part_and_reads_whole_with_a_setting_column(tmp_path):
    out = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "out", "--modes", "separate,combined", "--partition-units", "700")
    settings = sorted(p.name for p in (out / "units").iterdir())
    assert settings == [f"setting={u}-{a}{m}" for u in ("char", "word") for a in ("boundary", "interval") for m in ("", "-combined")]
    parts = {s: sorted(p.name for p in (out / "units" / s).iterdir()) for s in settings}
    n = len(parts[settings[0]])
    assert n == 3 and all(v == [f"part-{k:05d}.parquet" for k in range(n)] for v in parts.values())
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert m["format_version"] == 3
    listed = [o["path"] for o in m["outputs"] if o["path"].startswith("units/")]
    assert len(listed) == n * len(settings)
    whole = pq.read_table(out / "units")
    assert "setting" in whole.column_names
    counts = dict(zip(*np.unique(whole.column("setting").to_numpy(zero_copy_only=False).astype(str), return_counts=True)))
    assert {k: int(v) for k, v in counts.items()} == m["summary"]["unit_rows"]
    for s in settings:  # the setting lives in the directory name only
        assert "setting" not in pq.read_schema(out / "units" / s / "part-00000.parquet").names
    # each part sorted by (group, layer, doc_id, unit)
    for part in (out / "units" / "setting=char-interval").iterdir():
        t = pq.read_table(part).to_pydict()
        keys = list(zip(t["group"], t["layer"], t["doc_id"], t["unit"]))
        assert keys == sorted(keys)


def test_parts_read_back_as_one_partition(tmp_path):
    one = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "one", "--modes", "separate,labels")
    many = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "many", "--modes", "separate,labels", "--partition-units", "500")
    for setting in ("char-interval", "word-boundary", "word-interval-labels"):
        assert unitize.densify(many, setting).to_pydict() == unitize.densify(one, setting).to_pydict()
    assert results(one, ["alpha", "fleiss", "cohen"]) == results(many, ["alpha", "fleiss", "cohen"])


def test_universe_and_tokens_tables(tmp_path):
    out = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "out")
    universe = pq.read_table(out / "universe.parquet").to_pylist()
    keys = [(r["group"], r["doc_id"]) for r in universe]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    wide = pq.read_table(out / "units" / "setting=word-interval").to_pydict()
    annotators = json.loads(pq.read_schema(out / "units" / "setting=word-interval" / "part-00000.parquet").metadata[b"unitize"])["annotators"]
    for r in universe:  # the annotators listed are exactly the non-null columns of the document's rows
        rows = [i for i, (g, d) in enumerate(zip(wide["group"], wide["doc_id"])) if (g, d) == (r["group"], r["doc_id"])]
        assert rows
        assert [a for a in annotators if wide[a][rows[0]] is not None] == r["annotators"]
    tokens = pq.read_table(out / "tokens.parquet").to_pydict()
    docs = pq.read_table(out / "documents.parquet").to_pydict()
    assert len(tokens["token"]) == sum(n for n in docs["tokens"] if n is not None)
    texts = dict(zip(docs["doc_id"], docs["text"]))
    d, b, e = tokens["doc_id"][0], tokens["begin"][0], tokens["end"][0]
    assert texts[d][b:e].strip() == texts[d][b:e] and e > b


def test_reruns_are_byte_identical(tmp_path):
    study = EXAMPLES / "tdb-mini" / "study.toml"
    args = ("--layout", "sparse", "--modes", "separate,labels", "--partition-units", "800")
    out = convert(study, tmp_path / "out", *args)
    first, first_manifest = data_files(out), manifest(out)
    convert(study, out, *args)
    assert data_files(out) == first and len(first) > 10
    assert manifest(out) == first_manifest


class PickledMap:
    """An executor that sends every task through pickle, as a process pool or Dask would."""

    def __init__(self):
        self.sizes: list[int] = []

    def map(self, fn, items):
        out = []
        for item in items:
            blob = pickle.dumps(item)
            self.sizes.append(len(blob))
            out.append(pickle.loads(pickle.dumps(fn(pickle.loads(blob)))))
        return out


def test_tasks_are_small_and_any_executor_writes_the_same_bytes(tmp_path):
    settings = unitize.override(unitize.load_settings(EXAMPLES / "tdb-mini" / "study.toml"), partition_units=600,
                                modes=("separate", "combined", "labels"))
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    todo = result.part_tasks(tmp_path / "staging")
    assert len(todo) > 1 and all(isinstance(t, PartTask) for t in todo)
    blob = pickle.dumps(todo[0])
    assert b"Corpus" not in blob and b"Span" not in blob
    local = unitize.write_output(result, tmp_path / "local")
    executor = PickledMap()
    remote = unitize.write_output(result, tmp_path / "pickled", executor=executor)
    assert len(executor.sizes) == len(todo)
    assert data_files(tmp_path / "local") == data_files(tmp_path / "pickled")
    local.pop("run"), remote.pop("run")
    assert local == remote
    assert write_partition is not None


def test_a_partition_is_cut_from_its_documents_alone_and_made_when_taken(tmp_path, monkeypatch):
    """A task's marks and universe equal those of a selection over every document (what a part was cut from
    before its documents were found by bisection); the writer in this process holds few tasks at a time."""
    import unitize.output.parts as parts
    from unitize.output.parts import InProcess

    settings = unitize.override(unitize.load_settings(EXAMPLES / "tdb-mini" / "study.toml"), partition_units=600,
                                modes=("separate", "labels"))
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    todo = result.part_tasks(tmp_path / "staging")
    doc_ids = result.doc_ids()
    cuts = partitions([len(result.corpus.documents[d].text or "") for d in doc_ids], 600)
    assert len(todo) == len(cuts) == 3
    for task, (d0, d1) in zip(todo, cuts):
        source = task.source
        assert source.universe == {g: {d: m for d, m in docs.items() if d in set(doc_ids[d0:d1])}
                                   for g, docs in result.universe.items()}
        for unit, res in result.results.items():
            marks, keys = res.marks, res.marks.keys
            for key, u0, per_label, got, got_u0 in [(marks.key, marks.u0, False, source.marks[unit].key, source.marks[unit].u0),
                                                    (marks.label_key, marks.label_u0, True, source.marks[unit].label_key,
                                                     source.marks[unit].label_u0)]:
                sel = (keys.documents(key, per_label) >= d0) & (keys.documents(key, per_label) < d1)
                assert np.array_equal(got, keys.renumbered(key[sel], d0, d1, per_label))
                assert np.array_equal(got_u0, u0[sel] - (result.spaces[unit].base[d0] if d0 < len(doc_ids) else 0))
    made = []
    real = parts.PartTask
    monkeypatch.setattr(parts, "PartTask", lambda *a: made.append(a[0]) or real(*a))
    todo = result.part_tasks(tmp_path / "staging")
    assert made == [] and todo[1].index == 1 and made == [1]
    taken, held = [], []

    def items():
        for k in range(12):
            taken.append(k)
            yield k

    def write(k):
        held.append(len(taken) - len(held))  # items taken but not yet written, this one included
        return -k

    assert InProcess(2).map(write, items()) == [-k for k in range(12)]
    assert max(held) <= 3


def test_a_group_frame_is_built_once_per_unit_type(tmp_path, monkeypatch):
    import unitize.spans.matrices as matrices

    settings = unitize.override(unitize.load_settings(EXAMPLES / "tdb-mini" / "study.toml"), modes=("separate", "combined"))
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    calls = []
    real = matrices.group_frame
    monkeypatch.setattr(matrices, "group_frame", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    unitize.write_output(result, tmp_path / "out")
    groups = [g for g in result.groups if result.universe.get(g)]
    assert len(calls) == 2 * len(groups)  # char and word, each group once (not per approach, mode or layer)


# --- the sparse layout -------------------------------------------------------------------


@pytest.mark.parametrize("example", ["tdb-mini", "brat-mini", "inception-mini", "bio-mini", "crowd-mini"])
def test_sparse_gives_the_wide_matrices_and_coefficients(example, tmp_path):
    study = EXAMPLES / example / "study.toml"
    modes = ["--modes", "separate,combined" if example == "tdb-mini" else "separate,labels"]
    if example == "crowd-mini":  # three of four workers per comment: the fourth is missing (null) there
        modes.append("--keep-missing")
    wide = convert(study, tmp_path / "wide", "--layout", "wide", *modes)
    sparse = convert(study, tmp_path / "sparse", "--layout", "sparse", *modes, "--partition-units", "400")
    mw, ms = json.loads((wide / "manifest.json").read_text()), json.loads((sparse / "manifest.json").read_text())
    assert mw["summary"]["dense_rows"] == ms["summary"]["dense_rows"] == mw["summary"]["unit_rows"]
    assert all(ms["summary"]["unit_rows"][k] <= v for k, v in ms["summary"]["dense_rows"].items())
    for setting in mw["summary"]["unit_rows"]:
        meta = json.loads(pq.read_schema(next((sparse / setting_path(setting)).iterdir())).metadata[b"unitize"])
        assert meta["layout"] == "sparse"
        d = unitize.densify(sparse, setting)
        assert d.schema.names == pq.read_schema(wide / setting_path(setting) / "part-00000.parquet").names
        assert d.to_pydict() == pq.read_table(wide / setting_path(setting) / "part-00000.parquet").to_pydict()
    metrics = metrics_available()
    assert results(wide, metrics) == results(sparse, metrics)


def test_sparse_rows_are_the_marked_units_and_the_missing_annotators_documents(tmp_path):
    study = EXAMPLES / "tdb-mini" / "study.toml"  # one annotator has no file for one document: kept with --keep-missing
    wide = convert(study, tmp_path / "wide", "--layout", "wide", "--keep-missing")
    sparse = convert(study, tmp_path / "sparse", "--layout", "sparse", "--keep-missing")
    for setting in ("char-interval", "word-boundary"):
        w = pq.read_table(wide / setting_path(setting)).to_pydict()
        s = pq.read_table(sparse / setting_path(setting)).to_pydict()
        annotators = [c for c in w if c not in ("group", "doc_id", "layer", "unit", "begin", "end")]
        keep = [i for i in range(len(w["unit"])) if any(w[a][i] != 0 for a in annotators)]
        assert any(w[a][i] is None for a in annotators for i in keep)  # nulls are kept
        assert {k: [w[k][i] for i in keep] for k in w} == s


def test_densify_slices_and_errors(tmp_path):
    out = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "out", "--layout", "sparse")
    whole = unitize.densify(out, "word-interval").to_pydict()
    part = unitize.densify(out, "word-interval", group="ama", layer="Arg2").to_pydict()
    rows = [i for i, (g, x) in enumerate(zip(whole["group"], whole["layer"])) if (g, x) == ("ama", "Arg2")]
    assert part == {k: [v[i] for i in rows] for k, v in whole.items()}
    with pytest.raises(unitize.agree.DataError, match="no group 'nope'"):
        unitize.densify(out, "word-interval", group="nope")
    with pytest.raises(unitize.agree.DataError, match="no setting"):
        unitize.densify(out, "word-sideways")


def test_auto_layout_stays_wide_for_the_examples(tmp_path):
    out = convert(EXAMPLES / "tdb-mini" / "study.toml", tmp_path / "out")
    meta = json.loads(pq.read_schema(out / "units" / "setting=char-interval" / "part-00000.parquet").metadata[b"unitize"])
    assert meta["layout"] == "wide"


@pytest.mark.skipif(not TED.is_dir(), reason="../shared/corpora is not beside the repository")
def test_sparse_equals_wide_on_ted_mdb_turkish(tmp_path):
    common = ted_turkish_pair(tmp_path)
    wide = convert(None, tmp_path / "wide", *common, "--layout", "wide")
    sparse = convert(None, tmp_path / "sparse", *common, "--layout", "sparse", "--partition-units", "20000")
    assert len(list((sparse / "units" / "setting=char-interval").iterdir())) > 1
    for setting in ("char-interval", "word-boundary"):
        assert unitize.densify(sparse, setting).to_pydict() == unitize.densify(wide, setting).to_pydict()
    metrics = [m for m in metrics_available() if m != "gamma"]  # gamma samples continua: minutes on a real text
    assert results(wide, metrics) == results(sparse, metrics)


# --- readers: format 1 and newer formats ----------------------------------------------------


@pytest.fixture
def v1(tmp_path) -> Path:
    out = tmp_path / "v1"
    shutil.copytree(FIXTURE_V1, out)
    return out


def test_format_1_is_read_by_agree_export_and_info(v1, tmp_path, capsys):
    data = OutputData(v1)
    assert data.format_version == 1 and [s.name for s in data.settings][:2] == ["char-boundary", "char-boundary-labels"]
    assert main(["agree", str(v1), "-q"]) == 0
    rows = pq.read_table(v1 / "agreement" / "results.parquet").to_pylist()
    assert {r["setting"] for r in rows} == {s.name for s in data.settings}
    assert main(["export", str(v1), "--to", "reliability-csv"]) == 0
    assert (v1 / "exports" / "reliability-csv" / "index.csv").is_file()
    capsys.readouterr()
    assert main(["info", str(v1)]) == 0
    assert "units/word-interval/part-0.parquet" in capsys.readouterr().out
    wide = unitize.densify(v1, "word-interval")
    assert wide.num_rows == pq.read_table(v1 / "units" / "word-interval" / "part-0.parquet").num_rows


def test_a_newer_format_is_refused_with_the_upgrade_message(v1, capsys):
    m = json.loads((v1 / "manifest.json").read_text(encoding="utf-8"))
    m["format_version"] = 4
    (v1 / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    message = f"{v1} was written by unitize format 4; this unitize reads formats 1–3: upgrade unitize"
    for argv in (["agree", str(v1)], ["export", str(v1), "--to", "rat"], ["info", str(v1)]):
        assert main(argv) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(unitize.agree.DataError, match="reads formats 1–3"):
        OutputData(v1)


def test_bad_partition_units_is_a_usage_error(tmp_path, capsys):
    argv = ["convert", str(EXAMPLES / "tdb-mini" / "study.toml"), "--out", str(tmp_path / "o"), "--partition-units", "0"]
    assert main(argv) == 2
    assert "partition_units must be a positive integer" in capsys.readouterr().err


def test_item_matrices_are_cut_into_bounded_parts(tmp_path, monkeypatch):
    import unitize.items.run as item_run
    import unitize.output.parts as parts

    monkeypatch.setattr(item_run, "item_slices", lambda datasets: parts.item_slices(datasets, limit=5))
    study = EXAMPLES / "labels-mini" / "study.toml"
    settings = unitize.override(unitize.load_settings(study), items={**unitize.load_settings(study).items, "layouts": ["wide", "long"]})
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    unitize.write_output(result, tmp_path / "out")
    files = sorted((tmp_path / "out" / "units" / "setting=items").iterdir())
    assert len(files) > 1 and all(pq.read_metadata(f).num_rows <= 5 for f in files)
    whole = pa.concat_tables([pq.read_table(f) for f in files])
    assert whole.to_pydict() == result.table("wide").to_pydict()
    assert main(["agree", str(tmp_path / "out"), "-q"]) == 0
