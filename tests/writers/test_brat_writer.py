"""The brat writer read by brat's own annotation code (``bratsubset.annotation``, the subset of brat that bratiaa ships):
every text-bound annotation of every written .ann covers, in the document text brat reads, the characters the source
span covers — also after CRLF line breaks and characters beyond the BMP."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import fixtures
from tests.conftest import CORPORA, ROOT, needs_shared
from tests.writers.roundtrip import materialize, valid
from unitize import load_toml, read_corpus
from unitize.run.conversion import convert_format

brat = pytest.importorskip("bratsubset.annotation", reason="bratiaa is not installed (make test installs it)")


def brats_view(folder: Path) -> Counter:
    """(annotator, document, type, the texts of its fragments) of every text-bound annotation brat reads, each
    fragment's stored text checked against brat's document text at its offsets."""
    out: Counter = Counter()
    for ann in sorted(folder.rglob("*.ann")):
        doc = brat.TextAnnotations(str(ann)[: -len(".ann")], read_only=True)
        text = doc.get_document_text()
        for t in doc.get_textbounds():
            pieces = tuple(text[b:e] for b, e in t.spans)
            assert " ".join(pieces) == t.text, (ann, t.id)
            who = ann.relative_to(folder).parts[0]
            out[(who, ann.relative_to(folder / who).with_suffix("").as_posix(), t.type, pieces)] += 1
    return out


def sources_view(settings) -> Counter:
    corpus = valid(read_corpus(settings))  # a span its text refutes is reported, not written
    frags: dict[tuple, list] = {}
    for s in corpus.spans:
        if s.valid:
            frags.setdefault((s.annotator, s.doc_id, s.record, s.layer), []).append(s)
    out: Counter = Counter()
    for (who, doc, _, _), spans in frags.items():
        text = corpus.documents[doc].text or ""
        pieces = tuple(text[s.begin:s.end].replace("\r\n", "\n") for s in sorted(spans, key=lambda s: s.fragment))
        out[(who, doc, spans[0].label, pieces)] += 1
    return out


@pytest.mark.parametrize("source", ["brat", "doccano"])
def test_brat_reads_every_written_span_on_the_sources_characters(source: str, tmp_path: Path) -> None:
    """The fixtures: brat's (CRLF, a discontinuous span) and doccano's (an emoji before a span)."""
    settings = materialize(fixtures()[source][0], tmp_path / "in")
    convert_format(settings, "brat", tmp_path / "out")
    want = sources_view(settings)
    assert sum(want.values()) >= 2 and brats_view(tmp_path / "out" / "annotations") == want


def test_brat_reads_the_bundled_example_written_as_brat(tmp_path: Path) -> None:
    settings = load_toml(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml")
    convert_format(settings, "brat", tmp_path / "out")
    want = sources_view(settings)
    assert sum(want.values()) > 20 and brats_view(tmp_path / "out" / "annotations") == want


@needs_shared
def test_brat_reads_the_shared_bratiaa_project_written_again(tmp_path: Path) -> None:
    project = CORPORA / "bratiaa-example"
    if not project.is_dir():
        pytest.skip(f"{project} is not in ../shared/corpora")
    settings = materialize(fixtures()["brat"][0], tmp_path / "unused")  # a brat study's settings, pointed at the project
    from dataclasses import replace

    settings = replace(settings, input={**settings.input, "annotations": project})
    convert_format(settings, "brat", tmp_path / "out")
    want = sources_view(settings)
    assert sum(want.values()) > 1000 and brats_view(tmp_path / "out" / "annotations") == want
