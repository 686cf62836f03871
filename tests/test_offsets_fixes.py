"""Issue 11 ("Nothing lost, nothing silent"), the adapter items: texts as the tools count them, clean group names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.conftest import CORPORA, needs_shared
from unitize.adapters import get_adapter
from unitize.cli import main

TSV_HEAD = "#FORMAT=WebAnno TSV 3.3\n#T_SP=webanno.custom.Span|value\n\n\n"


# --- 6. brat keeps a text's BOM as character 0 ----------------------------------------------------


def test_brat_text_with_a_bom_keeps_it_as_character_0(tmp_path):
    d = tmp_path / "proj" / "A"
    d.mkdir(parents=True)
    (d / "d1.txt").write_bytes(b"\xef\xbb\xbfAna met Bob")
    (d / "d1.ann").write_bytes(b"\xef\xbb\xbfT1\tPER 1 4\tAna\nT2\tPER 9 12\tBob\n")  # the .ann's own BOM is not a character
    corpus = get_adapter("brat").read(annotations=tmp_path / "proj", base=tmp_path)
    doc = corpus.documents["d1"]
    assert (doc.text, doc.bom) == ("\ufeffAna met Bob", True)
    assert [(s.record, s.begin, s.end, doc.text[s.begin : s.end]) for s in corpus.spans] == [("T1", 1, 4, "Ana"), ("T2", 9, 12, "Bob")]
    assert corpus.findings == []


@needs_shared
def test_bratiaa_example_reads_unchanged():
    """The real project has no BOM: keeping one changes nothing there."""
    project = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    corpus = get_adapter("brat").read(annotations=project, base=project)
    assert not any(d.bom for d in corpus.documents.values())
    assert not [f for f in corpus.findings if f.code == "text-mismatch"]
