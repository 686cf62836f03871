"""``--to FORMAT --dest DIR``: the gold reads back into unitize; bad input is refused with nothing written;
the crowd-kit methods on item labels."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.adjudicate.conftest import brat_out
from tests.adjudicate.test_examples import EXAMPLES, convert
from unitize.adjudicate import adjudicate
from unitize.adjudicate.gold import span_corpus
from unitize.adjudicate.methods import MODEL_OPTIONS, MissingCrowdKit
from unitize.cli import main
from unitize.dataset import OutputData
from unitize.errors import UnitizeError
from unitize.schema import setting_path
from unitize.writers import available

HAS_CROWD_KIT = importlib.util.find_spec("crowdkit") is not None


@pytest.fixture(scope="module")
def tdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert("tdb-mini", tmp_path_factory.mktemp("tdb") / "out", "wide")


def units(out: Path, setting: str = "word-interval") -> dict[tuple, dict]:
    return {(r["group"], r["doc_id"], r["layer"], r["unit"]): r for r in pq.read_table(out / setting_path(setting)).to_pylist()}


@pytest.mark.parametrize("to", ["datt", "pdtb3"])
def test_the_gold_beside_the_annotators_reads_back_unit_for_unit(to: str, tdb: Path, tmp_path: Path) -> None:
    work = tmp_path / "tdb"
    shutil.copytree(tdb, work)
    adjudicate(work, "majority", to=to, gold_dest=tmp_path / "gold", with_annotators=True)
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "gold" and manifest["accounting"]["texts_from_documents_parquet"] == 0
    for text in (EXAMPLES / "tdb-mini" / "texts").glob("*.txt"):  # the raw texts, byte for byte
        assert (tmp_path / "gold" / "texts" / text.name).read_bytes() == text.read_bytes()
    assert main(["convert", str(tmp_path / "gold" / "study.toml"), "--out", str(tmp_path / "back"), "-q"]) == 0
    before, back = units(work), units(tmp_path / "back")
    gold = {(r["group"], r["doc_id"], r["layer"], r["unit"]): r["gold"] for r in pq.read_table(work / "adjudication" / "units.parquet").to_pylist()}
    assert back.keys() == before.keys() == gold.keys()
    assert all(back[k][a] == before[k][a] for k in before for a in ("ayse", "burak", "cem"))
    assert all(str(back[k]["gold"]) == gold[k] for k in gold)


def test_entity_gold_as_a_corpus_in_the_unit_space(tmp_path: Path) -> None:
    out = brat_out(tmp_path, "Ann met Bob in Rome today", {
        "A": "T1\tPER 0 2\tAn\nT2\tLOC 15 19\tRome\n", "B": "T1\tPER 0 3\tAnn\n", "C": "T1\tPER 0 3\tAnn\nT2\tLOC 15 19\tRome\n"})
    result = adjudicate(out, "majority", setting="word-interval-labels")
    data = OutputData(out)
    corpus, rewritten = span_corpus(data, data.setting("word-interval-labels"), result.spans, "gold", True, tmp_path)
    gold = [(s.layer, s.label, s.begin, s.end, s.record) for s in corpus.spans if s.annotator == "gold"]
    assert gold == [("Entity", "PER", 0, 3, "gold-1"), ("Entity", "LOC", 15, 19, "gold-2")]  # "An" snapped to the word
    # converted from flags, not a study file: where the raw texts were is not known, documents.parquet's text is used
    assert rewritten == 1 and corpus.documents["d"].text == "Ann met Bob in Rome today"
    assert sorted((s.annotator, s.doc_id, s.records) for s in corpus.submissions) == [
        ("A", "d", 2), ("B", "d", 1), ("C", "d", 2), ("gold", "d", 2)]
    assert Path(corpus.documents["d"].source or "").read_text(encoding="utf-8") == "Ann met Bob in Rome today"


def test_a_format_without_a_writer_is_refused_and_nothing_written(tdb: Path, tmp_path: Path) -> None:
    work = tmp_path / "tdb"
    shutil.copytree(tdb, work)
    writable = ", ".join(sorted(available()))  # every registered writer
    with pytest.raises(UnitizeError, match=re.escape(f"cannot write the gold as 'no-such-format': no writer for it; writable formats: {writable}")):
        adjudicate(work, "majority", to="no-such-format", gold_dest=tmp_path / "gold")
    assert not (work / "adjudication").exists() and not (tmp_path / "gold").exists()
    with pytest.raises(SystemExit) as stop:  # the command line offers the registry's formats only
        main(["adjudicate", str(work), "--to", "no-such-format", "--dest", str(tmp_path / "gold")])
    assert stop.value.code == 2 and not (tmp_path / "gold").exists()


def test_a_dest_of_other_files_is_refused_and_an_earlier_gold_needs_force(tdb: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    work = tmp_path / "tdb"
    shutil.copytree(tdb, work)
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("keep me", encoding="utf-8")
    assert main(["adjudicate", str(work), "--to", "datt", "--dest", str(other)]) == 2
    assert "holds other files than a gold" in capsys.readouterr().err
    assert main(["adjudicate", str(work), "--to", "datt", "--dest", str(other), "--force"]) == 2
    assert sorted(p.name for p in other.iterdir()) == ["mine.txt"] and not (work / "adjudication").exists()
    gold = tmp_path / "gold"
    assert main(["adjudicate", str(work), "--to", "datt", "--dest", str(gold), "-q"]) == 0
    stamp = (gold / "manifest.json").read_bytes()
    assert main(["adjudicate", str(work), "--method", "unanimous", "--to", "datt", "--dest", str(gold), "-q"]) == 2
    assert "pass --force to replace it" in capsys.readouterr().err and (gold / "manifest.json").read_bytes() == stamp
    assert main(["adjudicate", str(work), "--method", "unanimous", "--to", "pdtb3", "--dest", str(gold), "--force", "-q"]) == 0
    assert (gold / "manifest.json").read_bytes() != stamp and "pdtb3" in (gold / "study.toml").read_text(encoding="utf-8")


def test_bad_input_is_a_clear_error_and_writes_nothing(tdb: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    work = tmp_path / "tdb"
    shutil.copytree(tdb, work)
    shutil.rmtree(work / "units")
    assert main(["adjudicate", str(work)]) == 2
    assert "holds no unit matrices" in capsys.readouterr().err and not (work / "adjudication").exists()
    with pytest.raises(UnitizeError, match="unknown adjudication method 'median'; choose from majority, threshold, unanimous"):
        adjudicate(tdb, "median")
    with pytest.raises(SystemExit) as stop:
        main(["adjudicate", str(tdb), "--method", "median"])
    assert stop.value.code == 2
    cases = [
        (["--method", "threshold"], "--min-share goes with --method threshold"),
        (["--min-share", "0.5"], "--min-share goes with --method threshold"),
        (["--method", "threshold", "--min-share", "1.5"], "a share above 0 and at most 1"),
        (["--setting", "word-boundary"], "marks only the first and last unit"),
        (["--method", "dawid-skene"], "holds no setting dawid-skene can adjudicate"),
        (["--annotator", "ayse"], "an annotator of the study is called 'ayse'"),
        (["--to", "datt"], "--to needs --dest DIR"),
    ]
    for flags, message in cases:
        assert main(["adjudicate", str(tdb), *flags]) == 2, flags
        assert message in capsys.readouterr().err, flags
    assert not (tdb / "adjudication").exists()


def test_the_folder_is_replaced_whole_keeping_the_users_files_and_a_foreign_one_refused(tdb: Path, tmp_path: Path) -> None:
    work = tmp_path / "tdb"
    shutil.copytree(tdb, work)
    adjudicate(work, "majority")
    ours = ["review.csv", "review.jsonl", "spans.parquet", "summary.json", "units.parquet"]
    assert sorted(p.name for p in (work / "adjudication").iterdir()) == ours
    (work / "adjudication" / "decisions.md").write_text("mine", encoding="utf-8")
    adjudicate(work, "unanimous")  # a rerun replaces the command's files, not the user's
    assert '"method": "unanimous"' in (work / "adjudication" / "summary.json").read_text(encoding="utf-8")
    assert (work / "adjudication" / "decisions.md").read_text(encoding="utf-8") == "mine"
    # a rerun of convert leaves the command's files out, the user's in; adjudicate then writes beside them
    assert main(["convert", str(EXAMPLES / "tdb-mini" / "study.toml"), "--out", str(work), "-q"]) == 0
    assert sorted(p.name for p in (work / "adjudication").iterdir()) == ["decisions.md"]
    adjudicate(work, "majority")
    assert sorted(p.name for p in (work / "adjudication").iterdir()) == sorted([*ours, "decisions.md"])
    # a folder holding a file named as one of the command's, without its summary, is not replaced
    shutil.rmtree(work / "adjudication")
    (work / "adjudication").mkdir()
    (work / "adjudication" / "units.parquet").write_text("not ours", encoding="utf-8")
    with pytest.raises(UnitizeError, match="is not an earlier adjudication"):
        adjudicate(work, "majority")
    assert [p.name for p in (work / "adjudication").iterdir()] == ["units.parquet"]


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert("labels-mini", tmp_path_factory.mktemp("labels") / "out", "wide")


@pytest.mark.skipif(not HAS_CROWD_KIT, reason="crowd-kit is not installed (pip install 'unitize[crowd]')")
@pytest.mark.parametrize("method", ["dawid-skene", "mace"])
def test_crowd_kit_methods_on_item_labels(method: str, labels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # MACE seeded, one restart and few iterations: the same answer as the command's 50 on these 50 items, in a second or two
    monkeypatch.setitem(MODEL_OPTIONS, "mace", {**MODEL_OPTIONS["mace"], "n_iter": 10})
    work = tmp_path / "labels"
    shutil.copytree(labels, work)
    majority = adjudicate(work, "majority").gold
    result = adjudicate(work, method)
    t = pq.read_table(work / "adjudication" / "units.parquet").to_pydict()
    assert result.setting == "items" and len(t["gold"]) == 50
    # the model weighs annotators by their estimated reliability: it overrules the vote on a few items only
    differ = {k: (majority[k], v) for k, v in result.gold.items() if majority[k] is not None and v != majority[k]}
    assert differ == {"dawid-skene": {("severity", "107"): ("2", "3"), ("severity", "109"): ("2", "3")}, "mace": {}}[method]
    assert all(result.gold[k] is not None for k, v in majority.items() if v is not None)
    assert all(0.5 < c <= 1 for c, g in zip(t["confidence"], t["gold"]) if g is not None)


@pytest.mark.skipif(not HAS_CROWD_KIT, reason="crowd-kit is not installed (pip install 'unitize[crowd]')")
def test_a_model_method_fits_on_the_whole_group_where_votes_go_a_piece_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The long item table read a piece of whole items at a time (majority) but whole for dawid-skene, which fits
    the annotators on every item of the group: pieces of one row change nothing."""
    from unitize.dataset import pieces as pieces_module

    work = convert("labels-mini", tmp_path / "labels", "long")
    whole = {m: (adjudicate(work, m, setting="items-long").gold, (work / "adjudication" / "units.parquet").read_bytes())
             for m in ("majority", "dawid-skene")}
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1)
    for method, (gold, units) in whole.items():
        assert adjudicate(work, method, setting="items-long").gold == gold
        assert (work / "adjudication" / "units.parquet").read_bytes() == units
    assert whole["dawid-skene"][0][("severity", "107")] == "3" and whole["majority"][0][("severity", "107")] == "2"


def test_without_crowd_kit_the_error_says_how_to_install_it(labels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_crowdkit(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("crowdkit"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_crowdkit)
    with pytest.raises(MissingCrowdKit, match=r"pip install 'unitize\[crowd\]'"):
        adjudicate(labels, "mace")
    assert not (labels / "adjudication").exists()


def test_examples_folder_is_untouched() -> None:
    assert not list(EXAMPLES.glob("*/adjudication"))
