"""The CoNLL BIO writer read by seqeval (the library most NER evaluations decode IOB2 tags with): every entity
seqeval finds in a written file is a source span of that annotator and document, on the same characters (the
tokens joined, whitespace aside) and with its label; every source span is such an entity unless the report says
why BIO cannot hold it."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import fixtures
from tests.conftest import CORPORA, ROOT, needs_shared
from tests.writers.roundtrip import materialize
from unitize import load_toml, read_corpus
from unitize.run.conversion import convert_format

sequence_labeling = pytest.importorskip("seqeval.metrics.sequence_labeling", reason="seqeval is not installed (make test installs it)")


def seqevals_view(folder: Path) -> Counter:
    """(annotator, document, label, the entity's tokens joined) of every entity seqeval decodes, sentence by sentence."""
    out: Counter = Counter()
    for path in sorted(folder.rglob("*.conll")):
        doc, tokens, tags = None, [], []

        def flush() -> None:
            for label, first, last in sequence_labeling.get_entities(tags):
                out[(path.stem, doc, label, "".join(tokens[first:last + 1]))] += 1

        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# newdoc id = "):
                doc = line.removeprefix("# newdoc id = ")
            elif not line.strip():
                flush()
                tokens, tags = [], []
            elif not line.startswith(("-DOCSTART-", "#")):
                token, tag = line.rsplit(" ", 1)
                tokens.append(token)
                tags.append(tag)
        flush()
    return out


def sources_view(settings, report: Path) -> tuple[Counter, Counter]:
    """The same of the source spans, but those the report says were not written (BIO cannot hold them); apart, the
    spans reported word-snapped (written as the whole words they cut into: seqeval's entity holds their text)."""
    found = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    dropped = {(r["annotator"], r["doc"], r["record"]) for r in found if r.get("action") == "not written"}
    snapped = {(r["annotator"], r["doc"], r["record"]) for r in found if r["code"] == "word-snapped"}
    corpus = read_corpus(settings)
    exact: Counter = Counter()
    cut: Counter = Counter()
    for s in corpus.spans:
        key = (s.annotator, s.doc_id, s.record)
        if key not in dropped:
            text = corpus.documents[s.doc_id].text or ""
            (cut if key in snapped else exact)[(s.annotator, s.doc_id, s.label, "".join(text[s.begin:s.end].split()))] += 1
    return exact, cut


def check(settings, out: Path) -> int:
    convert_format(settings, "conll-bio", out)
    exact, cut = sources_view(settings, out / "report.jsonl")
    got = seqevals_view(out / "annotations")
    rest = got - exact
    assert not exact - got
    for (who, doc, label, text), n in cut.items():  # each in an entity of its words, the same label
        for _ in range(n):
            match = next(k for k in rest if k[:3] == (who, doc, label) and text in k[3])
            rest[match] -= 1
            rest = +rest
    assert not rest
    return sum(exact.values()) + sum(cut.values())


def test_seqeval_decodes_the_bundled_brat_example(tmp_path: Path) -> None:
    """brat-mini: 37 entities; chen's overlapping Cork (T4) is reported, not written."""
    assert check(load_toml(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"), tmp_path / "out") == 37


def test_seqeval_decodes_the_doccano_fixture(tmp_path: Path) -> None:
    """doccano's fixture: a character beyond the BMP before a span."""
    assert check(materialize(fixtures()["doccano"][0], tmp_path / "in"), tmp_path / "out") >= 2


@needs_shared
def test_seqeval_decodes_the_shared_bratiaa_project(tmp_path: Path) -> None:
    project = CORPORA / "bratiaa-example"
    if not project.is_dir():
        pytest.skip(f"{project} is not in ../shared/corpora")
    settings = materialize(fixtures()["brat"][0], tmp_path / "unused")  # a brat study's settings, pointed at the project
    settings = replace(settings, input={**settings.input, "annotations": project})
    assert check(settings, tmp_path / "out") > 1000
