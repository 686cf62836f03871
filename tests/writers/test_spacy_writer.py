"""The spaCy writer read by spaCy itself: every Doc's text is the document's, every span group's spans cover the
characters of the source's spans; a corpus of more Docs than a file holds is a folder of DocBin files, read back
unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize import load_toml, read_corpus
from unitize.run.conversion import convert_format
from unitize.writers import spacy_docbin

EXAMPLE = ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"


def spacy_spans(folder: Path) -> set[tuple[str, str, str, str, int, int]]:
    """(annotator, document, layer, label, start, end) of every span spaCy's DocBin reads from the files of ``folder``."""
    import spacy
    from spacy.tokens import DocBin

    vocab = spacy.blank("xx").vocab
    out = set()
    for path in sorted(folder.glob("*.spacy")):
        for doc in DocBin().from_disk(path).get_docs(vocab):
            who = doc.user_data["unitize"]
            for layer, group in doc.spans.items():
                out |= {(who["annotator"], who["doc_id"], layer, s.label_, s.start_char, s.end_char) for s in group}
    return out


def source_spans(settings) -> set[tuple[str, str, str, str, int, int]]:
    corpus = read_corpus(settings)
    return {(s.annotator, s.doc_id, s.layer, s.label or "", s.begin, s.end) for s in corpus.spans if s.valid}


@pytest.mark.parametrize("shard", [spacy_docbin.SHARD, 2])
def test_spacy_reads_every_span_where_the_source_has_it(shard: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spacy_docbin, "SHARD", shard)
    settings = load_toml(EXAMPLE)
    _, _, manifest = convert_format(settings, "spacy", tmp_path / "out")
    files = sorted(p.name for p in (tmp_path / "out" / "annotations").glob("*.spacy"))
    docs = sum(f["rows"] for f in manifest["outputs"] if f["path"].endswith(".spacy"))
    assert files == (["docs.spacy"] if shard > docs else [f"docs-{k:05d}.spacy" for k in range(1, -(-docs // shard) + 1)])
    want = source_spans(settings)
    assert len(want) > 10 and spacy_spans(tmp_path / "out" / "annotations") == want
    assert source_spans(load_toml(tmp_path / "out" / "study.toml")) == want  # and unitize reads the folder back
