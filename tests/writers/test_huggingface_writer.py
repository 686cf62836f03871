"""The Hugging Face writer read by ``datasets.load_dataset`` itself (Parquet and JSON lines): a row per document with its
text and every annotator's spans on the source's characters; written a batch of documents at a time (row groups)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize import load_toml, read_corpus
from unitize.run.conversion import convert_format
from unitize.writers import huggingface

datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed (make test installs it)")
EXAMPLE = ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"


@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
def test_datasets_loads_every_span_where_the_source_has_it(file_format: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface, "BATCH", 2)  # row groups of two documents
    settings = load_toml(EXAMPLE)
    corpus = read_corpus(settings)
    convert_format(settings, "huggingface", tmp_path / "out", options={"file_format": file_format})
    path = tmp_path / "out" / "annotations" / "data" / f"train.{file_format}"
    loaded = datasets.load_dataset("parquet" if file_format == "parquet" else "json", data_files=str(path), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    got = set()
    for row in loaded:
        assert row["text"] == corpus.documents[row["id"]].text
        for who in row["annotations"]:
            got |= {(who["annotator"], row["id"], s["layer"], s["label"], s["start"], s["end"]) for s in who["spans"]}
    want = {(s.annotator, s.doc_id, s.layer, s.label, s.begin, s.end) for s in corpus.spans if s.valid}
    assert len(loaded) == len(corpus.documents) and len(want) > 20 and got == want
    if file_format == "parquet":
        assert pq.ParquetFile(path).num_row_groups == -(-len(corpus.documents) // 2)
