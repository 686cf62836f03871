"""PDTB-family readers (pdtb3, pdtb2, conll16), grouping, bad input, and format conversion."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CORPORA, EXAMPLE, needs_shared
from unitize.adapters import conll16, datt, pdtb2, pdtb3
from unitize.cli import main
from unitize.config import from_mapping, load_toml
from unitize.model.text import (
    codepoints_to_utf16,
    decode_raw,
    kept_to_normalized,
    normalized_to_kept,
    utf16_to_codepoints,
)
from unitize.run import convert, read_corpus, unitize
from unitize.run.conversion import convert_format
from unitize.units.tokenize import get_tokenizer
from unitize.validate import boundary_problem

read_conll16, read_datt, read_pdtb2, read_pdtb3 = (m.ADAPTER.read for m in (conll16, datt, pdtb2, pdtb3))

TED = CORPORA / "ted-mdb"
SAMPLES = CORPORA / "format-samples"
CONLL = SAMPLES / "conll2016-relations-json"
LANGS = {
    "English": "en",
    "German": "de",
    "Lithuanian": "lt",
    "Polish": "pl",
    "Portuguese": "pt",
    "Russian": "ru",
    "Turkish": "tr",
}


def pipe(type_: str, **fields: str) -> str:
    """A 34-field PDTB-3 line; ``fields`` maps an index (as f<i>) to its value."""
    out = [""] * 34
    out[0] = type_
    for key, value in fields.items():
        out[int(key[1:])] = value
    return "|".join(out)


def write(path: Path, text: str, *, newline: str = "\n", encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode(encoding))
    return path


def spans_key(corpus, *, with_group: bool = True) -> Counter:
    return Counter(
        (s.annotator, s.doc_id, s.group if with_group else "", s.layer, s.fragment, s.begin, s.end, s.label)
        for s in corpus.spans
    )


# --- offset conventions --------------------------------------------------------------


@given(st.text(alphabet=st.sampled_from("ab \r\n\ufeff😀"), max_size=40))
def test_newline_maps_invert_and_keep_slices(kept):
    normalized = kept.replace("\r\n", "\n").replace("\r", "\n")
    points = np.arange(len(normalized) + 1)
    assert kept_to_normalized(kept, normalized_to_kept(kept, points)).tolist() == points.tolist()
    for b in range(len(normalized) + 1):
        for e in range(b, len(normalized) + 1):
            kb, ke = normalized_to_kept(kept, np.array([b, e])).tolist()
            assert kept[kb:ke].replace("\r\n", "\n").replace("\r", "\n") == normalized[b:e]


@given(st.text(alphabet=st.sampled_from("aé😀𝄞\n"), max_size=30))
def test_utf16_maps_invert(text):
    points = np.arange(len(text) + 1)
    units = codepoints_to_utf16(text, points)
    assert units[-1] == len(text.encode("utf-16-le")) // 2
    assert utf16_to_codepoints(text, units).tolist() == points.tolist()


def test_boundary_problem():
    text = "Ancak, bu iş  zor."
    assert boundary_problem(text, 0, 6) is None
    assert boundary_problem(text, 1, 6) == "starts inside a word"
    assert boundary_problem(text, 0, 4) == "ends inside a word"
    assert boundary_problem(text, 6, 9) == "starts on whitespace"
    assert boundary_problem(text, 10, 13) == "ends on whitespace"


# --- PDTB-3 on TED-MDB --------------------------------------------------------------

#: relation lines, spans, and spans with an odd boundary under the tool's convention
#: (line breaks = 1, BOM kept), with CRLF kept as 2, and with the BOM stripped
TED_FACTS = {
    "English": (1756, 0, 0, 540),
    "German": (1444, 0, 0, 0),
    "Lithuanian": (1910, 5, 5, 1901),
    "Polish": (1387, 2, 2, 452),
    "Portuguese": (1595, 1, 1, 1),
    "Russian": (1419, 0, 0, 0),
    "Turkish": (2145, 0, 1880, 0),
}


def _odd(texts: dict[str, str], corpus) -> int:
    return sum(bool(boundary_problem(texts[s.doc_id], s.begin, s.end)) for s in corpus.spans)


@needs_shared
@pytest.mark.parametrize("language", sorted(LANGS))
def test_ted_mdb_spans_land_in_words_only_under_the_tool_convention(language):
    root = TED / language
    corpus = read_pdtb3(annotations=root / "ann" / "01", texts=root / "raw" / "01", base=root)
    n_spans, odd_tool, odd_crlf2, odd_nobom = TED_FACTS[language]
    assert len(corpus.spans) == n_spans
    assert not [f for f in corpus.findings if f.severity == "error"]
    for span in corpus.spans:  # every span inside its raw text
        assert 0 <= span.begin <= span.end <= len(corpus.documents[span.doc_id].text)
    raw = {d: (root / "raw" / "01" / f"{d}.txt").read_bytes() for d in corpus.documents}

    def texts(**policy) -> dict[str, str]:
        return {d: decode_raw(b, **policy).text for d, b in raw.items()}

    assert _odd(texts(newlines="normalize", bom="keep"), corpus) == odd_tool
    assert _odd(texts(newlines="keep", bom="keep"), corpus) == odd_crlf2
    assert _odd(texts(newlines="normalize", bom="strip"), corpus) == odd_nobom


@needs_shared
@pytest.mark.parametrize("language", sorted(LANGS))
def test_ted_mdb_converts_with_word_units_of_its_language(language, tmp_path):
    root = TED / language
    settings = from_mapping(
        {
            "input": {"format": "pdtb3", "annotations": "ann/01", "texts": "raw/01"},
            "unitize": {"units": ["word"], "tokenizer": f"spacy:{LANGS[language]}", "layers": ["Arg1", "Arg2", "Conn"]},
            "output": {"dir": str(tmp_path / "out")},
        },
        base=root,
    )
    unitized, manifest = convert(settings)
    report = [json.loads(line) for line in (tmp_path / "out" / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    boundary = [r for r in report if r["code"] == "span-boundary"]
    assert len(boundary) == TED_FACTS[language][1]
    assert all(r["file"].startswith("ann/01/") and r["record"] for r in boundary)
    word = manifest["accounting"]["by_unit"]["word"]
    assert word["records"] == word["in_segments"] + sum(word["excluded"].values())
    assert manifest["summary"]["groups"] == 1 and manifest["summary"]["annotators"] == ["gold"]


@needs_shared
def test_the_known_odd_spans_are_reported_by_file_and_line(tmp_path):
    root = TED / "Polish"
    settings = from_mapping(
        {"input": {"format": "pdtb3", "annotations": "ann/01", "texts": "raw/01"}, "unitize": {"units": ["char"]}},
        base=root,
    )
    unitized = unitize(read_corpus(settings), settings)
    odd = sorted((f.file, f.record, f.layer) for f in unitized.findings if f.code == "span-boundary")
    assert [(f, layer) for f, _, layer in odd] == [("ann/01/talk_1927_pl.txt", "Arg1")] * 2
    assert all(int(r) > 0 for _, r, _ in odd)


@needs_shared
def test_chinese_ted_discontinuous_connective():
    root = SAMPLES / "pdtb3-pipe-chinese-ted"
    corpus = read_pdtb3(annotations=root / "Ann16", texts=root / "Raw16", base=root, group_by="connective")
    text = corpus.documents["2009"].text
    first = [s for s in corpus.spans if s.record == "1"]
    conn = [(s.begin, s.end) for s in first if s.layer == "Conn"]
    assert conn == [(0, 1), (14, 15)]
    assert [text[b:e] for b, e in conn] == ["当", "时"]
    assert first[0].group == "当 时"
    assert {s.attrs["type"] for s in corpus.spans} >= {"Explicit", "EntRel"}


@needs_shared
@pytest.mark.parametrize(
    "inp",
    [
        {"format": "pdtb3", "annotations": str(SAMPLES / "pdtb3-pipe-chinese-ted" / "Ann16"), "texts": str(SAMPLES / "pdtb3-pipe-chinese-ted" / "Raw16")},
        {"format": "conll16", "annotations": str(CONLL / "conll16st-zh-01-08-2016-trial")},
    ],
)
def test_chinese_word_units(inp, tmp_path):
    settings = from_mapping({"input": inp, "unitize": {"units": ["word"], "tokenizer": "spacy:zh"}}, base=tmp_path)
    corpus = read_corpus(settings)
    unitized = unitize(corpus, settings)
    word = unitized.accounting["by_unit"]["word"]
    assert word["records"] == len([s for s in corpus.spans if s.layer in ("Arg1", "Arg2")])
    assert word["in_segments"] == word["records"] and not word["excluded"]
    text = next(iter(corpus.documents.values())).text
    starts, ends = get_tokenizer("spacy:zh")(text)
    assert len(starts) == sum(1 for ch in text if not ch.isspace())  # spaCy's default Chinese segmenter: characters


@needs_shared
def test_41_field_polish_lines_are_read():
    text = (SAMPLES / "pdtb3-pipe-41field-polish-excerpt.txt").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    assert all(len(line.split("|")) == 41 for line in lines)


def test_pdtb3_utf16_bom_and_crlf(tmp_path):
    # BOM = character 0; CRLF counts 1; the emoji is 2 UTF-16 units
    text = "\ufeffA 😀 b.\r\nBut c d.\n"
    write(tmp_path / "raw" / "t.txt", text)
    # code points of the tool's text '\ufeffA 😀 b.\nBut c d.\n': "But" 8..11, "c d" 12..15;
    # in UTF-16 units the emoji counts 2, so they are 9..12 and 13..16
    write(tmp_path / "ann" / "t.txt", pipe("Explicit", f1="9..12", f8="Comparison.Contrast", f14="1..8", f20="13..16") + "\r\n")
    corpus = read_pdtb3(annotations=tmp_path / "ann", texts=tmp_path / "raw", base=tmp_path, group_by="connective")
    doc = corpus.documents["t"].text
    got = {s.layer: doc[s.begin : s.end] for s in corpus.spans}
    assert got == {"Conn": "But", "Arg1": "A 😀 b.", "Arg2": "c d"}
    assert {s.group for s in corpus.spans} == {"but"}
    assert not corpus.findings


# --- grouping and selection -----------------------------------------------------------


@pytest.fixture
def small_pipe(tmp_path):
    text = "Ancak, bu zor. Çünkü yağmur yağdı. Sonra güneş çıktı. Kedi uyudu.\n"
    write(tmp_path / "raw" / "d1.txt", text)
    lines = [
        pipe("Explicit", f1="0..5", f8="Comparison.Concession.Arg2-as-denier", f14="7..14", f20="15..34"),
        pipe("Explicit", f1="15..20", f8="Contingency.Cause.Reason", f14="7..14", f20="21..34"),
        pipe("Implicit", f7="sonra", f8="Temporal.Asynchronous.Precedence", f14="15..34", f20="35..53"),
        pipe("EntRel", f14="35..53", f20="54..65"),
    ]
    for who in ("ayse", "burak"):
        write(tmp_path / who / "d1.txt", "\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.parametrize(
    "group_by,level,expected",
    [
        ("none", None, {"all": 4}),
        ("connective", None, {"ancak": 1, "çünkü": 1, "sonra": 1, "(EntRel)": 1}),
        ("type", None, {"Explicit": 2, "Implicit": 1, "EntRel": 1}),
        ("sense", 1, {"Comparison": 1, "Contingency": 1, "Temporal": 1, "(EntRel)": 1}),
        ("sense", 2, {"Comparison.Concession": 1, "Contingency.Cause": 1, "Temporal.Asynchronous": 1, "(EntRel)": 1}),
    ],
)
def test_group_by(small_pipe, group_by, level, expected):
    corpus = read_pdtb3(
        annotators={"ayse": small_pipe / "ayse"},
        texts=small_pipe / "raw",
        base=small_pipe,
        group_by=group_by,
        sense_level=level,
    )
    relations = {(s.group, s.record) for s in corpus.spans}
    assert Counter(g for g, _ in relations) == Counter(expected)
    assert sorted((s.group, s.records) for s in corpus.submissions) == sorted(expected.items())


def test_types_selection_and_annotators_table(small_pipe):
    corpus = read_pdtb3(
        annotators={"ayse": small_pipe / "ayse", "burak": small_pipe / "burak"},
        texts=small_pipe / "raw",
        base=small_pipe,
        types=["explicit", "EntRel"],
    )
    assert corpus.annotators == ["ayse", "burak"]
    assert corpus.skipped_by_selection == 2  # one Implicit per annotator
    assert Counter(s.attrs["type"] for s in corpus.spans if s.layer == "Arg1") == {"Explicit": 4, "EntRel": 2}


def test_a_document_one_annotator_lacks_is_annotator_missing(small_pipe):
    (small_pipe / "burak" / "d1.txt").rename(small_pipe / "burak" / "other.txt")
    shutil.copy(small_pipe / "raw" / "d1.txt", small_pipe / "raw" / "other.txt")
    settings = from_mapping(
        {
            "input": {"format": "pdtb3", "annotators": {"ayse": "ayse", "burak": "burak"}, "texts": "raw"},
            "unitize": {"units": ["char"], "tokenizer": "regex"},
        },
        base=small_pipe,
    )
    unitized = unitize(read_corpus(settings), settings)
    missing = [f for f in unitized.findings if f.code == "annotator-missing"]
    assert {(f.doc, f.annotator) for f in missing} == {("d1", "ayse"), ("other", "burak")}
    assert unitized.validation.universe == {}


def test_perturbed_second_annotator_gives_exact_unit_vectors(small_pipe):
    # text: "Ancak, bu zor. Çünkü yağmur yağdı. Sonra güneş çıktı. Kedi uyudu.\n" (66 characters)
    # burak: Arg2 of relation 3 ends inside "güneş" (41..46), Arg1 of relation 4 starts on the space at 40
    lines = (small_pipe / "burak" / "d1.txt").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("|35..53|", "|35..44|")
    lines[3] = lines[3].replace("|35..53|", "|40..53|")
    write(small_pipe / "burak" / "d1.txt", "\n".join(lines) + "\n")
    settings = from_mapping(
        {
            "input": {"format": "pdtb3", "annotators": {"ayse": "ayse", "burak": "burak"}, "texts": "raw"},
            "unitize": {"tokenizer": "regex", "layers": ["Arg1", "Arg2"]},
        },
        base=small_pipe,
    )
    unitized = unitize(read_corpus(settings), settings)
    arg2 = unitized.matrix("all", "Arg2", "char", "interval").to_pydict()
    ayse = np.zeros(66, int)
    ayse[15:34] = ayse[35:53] = ayse[54:65] = 1  # 15..34 and 21..34 merge into one segment
    burak = ayse.copy()
    burak[44:53] = 0
    assert arg2["ayse"] == ayse.tolist() and arg2["burak"] == burak.tolist()
    assert unitized.matrix("all", "Arg2", "char", "interval").column("unit").to_pylist() == list(range(66))
    arg1 = unitized.matrix("all", "Arg1", "char", "boundary").to_pydict()
    ones = lambda m: [i for i, v in enumerate(m) if v]  # noqa: E731
    assert ones(arg1["ayse"]) == [7, 13, 15, 33, 35, 52]
    assert ones(arg1["burak"]) == [7, 13, 15, 33, 40, 52]
    # word units (regex tokens): burak's Arg2 ending inside "güneş" is snapped to the whole word
    words = unitized.matrix("all", "Arg1", "word", "interval").to_pydict()
    starts, ends = get_tokenizer("regex")(small_pipe.joinpath("raw", "d1.txt").read_text(encoding="utf-8"))
    covered = lambda b, e: {i for i in range(len(starts)) if starts[i] < e and ends[i] > b}  # noqa: E731
    assert set(ones(words["ayse"])) == covered(7, 14) | covered(15, 34) | covered(35, 53)
    assert set(ones(words["burak"])) == covered(7, 14) | covered(15, 34) | covered(40, 53)
    arg2_words = unitized.matrix("all", "Arg2", "word", "interval").to_pydict()
    assert set(ones(arg2_words["burak"])) == covered(15, 34) | covered(35, 46) | covered(54, 65)
    snapped = [f for f in unitized.findings if f.code == "word-snapped"]
    assert [(f.annotator, f.layer, f.record) for f in snapped] == [("burak", "Arg2", "3")]


def test_perturbed_copy_of_ted_mdb_turkish(tmp_path):
    if not TED.is_dir():
        pytest.skip("../shared/corpora is not beside the repository")
    source = TED / "Turkish"
    shutil.copytree(source / "ann" / "01", tmp_path / "gold", ignore=shutil.ignore_patterns("talk_2*", "talk_1976*", "talk_1978*", "talk_1927*"))
    shutil.copytree(tmp_path / "gold", tmp_path / "copy")
    path = tmp_path / "copy" / "talk_1971_tr.txt"
    lines = path.read_bytes().decode("utf-8").split("\n")
    assert lines[1].startswith("Explicit|208..214|") and "|215..336|" in lines[1]
    lines[1] = lines[1].replace("|215..336|", "|215..300|")
    path.write_bytes("\n".join(lines).encode("utf-8"))
    settings = from_mapping(
        {
            "input": {"format": "pdtb3", "annotators": {"gold": "gold", "copy": "copy"}, "texts": str(source / "raw" / "01")},
            "unitize": {"units": ["char"], "layers": ["Arg2"]},
        },
        base=tmp_path,
    )
    unitized = unitize(read_corpus(settings), settings)
    table = unitized.matrix("all", "Arg2", "char", "interval").to_pydict()
    gold, copy = np.array(table["gold"]), np.array(table["copy"])
    # the raw file has CRLF: the tool's offsets are into the normalized text
    assert np.flatnonzero(gold != copy).tolist() == list(range(300, 336))
    assert gold[215:336].all() and not copy[300:336].any()


# --- PDTB-2 and CoNLL-2016 -------------------------------------------------------------


@needs_shared
def test_pdtb2_sample_line(tmp_path):
    line = (SAMPLES / "pdtb2-pipe" / "example_from_linziheng_pdtb-parser_README.pipe").read_text(encoding="latin-1")
    fields = line.rstrip("\n").split("|")
    assert len(fields) == 48
    # a stand-in raw text with the stored texts at their offsets (the WSJ text is not public)
    raw = [" "] * 360
    for span, stored in ((fields[3], fields[5]), (fields[22], fields[24]), (fields[32], fields[34])):
        b = int(span.split("..")[0])
        raw[b : b + len(stored)] = list(stored)
    write(tmp_path / "ann" / "wsj_1870.pipe", line)
    write(tmp_path / "raw" / "wsj_1870", "".join(raw), encoding="latin-1")
    corpus = read_pdtb2(annotations=tmp_path / "ann", texts=tmp_path / "raw", base=tmp_path, group_by="connective")
    got = {(s.layer, s.begin, s.end) for s in corpus.spans}
    assert got == {("Conn", 262, 265), ("Arg1", 9, 258), ("Arg2", 266, 354)}
    assert {s.group for s in corpus.spans} == {"but"} and {s.label for s in corpus.spans} == {"Comparison.Contrast"}
    settings = from_mapping({"input": {"format": "pdtb2", "annotations": "ann", "texts": "raw"}, "unitize": {"units": ["char"]}}, base=tmp_path)
    findings = unitize(read_corpus(settings), settings).findings
    assert not [f for f in findings if f.code in ("text-mismatch", "offset-invalid")]
    # without the raw text: every relation is reported
    shutil.rmtree(tmp_path / "raw")
    (tmp_path / "raw").mkdir()
    findings = unitize(read_corpus(settings), settings).findings
    assert [f.code for f in findings if f.severity == "error"] == ["raw-text-missing"]


@needs_shared
@pytest.mark.parametrize(
    "trial,doc,relations,implicit",
    [("conll16st-en-01-12-16-trial", "wsj_1000", 29, 14), ("conll16st-zh-01-08-2016-trial", "chtb_0001", 33, 24)],
)
def test_conll16_trial_sets(trial, doc, relations, implicit):
    root = CONLL / trial
    lines = [json.loads(line) for line in (root / "relations.json").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == relations
    corpus = read_conll16(annotations=root, base=root, group_by="type")
    assert len({s.record for s in corpus.spans}) == relations
    expected = sum(len(r[k]["CharacterSpanList"]) for r in lines for k in ("Arg1", "Arg2", "Connective"))
    assert len(corpus.spans) == expected
    text = corpus.documents[doc].text
    for span in corpus.spans:  # raw slices equal the stored RawText (whitespace aside)
        if span.stored_text is not None:
            assert "".join(text[span.begin : span.end].split()) == "".join(span.stored_text.split())
    no_conn = {s.record for s in corpus.spans} - {s.record for s in corpus.spans if s.layer == "Conn"}
    assert len([r for r in lines if not r["Connective"]["CharacterSpanList"]]) == len(no_conn)
    assert Counter(s.group for s in corpus.spans if s.fragment == 0 and s.layer == "Arg2")["Implicit"] == implicit
    assert sum(r["Type"] == "Implicit" for r in lines) == implicit
    assert not [f for f in corpus.findings if f.severity == "error"]


def _parses_json(root: Path, doc: str) -> dict:
    """parses.json rebuilt from conll_format words aligned to the raw text (PTB escapes undone)."""
    escapes = {"-LRB-": "(", "-RRB-": ")", "``": '"', "''": '"', "-LCB-": "{", "-RCB-": "}"}
    raw = (root / "raw" / doc).read_text(encoding="utf-8")
    rows = [line.split("\t") for line in (root / "conll_format" / f"{doc}.conll").read_text(encoding="utf-8").splitlines() if line.strip()]
    sentences: dict[int, list] = {}
    pos = 0
    for row in rows:
        word = escapes.get(row[3], row[3])
        at = raw.index(word, pos)
        pos = at + len(word)
        sentences.setdefault(int(row[1]), []).append([row[3], {"CharacterOffsetBegin": at, "CharacterOffsetEnd": pos}])
    return {doc: {"sentences": [{"words": sentences[k]} for k in sorted(sentences)]}}


@needs_shared
def test_conll16_system_output_through_parses(tmp_path):
    trial = CONLL / "conll16st-en-01-12-16-trial"
    shutil.copytree(trial / "raw", tmp_path / "raw")
    shutil.copy(CONLL / "output.json_system-output-example", tmp_path / "output.json")
    outputs = [json.loads(line) for line in (tmp_path / "output.json").read_text(encoding="utf-8").splitlines() if line.strip()]
    with_tokens = sum(1 for r in outputs for k in ("Arg1", "Arg2", "Connective") if r[k]["TokenList"])
    # without parses.json: every token-only span is reported, the rest still read
    corpus = read_conll16(annotations=tmp_path / "output.json", base=tmp_path)
    missing = [f for f in corpus.findings if f.code == "token-offsets-missing"]
    assert len(missing) == with_tokens and all(f.file == "output.json" and f.record for f in missing)
    # with it: offsets equal the gold token offsets of the same token indices
    (tmp_path / "parses.json").write_text(json.dumps(_parses_json(trial, "wsj_1000")), encoding="utf-8")
    corpus = read_conll16(annotations=tmp_path / "output.json", base=tmp_path)
    assert not [f for f in corpus.findings if f.code == "token-offsets-missing"]
    gold = {}
    for line in (trial / "relations.json").read_text(encoding="utf-8").splitlines():
        for key in ("Arg1", "Arg2", "Connective"):
            for t in json.loads(line)[key]["TokenList"]:
                gold[t[2]] = (t[0], t[1])
    first = outputs[0]["Arg1"]["TokenList"]
    span = [s for s in corpus.spans if s.line == 1 and s.layer == "Arg1"]
    assert [(s.begin, s.end) for s in span] == [(gold[first[0]][0], gold[first[-1]][1])]


# --- bad input ------------------------------------------------------------------------------


def test_bad_pipe_lines_are_reported_and_the_rest_read(small_pipe, capsys):
    good = (small_pipe / "ayse" / "d1.txt").read_text(encoding="utf-8").splitlines()
    bad = [
        good[0],
        "Explicit|1..2|too|few",
        pipe("Explicit", f1="12..", f14="0..5", f20="7..14"),
        pipe("Explicit", f1="a..b", f14="0..5", f20="7..14"),
        pipe("Explicit", f1="9..3", f14="0..5", f20="7..14"),
        pipe("Explicit", f1="0..5", f14="0..5", f20="60..999"),
        pipe("Implicit", f14="0..5"),
    ]
    write(small_pipe / "ayse" / "d1.txt", "\n".join(bad) + "\n")
    write(small_pipe / "ayse" / "d2.txt", good[0] + "\n")  # no raw text for d2
    settings = from_mapping(
        {
            "input": {"format": "pdtb3", "annotators": {"ayse": "ayse"}, "texts": "raw"},
            "unitize": {"units": ["char"], "tokenizer": "regex"},
        },
        base=small_pipe,
    )
    unitized = unitize(read_corpus(settings), settings)
    rows = sorted((f.code, f.file, f.record) for f in unitized.findings if f.severity in ("error", "warning"))
    assert rows == sorted([
        ("record-malformed", "ayse/d1.txt", "2"),
        ("offset-invalid", "ayse/d1.txt", "3"),
        ("offset-invalid", "ayse/d1.txt", "4"),
        ("offset-invalid", "ayse/d1.txt", "5"),
        ("offset-invalid", "ayse/d1.txt", "6"),
        ("raw-text-missing", "ayse/d2.txt", None),
        ("span-missing", "ayse/d1.txt", "7"),
    ])
    assert {s.record for s in unitized.corpus.spans} == {"1", "3", "4", "5", "6", "7"}
    toml = small_pipe / "study.toml"
    toml.write_text(
        '[input]\nformat = "pdtb3"\ntexts = "raw"\n[input.annotators]\nayse = "ayse"\n[unitize]\nunits = ["char"]\ntokenizer = "regex"\n',
        encoding="utf-8",
    )
    assert main(["convert", str(toml), "--out", str(small_pipe / "out"), "--strict", "-q"]) == 3
    assert not (small_pipe / "out" / "manifest.json").exists()
    assert main(["convert", str(toml), "--out", str(small_pipe / "out"), "-q"]) == 0


def test_invalid_json_lines_are_reported(tmp_path):
    write(tmp_path / "raw" / "d", "Kim left. Then Lee came.")
    good = {"DocID": "d", "ID": 7, "Type": "Explicit", "Sense": ["Temporal"], "Arg1": {"CharacterSpanList": [[0, 9]]},
            "Arg2": {"CharacterSpanList": [[15, 24]]}, "Connective": {"CharacterSpanList": [[10, 14]], "RawText": "Then"}}
    lines = [json.dumps(good), "{not json", json.dumps({"ID": 8}), json.dumps({**good, "ID": 9, "Arg1": {"CharacterSpanList": [[0, "x"]]}})]
    write(tmp_path / "relations.json", "\n".join(lines) + "\n")
    corpus = read_conll16(annotations=tmp_path / "relations.json", base=tmp_path, group_by="connective")
    assert sorted((f.code, f.record) for f in corpus.findings) == [
        ("offset-invalid", "9"),
        ("record-malformed", "2"),
        ("record-malformed", "3"),
    ]
    assert {(s.record, s.layer, s.begin, s.end) for s in corpus.spans if s.record == "7"} == {
        ("7", "Arg1", 0, 9), ("7", "Arg2", 15, 24), ("7", "Conn", 10, 14)
    }
    assert {s.group for s in corpus.spans} == {"then"}


def test_annotators_table_usage_errors(small_pipe):
    for inp, message in (
        ({"annotations": "ayse", "annotators": ["ayse"]}, "table of annotator name"),
        ({}, "no input"),
        ({"annotators": {"x": "nowhere"}}, "not found"),
        ({"annotations": "ayse", "group_by": "doc"}, "group_by"),
    ):
        settings = from_mapping({"input": {"format": "pdtb3", "texts": "raw", **inp}}, base=small_pipe)
        with pytest.raises(Exception, match=message):
            read_corpus(settings)


# --- conversion ------------------------------------------------------------------------------


def _settings(base: Path, inp: dict, out: Path | None = None):
    return from_mapping({"input": inp, **({"output": {"dir": str(out)}} if out else {})}, base=base)


@needs_shared
def test_ted_mdb_to_datt_and_back_gives_identical_records(tmp_path):
    root = TED / "Turkish"
    inp = {"format": "pdtb3", "annotations": "ann/01", "texts": "raw/01", "group_by": "connective"}
    corpus, findings, manifest = convert_format(_settings(root, inp), "datt", tmp_path / "datt")
    assert manifest["accounting"]["spans"] == {"read": 2145, "written": 2145, "invalid_offsets": 0, "not_written_other": 0}
    back = read_corpus(load_toml(tmp_path / "datt" / "study.toml"))
    assert not back.findings  # stored <Text> equals every raw slice
    mapped = Counter()
    for s in back.spans:
        kept = back.documents[s.doc_id].text
        b, e = kept_to_normalized(kept, np.array([s.begin, s.end])).tolist()
        mapped[(s.annotator, s.doc_id, s.group, s.layer, s.fragment, b, e, s.label)] += 1
    assert mapped == spans_key(corpus)
    # Turkish texts have CRLF: DATT offsets count it as 2, so they really moved
    assert any("\r\n" in back.documents[d].text for d in back.documents)
    assert spans_key(back) != spans_key(corpus)


@needs_shared
def test_ted_mdb_to_pipe_and_back_gives_identical_records(tmp_path):
    for language in ("English", "Turkish", "Polish"):
        root = TED / language
        inp = {"format": "pdtb3", "annotations": "ann/01", "texts": "raw/01"}
        corpus, _, _ = convert_format(_settings(root, inp), "pdtb3", tmp_path / language)
        back = read_corpus(load_toml(tmp_path / language / "study.toml"))
        assert spans_key(back) == spans_key(corpus)
        original = (root / "ann" / "01" / "talk_1971_" f"{LANGS[language]}.txt").read_bytes().decode("utf-8")
        copy = (tmp_path / language / "annotations" / "gold" / f"talk_1971_{LANGS[language]}.txt").read_text(encoding="utf-8")
        assert copy == "".join(line.rstrip("\r") + "\n" for line in original.splitlines() if line.strip())


def test_example_corpus_to_pipe_and_back(tmp_path):
    settings = load_toml(EXAMPLE / "study.toml")
    corpus, findings, manifest = convert_format(settings, "pdtb3", tmp_path / "pipe")
    back = read_corpus(load_toml(tmp_path / "pipe" / "study.toml"))
    assert back.annotators == ["ayse", "burak", "cem"]
    # every Arg1/Arg2 span of the DATT corpus, offsets mapped from CRLF = 2 to CRLF = 1
    expected = Counter()
    for s in corpus.spans:
        if s.layer in ("Arg1", "Arg2") and s.valid:
            b, e = kept_to_normalized(corpus.documents[s.doc_id].text, np.array([s.begin, s.end])).tolist()
            expected[(s.annotator, s.doc_id, s.group, s.layer, s.fragment, b, e, s.label)] += 1
    # groups differ: DATT's come from file names ("icin"), the pipe reader's from the text ("için")
    got = Counter(k[:2] + ("",) + k[3:] for k in spans_key(back).elements() if k[3] in ("Arg1", "Arg2"))
    assert got == Counter({k[:2] + ("",) + k[3:]: n for k, n in expected.items()})
    placeholders = [f for f in findings if f.code == "not-convertible"]
    # one finding per record: Mod and Shared have no pipe field, an Implicit relation's position placeholder is no span
    assert placeholders and all((f.layer in ("Mod", "Shared") and f"the layer {f.layer} has no place in the format" in f.message)
                                or "it only marks the position of an Implicit relation" in f.message for f in placeholders)


def test_convert_format_cli(small_pipe, capsys):
    out = small_pipe / "as-datt"
    code = main(
        [
            "convert-format",
            "--format", "pdtb3",
            "--annotators", f"ayse={small_pipe / 'ayse'},burak={small_pipe / 'burak'}",
            "--texts", str(small_pipe / "raw"),
            "--group-by", "connective",
            "--to", "datt",
            "--out", str(out),
        ]
    )
    assert code == 0
    names = sorted(p.relative_to(out / "annotations").as_posix() for p in (out / "annotations").rglob("*.xml"))
    assert names == [f"d1_{a}_{g}.xml" for a in ("ayse", "burak") for g in sorted(["(EntRel)", "ancak", "sonra", "çünkü"])]
    assert main(["info", str(out)]) == 0
    assert "pdtb3 -> datt" in capsys.readouterr().out
    back = read_datt(annotations=out / "annotations", texts=out / "texts", base=out)
    assert len({(s.annotator, s.group, s.record) for s in back.spans}) == 8
    one = ["convert-format", "--format", "pdtb3", "--annotations", str(small_pipe / "ayse"), "--texts", str(small_pipe / "raw")]
    # every format has a writer now: brat takes what it can hold and reports the rest; an unknown target is a usage error
    assert main([*one, "--to", "brat", "--out", str(small_pipe / "x")]) == 0
    assert "not-convertible: records the target cannot hold" in capsys.readouterr().out
    assert main([*one, "--to", "no-such-format", "--out", str(small_pipe / "y")]) == 2
    assert "cannot write format 'no-such-format'" in capsys.readouterr().err and not (small_pipe / "y").exists()


@pytest.mark.parametrize(
    "group_by,level,groups",
    [
        ("connective", None, {"ama", "ve"}),
        ("type", None, {"EXPLICIT", "IMPLICIT"}),
        ("sense", 1, {"EXPANSION", "COMPARISON", "(IMPLICIT)"}),
        ("none", None, {"all"}),
    ],
)
def test_datt_group_by(datt, group_by, level, groups):
    text = datt.text("d1", "aa bb cc dd ee ff gg")
    explicit = {"attrs": {"type": "EXPLICIT", "sense": "EXPANSION: Conjunction"}, "Arg1": [(0, 5)], "Arg2": [(6, 8)]}
    concession = {"attrs": {"type": "EXPLICIT", "sense": "COMPARISON: Concession"}, "Arg1": [(9, 11)], "Arg2": [(12, 14)]}
    implicit = {"attrs": {"type": "IMPLICIT", "sense": ""}, "Arg1": [(15, 17)], "Arg2": [(18, 20)]}
    datt.file("d1", "a", "ve", [explicit, implicit])
    datt.file("d1", "a", "ama", [concession])
    datt.file("d1", "b", "ve", [explicit, implicit])  # b has no file for "ama"
    corpus = read_datt(annotations=datt.annotations, texts=datt.texts, base=datt.root, group_by=group_by, sense_level=level)
    assert {s.group for s in corpus.spans} == groups
    subs = {(s.annotator, s.group): s.records for s in corpus.submissions}
    if group_by == "connective":  # b is missing for "ama"
        assert subs == {("a", "ama"): 1, ("a", "ve"): 2, ("b", "ve"): 2}
    elif group_by == "none":  # b has files for d1: present, with one relation fewer
        assert subs == {("a", "all"): 3, ("b", "all"): 2}
    elif group_by == "type":
        assert subs == {("a", "EXPLICIT"): 2, ("a", "IMPLICIT"): 1, ("b", "EXPLICIT"): 1, ("b", "IMPLICIT"): 1}
    assert {text[s.begin : s.end] for s in corpus.spans if s.layer == "Arg1"} == {"aa bb", "dd", "ff"}


def test_a_rerun_removes_outputs_the_new_run_does_not_make(small_pipe):
    out = small_pipe / "out"
    base = ["convert", "--format", "pdtb3", "--annotations", str(small_pipe / "ayse"), "--texts", str(small_pipe / "raw"), "--out", str(out), "-q", "--tokenizer", "regex"]
    assert main(base + ["--units", "char,word"]) == 0
    assert (out / "segments" / "word.parquet").exists() and (out / "units" / "setting=word-interval").is_dir()
    assert main(base + ["--units", "char"]) == 0
    assert sorted(p.name for p in (out / "segments").iterdir()) == ["char.parquet"]
    assert sorted(p.name.removeprefix("setting=") for p in (out / "units").iterdir()) == ["char-boundary", "char-interval"]
    listed = {o["path"] for o in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["outputs"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert on_disk == listed


def test_an_item_run_after_a_span_run_leaves_no_span_outputs(tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q", "--units", "char"]) == 0
    assert (out / "segments").is_dir() and (out / "documents.parquet").exists()
    assert main(["agree", str(out), "--metric", "alpha", "--quiet"]) == 0 and (out / "agreement").is_dir()
    labels = EXAMPLE.parent / "labels-mini" / "study.toml"
    assert main(["convert", str(labels), "--out", str(out), "-q"]) == 0
    assert not (out / "segments").exists() and not (out / "documents.parquet").exists()
    assert not (out / "agreement").exists()  # results of the previous data are gone
    listed = {o["path"] for o in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["outputs"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert on_disk == listed
