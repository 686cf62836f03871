"""A span corpus streamed a batch of whole groups at a time (DATT) gives the outputs of the corpus read whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import unitize.adapters.datt as datt
from tests.conftest import EXAMPLE
from unitize.config import load_toml, override
from unitize.run import read_corpus, unitize, write_output

VARIANTS = {
    "default": [],
    "every-mode": ["unitize.modes=['separate','combined','labels']", "unitize.keep_missing=true", "unitize.keep_mismatched=true"],
    "named-annotators": ["input.annotators=['cem','ayse']", "unitize.layers=['Arg1','Arg2','Conn']"],
    "one-layer-long": ["unitize.layers=['Arg2']", "unitize.layout='long'", "unitize.discontinuous='drop'"],
}


def written(settings, out: Path, *, stream: bool) -> dict[str, bytes]:
    """Every output file's bytes (the manifest without its run section and output path)."""
    result = unitize(read_corpus(settings, stream=stream), settings)
    write_output(result, out)
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    manifest = json.loads(files.pop("manifest.json"))
    manifest.pop("run")
    files["manifest.json"] = json.dumps(manifest, sort_keys=True).replace(str(out), "OUT").encode()
    return files


@pytest.mark.parametrize("variant", VARIANTS)
def test_streamed_outputs_are_the_whole_corpus_outputs(variant, tmp_path, monkeypatch):
    settings = load_toml(EXAMPLE / "study.toml", VARIANTS[variant])
    whole = written(settings, tmp_path / "whole", stream=False)
    monkeypatch.setattr(datt, "BATCH_FILES", 1)  # every connective its own batch
    streamed = written(settings, tmp_path / "streamed", stream=True)
    assert sorted(streamed) == sorted(whole)
    assert [name for name in whole if whole[name] != streamed[name]] == []


def test_a_streamed_read_holds_no_span(monkeypatch):
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    settings = load_toml(EXAMPLE / "study.toml")
    corpus = read_corpus(settings, stream=True)
    assert corpus.spans == [] and corpus.submissions == []
    assert sorted(corpus.documents) == ["00001927", "00001971", "00002009"]
    assert corpus.stream is not None and corpus.stream.annotators == ["ayse", "burak", "cem"]
    batches = list(corpus.stream.batches())
    assert [sorted({s.group for s in b.submissions}) for b in batches] == [["ama"], ["icin"], ["ki"], ["ve"]]
    assert sum(len(b.spans) for b in batches) == len(read_corpus(settings).spans)


def test_grouping_by_sense_reads_whole(monkeypatch):
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    settings = override(load_toml(EXAMPLE / "study.toml"), input={"group_by": "type"})
    corpus = read_corpus(settings, stream=True)
    assert corpus.stream is None and corpus.spans  # relations regrouped across files: no batch of whole groups
