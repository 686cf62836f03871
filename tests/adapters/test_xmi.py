"""UIMA CAS XMI: read as INCEpTION exports it (annotation/<doc>/<user>.xmi, TypeSystem.xml above, UTF-16 offsets made
code points by dkpro-cassis, relation layers reported), and written so that cassis itself loads every span on the
source's characters."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import XMI
from tests.conftest import ROOT
from unitize import load_toml, read_corpus
from unitize.adapters import get_adapter
from unitize.cli import main
from unitize.model import Corpus
from unitize.run.conversion import convert_format

cassis = pytest.importorskip("cassis", reason="dkpro-cassis is not installed (the xmi extra; make test installs it)")
EXAMPLE = ROOT / "unitize" / "examples" / "inception-mini" / "study.toml"


@pytest.fixture
def export(tmp_path: Path) -> Path:
    for rel, text in XMI.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path / "export"


def read(path: Path, **options) -> Corpus:
    return get_adapter("xmi").read(annotations=path, base=path.parent, **options)


def spans(corpus: Corpus) -> set[tuple[str, str, str, str | None, int, int]]:
    return {(s.annotator, s.doc_id, s.layer, s.label, s.begin, s.end) for s in corpus.spans}


def test_an_inception_export_in_xmi(export: Path) -> None:
    corpus = read(export)
    doc = corpus.documents["d1.txt"]
    assert doc.text == "\U0001F600 Ana met Bob"
    assert [t.tolist() for t in doc.tokens] == [[0, 2, 6, 10], [1, 5, 9, 13]]  # UTF-16 units in the file, code points here
    assert spans(corpus) == {("alice", "d1.txt", "Claim", "PER", 2, 5), ("alice", "d1.txt", "Claim", "PER", 10, 13),
                             ("bob", "d1.txt", "Claim", "PER", 2, 9)}  # curation/ skipped
    assert [(f.code, Path(f.file or "").name) for f in corpus.findings] == [("unknown-element", "alice.xmi")]
    assert "Support annotations point at other annotations" in corpus.findings[0].message
    assert sorted((s.annotator, s.records) for s in corpus.submissions) == [("alice", 2), ("bob", 1)]


def test_its_zip_types_and_feature_options(export: Path) -> None:
    archive = Path(shutil.make_archive(str(export.parent / "export"), "zip", export))
    assert spans(read(archive)) == spans(read(export))
    assert spans(read(export, types=["Token"])) == set()  # a segmentation type is never a span layer
    assert {s.label for s in read(export, feature="nothing").spans} == {"PER"}  # no such feature: value


def test_a_damaged_file_or_an_undeclared_type_is_reported(export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (export / "annotation" / "d1.txt" / "bob.xmi").write_text("<xmi:XMI", encoding="utf-8")
    (export / "TypeSystem.xml").unlink()  # Claim is then a type DKPro Core's type system does not declare
    corpus = read(export)
    assert corpus.spans == []
    assert sorted((f.code, Path(f.file or "").name) for f in corpus.findings) == [("file-unreadable", "alice.xmi"), ("file-unreadable", "bob.xmi")]
    assert all(len(f.message) < 400 for f in corpus.findings)
    bad = export.parent / "bad.xml"
    bad.write_text("not xml", encoding="utf-8")
    assert main(["convert", "--format", "xmi", "--annotations", str(export), "--typesystem", str(bad), "--out", str(export.parent / "o")]) == 2
    assert "is not a UIMA type system" in capsys.readouterr().err


def cassis_spans(folder: Path) -> set[tuple[str, str, str, str | None, int, int]]:
    """(annotator, document, layer, label, begin, end) of every span cassis loads from a written export, each span's
    covered text checked against the sofa at the code points cassis gives."""
    system = cassis.load_typesystem((folder / "TypeSystem.xml").read_text(encoding="utf-8"))
    out = set()
    for path in sorted((folder / "annotation").glob("*/*.xmi")):
        cas = cassis.load_cas_from_xmi(path.read_text(encoding="utf-8"), typesystem=system)
        for fs in cas.select("uima.tcas.Annotation"):
            name = fs.type.name
            if name.startswith("webanno.custom.") or name.endswith(".NamedEntity"):
                assert fs.get_covered_text() == cas.sofa_string[fs.begin:fs.end]
                out.add((path.stem, path.parent.name, name.rsplit(".", 1)[-1], fs.value, fs.begin, fs.end))
    return out


def test_cassis_loads_every_written_span_where_the_source_has_it(tmp_path: Path) -> None:
    settings = load_toml(EXAMPLE)
    source = {(s.annotator, s.doc_id, s.layer, s.label, s.begin, s.end) for s in read_corpus(settings).spans if s.valid}
    convert_format(settings, "xmi", tmp_path / "out")
    assert len(source) == 26 and cassis_spans(tmp_path / "out" / "annotations") == source
    back = read_corpus(load_toml(tmp_path / "out" / "study.toml"))
    assert spans(back) == source and back.findings == []


def test_beyond_the_bmp_the_file_counts_utf16_units(export: Path, tmp_path: Path) -> None:
    """The fixture (an emoji first) written again: the XMI holds UTF-16 offsets, read back as the same code points."""
    settings = load_toml(EXAMPLE)
    corpus = read(export)
    from unitize.run.conversion import write_corpus

    write_corpus(corpus, "xmi", tmp_path / "out", settings=settings)
    text = (tmp_path / "out" / "annotations" / "annotation" / "d1.txt" / "alice.xmi").read_text(encoding="utf-8")
    assert 'begin="3" end="6" value="PER"' in text  # "Ana": code points 2-5
    assert spans(read(tmp_path / "out" / "annotations")) == spans(corpus)


def test_without_the_extra_the_message_says_how_to_install_it(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "cassis", None)  # import cassis raises ImportError
    assert main(["convert", "--format", "xmi", "--annotations", str(export), "--out", str(tmp_path / "o")]) == 2
    assert "pip install 'unitize[xmi]'" in capsys.readouterr().err
    assert main(["convert-format", str(EXAMPLE), "--to", "xmi", "--out", str(tmp_path / "x")]) == 2
    assert "pip install 'unitize[xmi]'" in capsys.readouterr().err
