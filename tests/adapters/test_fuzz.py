"""Seeded fuzzing of ``unitize convert`` over every registered format (issue 16).

Each case takes a seed input of one format — a small fixture written here, or a
shipped sample (``../shared/corpora/format-samples``, ``unitize/examples``) —
damages one of its files with one mutation (byte flips, truncation, huge and
non-ASCII numbers, invalid UTF-8, deep JSON, lone surrogates, long fields,
damaged ZIP archives, file names that are not UTF-8) and runs ``unitize
convert`` on it. Whatever the damage, the run ends in exit 0 (findings in the
report), 2 (a usage error with a message) or 3 (``--strict``), never 1 (an
internal error), and nothing prints a traceback.

``UNITIZE_FUZZ_CASES`` sets the cases per format (default 20); the seed is fixed,
so every run tries the same cases (``UNITIZE_FUZZ_SEED`` changes it).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, ROOT, datt_xml
from unitize.adapters import available
from unitize.cli import build_parser, main
from unitize.cli.study_flags import settings_from_args
from unitize.run.conversion import convert_format

CASES = int(os.environ.get("UNITIZE_FUZZ_CASES", "20"))
SEED = os.environ.get("UNITIZE_FUZZ_SEED", "4577")
SAMPLES = CORPORA / "format-samples"
EXAMPLES = ROOT / "unitize" / "examples"


@dataclass
class Seed:
    """An input to damage: files (path -> bytes), the convert arguments (``{root}`` = its directory), what to mutate."""

    name: str
    files: dict[str, bytes]
    args: list[str]
    mutable: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mutable = self.mutable or sorted(p for p in self.files if not p.endswith(".toml"))


# --- seed inputs: fixtures (always) and shipped samples (when ../shared is there) ---------------

TEXT = "Ama bu iş zor, ve o gitti.\n"


def _pipe3(**fields: str) -> bytes:
    out = [""] * 34
    out[0] = "Explicit"
    for key, value in fields.items():
        out[int(key[1:])] = value
    return "|".join(out).encode() + b"\n"


def _pipe2() -> bytes:
    f = [""] * 48
    f[0], f[3], f[5], f[22], f[24], f[32], f[34], f[11] = "Explicit", "15..17", "ve", "0..13", "Ama bu iş zor", "18..25", "o gitti", "Expansion"
    return "|".join(f).encode() + b"\n"


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _parquet(table: dict[str, list]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(table), out, compression="none", use_dictionary=False)
    return out.getvalue()


TSV = (
    "#FORMAT=WebAnno TSV 3.3\n#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value\n\n\n"
    "#Text=Ana met Bob .\n1-1\t0-3\tAna\t*\tPER\t\n1-2\t4-7\tmet\t_\t_\t\n1-3\t8-11\tBob\t*[1]\tPER[1]\t\n1-4\t12-13\t.\t_\t_\t\n\n"
    "#Text=\U0001F60A fine\n2-1\t14-16\t\U0001F60A\t_\t_\t\n2-2\t17-21\tfine\t*\tX\t\n"
)
DOCCANO = [
    {"id": 1, "text": "Ana met Bob in Paris", "label": [[0, 3, "PER"], [8, 11, "PER"], [15, 20, "LOC"]]},
    {"id": 2, "text": "\U0001F600 Cem", "entities": [{"id": 7, "label": "PER", "start_offset": 2, "end_offset": 5}], "relations": [{"from_id": 7, "to_id": 7, "type": "self"}]},
]
QUOTES = [
    {"doc": "d1", "text": "Ana met Bob in Paris, and Ana left.", "spans": [{"quote": "Ana", "label": "PER", "occurrence": 2}, {"quote": "bob", "label": "PER"},
                                                                           {"quote": "Pariss", "label": "LOC", "hint": 14}, {"start": 0, "end": 3, "label": "PER"}]},
    {"doc_id": "d2", "text": "\U0001F600 Cem \u201cquoted\u201d", "spans": [{"quote": "Cem \"quoted\"", "label": "X"}]},
    {"doc": "d1", "annotator": "gpt-run2", "spans": [{"quote": "Ana met", "label": "PER"}, {"quote": "Paris", "label": "LOC"}]},
    {"id": "d2", "annotator": "gpt-run2", "spans": [{"quote": "\U0001F600", "label": "X"}]},
]
STUDY_QUOTES = '[input]\nformat = "quotes"\nannotations = "q"\ntexts = "texts"\nmatching = "fuzzy"\nthreshold = 80.0\n'
#: the public LLM-span benchmark's shape: outputs named phi3.5 (phi3-5 in the annotations), a crowdsourcing campaign of
#: two annotator groups (w1's "Lyon" counted in UTF-16 units, after an emoji) and an LLM campaign (a span whose text is
#: not at its start, a type outside the categories, a text found nowhere)
CATEGORIES = [{"name": "Incorrect", "color": "#ffbcbc"}, {"name": "Not checkable", "color": "#e9d2ff"},
              {"name": "Misleading", "color": "#fff79f"}, {"name": "Other", "color": "#bbbbbb"}]
OUTPUTS = ["Ana met Bob in Paris in 2011.", "Rain \U0001F327 fell on Lyon today."]


def _factgenie_record(idx: int, spans: list[dict], who: str, group: int) -> str:
    return json.dumps({"dataset": "d2t-eval", "split": "iaa", "setup_id": "phi3-5", "example_idx": idx, "annotations": spans,
                       "metadata": {"annotator_id": who, "annotator_group": group}}, ensure_ascii=False) + "\n"


FACTGENIE = {
    "outputs/d2t-eval/iaa-phi3.5.jsonl": "".join(json.dumps({"dataset": "d2t-eval", "split": "iaa", "setup_id": "phi3.5", "example_idx": k,
                                                             "output": o}, ensure_ascii=False) + "\n" for k, o in enumerate(OUTPUTS)),
    "campaigns/human-iaa/metadata.json": json.dumps({"id": "human-iaa", "mode": "crowdsourcing", "created": "2025-01-01 10:00:00",
                                                     "config": {"annotation_span_categories": CATEGORIES, "annotation_granularity": "words"}}),
    "campaigns/human-iaa/files/0-0-w1-1700000000.jsonl": _factgenie_record(0, [{"type": 0, "text": "Paris", "start": 15}, {"type": 1, "text": "2011.", "start": 24}], "w1", 0)
    + _factgenie_record(1, [{"type": 0, "text": "Lyon", "start": 16}], "w1", 0),
    "campaigns/human-iaa/files/1-1-w2-1700000001.jsonl": _factgenie_record(0, [{"type": 0, "text": "Bob", "start": 8}], "w2", 1)
    + _factgenie_record(1, [{"type": 2, "text": "today.", "start": 20}], "w2", 1),
    "campaigns/llm-gpt/metadata.json": json.dumps({"id": "llm-gpt", "mode": "llm_eval", "created": "2025-01-02 10:00:00",
                                                   "config": {"annotation_span_categories": CATEGORIES, "model": "gpt-4o"}}),
    "campaigns/llm-gpt/files/d2t-eval-iaa-phi3-5-1700000002.jsonl": _factgenie_record(
        0, [{"type": 0, "text": "Paris", "start": 15, "reason": "not in the data"}, {"type": 3, "text": "Bob", "start": 0, "reason": "?"}],
        "gpt-4o-llm-gpt", 0) + _factgenie_record(1, [{"type": 9, "text": "Rain", "start": 0}, {"type": 1, "text": "snow", "start": 3}], "gpt-4o-llm-gpt", 0),
}
#: INCEpTION's XMI export: a custom span layer (Claim) and a relation layer (Support, not spans) in the export's
#: TypeSystem.xml; offsets in UTF-16 units (the emoji counts two)
XMI_TYPES = """<?xml version="1.0" encoding="UTF-8"?>
<typeSystemDescription xmlns="http://uima.apache.org/resourceSpecifier"><types>
<typeDescription><name>webanno.custom.Claim</name><supertypeName>uima.tcas.Annotation</supertypeName><features>
<featureDescription><name>value</name><rangeTypeName>uima.cas.String</rangeTypeName></featureDescription></features></typeDescription>
<typeDescription><name>webanno.custom.Support</name><supertypeName>uima.tcas.Annotation</supertypeName><features>
<featureDescription><name>Governor</name><rangeTypeName>webanno.custom.Claim</rangeTypeName></featureDescription>
<featureDescription><name>Dependent</name><rangeTypeName>webanno.custom.Claim</rangeTypeName></featureDescription></features></typeDescription>
</types></typeSystemDescription>
"""


def _xmi(claims: list[tuple[int, int, str]], support: bool) -> str:
    """A CAS of "\U0001F600 Ana met Bob" with its tokens and ``claims`` (UTF-16 offsets)."""
    tokens = "".join(f'<type:Token xmi:id="{10 + k}" sofa="1" begin="{b}" end="{e}"/>' for k, (b, e) in enumerate([(0, 2), (3, 6), (7, 10), (11, 14)]))
    spans = "".join(f'<custom:Claim xmi:id="{20 + k}" sofa="1" begin="{b}" end="{e}" value="{v}"/>' for k, (b, e, v) in enumerate(claims))
    link = '<custom:Support xmi:id="30" sofa="1" begin="11" end="14" Governor="21" Dependent="20"/>' if support else ""
    members = " ".join([*(str(10 + k) for k in range(4)), *(str(20 + k) for k in range(len(claims))), *(["30"] if support else [])])
    return ('<?xml version="1.0" encoding="UTF-8"?><xmi:XMI xmlns:xmi="http://www.omg.org/XMI" xmlns:cas="http:///uima/cas.ecore" '
            'xmlns:custom="http:///webanno/custom.ecore" xmlns:type="http:///de/tudarmstadt/ukp/dkpro/core/api/segmentation/type.ecore" '
            f'xmi:version="2.0"><cas:NULL xmi:id="0"/>{tokens}{spans}{link}'
            '<cas:Sofa xmi:id="1" sofaNum="1" sofaID="_InitialView" mimeType="text" sofaString="\U0001F600 Ana met Bob"/>'
            f'<cas:View sofa="1" members="{members}"/></xmi:XMI>')


XMI = {"export/TypeSystem.xml": XMI_TYPES,
       "export/annotation/d1.txt/alice.xmi": _xmi([(3, 6, "PER"), (11, 14, "PER")], True),
       "export/annotation/d1.txt/bob.xmi": _xmi([(3, 10, "PER")], False),
       "export/curation/d1.txt/CURATION_USER.xmi": _xmi([(3, 6, "PER")], False)}
STUDY_SPAN_TABLE = (
    '[input]\nformat = "span-table"\nannotations = "spans.csv"\ntexts = "texts.csv"\nroster = "roster.csv"\n'
    'columns = {doc = "doc", key = "key"}\n'
)


def written(source: Seed, to: str, options: dict[str, str] | None = None) -> dict[str, bytes]:
    """The annotation files (``annotations/…``) that ``unitize convert-format --to <to>`` makes of a seed of another
    format: the input of a format no tool here writes by hand (a spaCy DocBin, a Parquet data set), made by its writer."""
    with tempfile.TemporaryDirectory(prefix="unitize-fuzz-") as tmp:
        root = Path(tmp) / "in"
        for rel, data in source.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        args = [a.replace("{root}", str(root)) for a in source.args]
        settings = settings_from_args(build_parser().parse_args(["convert", *args, "--tokenizer", "whitespace", "--out", f"{tmp}/unused"]))
        convert_format(settings, to, Path(tmp) / "out", options=options)
        return _tree(Path(tmp) / "out" / "annotations", "annotations/")


@cache
def fixtures() -> dict[str, list[Seed]]:
    """Small inputs of every built-in format, written here (they run without ../shared); those of the formats only a
    writer makes (spacy, huggingface) are other formats' fixtures written by it."""
    out = _hand_written()
    brat, doccano = out["brat"][0], out["doccano"][0]  # CRLF, a discontinuous span, two annotators; text beyond the BMP
    out["spacy"] = [
        Seed("from-brat", written(brat, "spacy"), ["--format", "spacy", "--annotations", "{root}/annotations"]),
        Seed("from-doccano", written(doccano, "spacy"), ["--format", "spacy", "--annotations", "{root}/annotations/docs.spacy"]),
    ]
    out["huggingface"] = [
        Seed("from-brat", written(brat, "huggingface"), ["--format", "huggingface", "--annotations", "{root}/annotations"]),
        Seed("from-doccano-jsonl", written(doccano, "huggingface", {"file_format": "jsonl"}),
             ["--format", "huggingface", "--annotations", "{root}/annotations/data/train.jsonl"]),
    ]
    return out


def _hand_written() -> dict[str, list[Seed]]:
    """The fixtures written byte by byte here."""
    ls_task = {
        "id": 5,
        "data": {"text": "Ana met Bob"},
        "annotations": [
            {"completed_by": 1, "result": [{"id": "r1", "type": "labels", "from_name": "label", "value": {"start": 0, "end": 3, "text": "Ana", "labels": ["PER"]}},
                                            {"id": "x", "type": "relation", "from_id": "r1", "to_id": "r1", "labels": ["self"]}]},
            {"completed_by": {"id": 2, "email": "b@x.org"}, "result": [{"id": "r2", "type": "labels", "value": {"start": 8, "end": 11, "labels": ["PER"]}}]},
        ],
    }
    rel = {"Conn": [(15, 17)], "Arg1": [(0, 13)], "Arg2": [(18, 25)]}
    jsonl = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in DOCCANO).encode()
    conll = {"DocID": "d1", "ID": 1, "Type": "Explicit", "Sense": ["Expansion"], "Connective": {"CharacterSpanList": [[15, 17]], "RawText": "ve"},
             "Arg1": {"CharacterSpanList": [[0, 13]], "TokenList": [[0, 3, 0, 0, 0]]}, "Arg2": {"CharacterSpanList": [[18, 25]]}}
    return {
        "datt": [Seed("fixture", {
            "texts/d1.txt": TEXT.encode(),
            "annotations/d1_A_ve.xml": datt_xml(TEXT, [rel]).encode(),
            "annotations/d1_B_ve.xml": datt_xml(TEXT, [{**rel, "Arg1": [(0, 3), (4, 13)]}]).encode(),
        }, ["--format", "datt", "--annotations", "{root}/annotations", "--texts", "{root}/texts"])],
        "pdtb3": [Seed("fixture", {
            "raw/d1.txt": b"\xef\xbb\xbf" + TEXT.replace("\n", "\r\n").encode(),
            "ann/d1.txt": _pipe3(f1="16..18", f8="Expansion", f14="1..14", f20="19..26") + _pipe3(f0="Implicit", f7="so", f14="1..5;6..9", f20="10..14"),
        }, ["--format", "pdtb3", "--annotations", "{root}/ann", "--texts", "{root}/raw", "--group-by", "connective"])],
        "pdtb2": [Seed("fixture", {"raw/wsj_0001": TEXT.encode("latin-1", "replace"), "ann/wsj_0001.pipe": _pipe2()},
                       ["--format", "pdtb2", "--annotations", "{root}/ann", "--texts", "{root}/raw"])],
        "conll16": [Seed("fixture", {"raw/d1": TEXT.encode(), "relations.json": (json.dumps(conll, ensure_ascii=False) + "\n").encode()},
                         ["--format", "conll16", "--annotations", "{root}/relations.json"])],
        "brat": [Seed("fixture", {
            "proj/A/d1.txt": b"Ana met Bob\r\nin Paris",
            "proj/A/d1.ann": b"T1\tPER 0 3\tAna\nT2\tLOC 16 21\tParis\nA1\tNegated T1\nR1\tmeets Arg1:T1 Arg2:T2\n#1\tAnnotatorNotes T2\tok\n",
            "proj/B/d1.txt": b"Ana met Bob\r\nin Paris",
            "proj/B/d1.ann": b"T1\tPER 0 3;8 11\tAna Bob\nT2\tLOC 13 21\tin Paris\n",
        }, ["--format", "brat", "--annotations", "{root}/proj"])],
        "webanno-tsv": [
            Seed("fixture", {"export/annotation/d1/alice.tsv": TSV.encode(), "export/annotation/d1/bob.tsv": TSV.replace("PER[1]", "ORG[1]").encode()},
                 ["--format", "webanno-tsv", "--annotations", "{root}/export"]),
            Seed("fixture-zip", {"export.zip": _zip({"annotation/d1/alice.tsv": TSV.encode(), "curation/d1/CURATION_USER.tsv": TSV.encode()})},
                 ["--format", "webanno-tsv", "--annotations", "{root}/export.zip"]),
        ],
        "conll-bio": [Seed("fixture", {
            "bio/alice.conll": b"-DOCSTART- O\n\nAna B-PER\nmet O\nBob B-PER\n\nin O\nParis B-LOC\n",
            "bio/bob.conll": b"-DOCSTART- O\n\nAna B-PER\nmet O\nBob I-PER\n\nin O\nParis B-LOC\n",
        }, ["--format", "conll-bio", "--annotations", "{root}/bio"])],
        "doccano": [
            Seed("fixture", {"dc/alice.jsonl": jsonl, "dc/bob.jsonl": jsonl.replace(b'"PER"', b'"ORG"', 1)}, ["--format", "doccano", "--annotations", "{root}/dc"]),
            Seed("fixture-zip", {"export.zip": _zip({"alice.jsonl": jsonl, "bob.jsonl": jsonl})}, ["--format", "doccano", "--annotations", "{root}/export.zip"]),
        ],
        "quotes": [
            Seed("fixture", {"q/gpt-run1.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QUOTES).encode()},
                 ["--format", "quotes", "--annotations", "{root}/q"]),
            Seed("fixture-texts", {
                "study.toml": STUDY_QUOTES.encode(),
                "texts/d1.txt": TEXT.encode(),
                "q/ana.jsonl": b'{"doc": "d1", "spans": [{"start": 0, "end": 3, "label": "A"}, {"start": 18, "end": 25, "label": "B"}]}\n',
                "q/llm.jsonl": b'{"doc": "d1", "spans": [{"quote": "ama bu", "label": "A"}, {"quote": "o  gitti", "label": "B"}, {"quote": "zor", "label": "C"}, {"quote": "bu is zorr", "label": "D"}]}\n',
            }, ["{root}/study.toml"]),
        ],
        "factgenie": [Seed("fixture", {k: v.encode() for k, v in FACTGENIE.items()},
                           ["--format", "factgenie", "--annotations", "{root}/campaigns", "--texts", "{root}/outputs"])],
        "xmi": [Seed("fixture", {k: v.encode() for k, v in XMI.items()}, ["--format", "xmi", "--annotations", "{root}/export"])],
        "label-studio": [Seed("fixture", {"ls.json": json.dumps([ls_task]).encode()}, ["--format", "label-studio", "--annotations", "{root}/ls.json"])],
        "span-table": [
            Seed("fixture", {
                "study.toml": STUDY_SPAN_TABLE.encode(),
                "texts.csv": b'doc,text\nd1,"Ana met Bob, in Paris"\nd2,Cem\n',
                "roster.csv": b"key,doc,annotator\nk1,d1,a\nk2,d1,b\nk3,d2,a\n",
                "spans.csv": b"key,label,begin,end\nk1,PER,0,3\nk1,LOC,16,21\nk2,PER,8,11\n",
            }, ["{root}/study.toml"]),
            Seed("fixture-parquet", {
                "texts.parquet": _parquet({"doc_id": ["d1", "d2"], "text": ["Ana met Bob", "Cem"]}),
                "spans.parquet": _parquet({"doc_id": ["d1", "d1", "d2"], "annotator": ["a", "b", "a"], "label": ["P", "P", "P"], "begin": [0, 8, 0], "end": [3, 11, 3]}),
            }, ["--format", "span-table", "--annotations", "{root}/spans.parquet", "--texts", "{root}/texts.parquet"]),
        ],
        "labels": [
            Seed("fixture-csv", {"l.csv": b"item,who,sent,score\n001,a,pos,1\n001,b,neg,2\n002,a,pos,3\n002,b,,3\n"},
                 ["--format", "labels", "--annotations", "{root}/l.csv", "--item", "item", "--annotator-column", "who", "--label-columns", "sent,score"]),
            Seed("fixture-jsonl", {"l.jsonl": b'{"item": 1, "who": "a", "sent": ["x", "y"]}\n{"item": 1, "who": "b", "sent": {"k": 2}}\n{"item": 2, "who": "a", "sent": 1.5}\n'},
                 ["--format", "labels", "--annotations", "{root}/l.jsonl", "--item", "item", "--annotator-column", "who", "--label-columns", "sent"]),
            Seed("fixture-parquet", {"l.parquet": _parquet({"item": ["1", "1", "2"], "who": ["a", "b", "a"], "sent": ["pos", "neg", "pos"]})},
                 ["--format", "labels", "--annotations", "{root}/l.parquet", "--item", "item", "--annotator-column", "who", "--label-columns", "sent"]),
        ],
    }


def _tree(root: Path, under: str = "", skip: Callable[[Path], bool] = lambda p: False) -> dict[str, bytes]:
    return {f"{under}{p.relative_to(root).as_posix()}": p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not skip(p)}


@cache
def samples() -> dict[str, list[Seed]]:
    """The shipped samples of every format: ../shared/corpora/format-samples and unitize/examples."""
    out: dict[str, list[Seed]] = {
        "datt": [Seed("tdb-mini", _tree(EXAMPLES / "tdb-mini", skip=lambda p: p.suffix == ".md"), ["{root}/study.toml"])],
        "labels": [Seed("labels-mini", _tree(EXAMPLES / "labels-mini", skip=lambda p: p.suffix == ".md"), ["{root}/study.toml"])],
    }
    if not SAMPLES.is_dir():
        return out
    out["datt"].append(Seed("tdb-datt-xml", {**_tree(SAMPLES / "tdb-datt-xml", "ann/", lambda p: p.suffix != ".xml")}, ["--format", "datt", "--annotations", "{root}/ann"]))
    chinese = SAMPLES / "pdtb3-pipe-chinese-ted"
    out["pdtb3"] = [
        Seed("chinese-ted", {**_tree(chinese / "Ann16", "ann/"), **_tree(chinese / "Raw16", "raw/")}, ["--format", "pdtb3", "--annotations", "{root}/ann", "--texts", "{root}/raw"]),
        Seed("polish-41", {"ann/d.txt": (SAMPLES / "pdtb3-pipe-41field-polish-excerpt.txt").read_bytes(), "raw/d.txt": b"x" * 3000},
             ["--format", "pdtb3", "--annotations", "{root}/ann", "--texts", "{root}/raw"]),
    ]
    out["pdtb2"] = [Seed("pdtb2-pipe", {**_tree(SAMPLES / "pdtb2-pipe", "ann/"), "raw/.keep": b""}, ["--format", "pdtb2", "--annotations", "{root}/ann", "--texts", "{root}/raw"])]
    conll = SAMPLES / "conll2016-relations-json"
    out["conll16"] = [
        Seed(trial.name, {"relations.json": (trial / "relations.json").read_bytes(), **_tree(trial / "raw", "raw/")}, ["--format", "conll16", "--annotations", "{root}/relations.json"])
        for trial in sorted(p for p in conll.iterdir() if p.is_dir())
    ]
    out["brat"] = [
        Seed(d.name, _tree(d, "proj/", lambda p: p.suffix not in (".ann", ".txt")), ["--format", "brat", "--annotations", "{root}/proj"])
        for d in sorted(p for p in (SAMPLES / "brat").iterdir() if p.is_dir())
    ]
    out["webanno-tsv"] = [Seed("tsv3-suite", _tree(SAMPLES / "webanno-tsv3", "tsv/", lambda p: p.suffix != ".tsv"), ["--format", "webanno-tsv", "--annotations", "{root}/tsv"])]
    out["conll-bio"] = [
        Seed(p.name, {f"bio/{p.name}": p.read_bytes()}, ["--format", "conll-bio", "--annotations", f"{{root}}/bio/{p.name}"])
        for p in sorted((SAMPLES / "conll-bio").glob("*.conll"))
    ]
    out["doccano"] = [
        Seed(p.name, {f"dc/{p.name}": p.read_bytes()}, ["--format", "doccano", "--annotations", f"{{root}}/dc/{p.name}"])
        for p in sorted((SAMPLES / "doccano").glob("*.json*"))
    ]
    out["label-studio"] = [
        Seed(p.name, {f"ls/{p.name}": p.read_bytes()}, ["--format", "label-studio", "--annotations", f"{{root}}/ls/{p.name}"])
        for p in sorted((SAMPLES / "label-studio").glob("*.json"))
    ]
    return out


# --- mutations ------------------------------------------------------------------------------------

_DIGITS = re.compile(rb"[0-9]+")
_NUMBERS = [b"9" * 5000, b"9" * 30, str(2**63).encode(), str(10**17).encode(), b"-1", b"0" * 5000 + b"1"]
_NON_ASCII = ["٣٤".encode(), "²".encode(), "１２".encode(), "߁".encode()]
_BAD_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\r", "\u200b".encode()]


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1)


def _replace_digits(rng: random.Random, data: bytes, by: list[bytes]) -> bytes:
    runs = list(_DIGITS.finditer(data))
    if not runs:
        return data + rng.choice(by)
    m = rng.choice(runs)
    return data[: m.start()] + rng.choice(by) + data[m.end() :]


def flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return b"\xff"
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def huge_number(rng: random.Random, data: bytes) -> bytes:
    return _replace_digits(rng, data, _NUMBERS)


def non_ascii_number(rng: random.Random, data: bytes) -> bytes:
    return _replace_digits(rng, data, _NON_ASCII)


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    at = _at(rng, data)
    return data[:at] + rng.choice(_BAD_BYTES) + data[at:]


def deep_json(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([150, 5000, 100_000])
    return _replace_digits(rng, data, [b"[" * depth + b"1" + b"]" * depth])


def lone_surrogate(rng: random.Random, data: bytes) -> bytes:
    quotes = [m.end() for m in re.finditer(rb'"', data)] or [_at(rng, data)]
    at = rng.choice(quotes)
    return data[:at] + rng.choice([b"\\ud800", b"\\udfff", b"\\ud83d"]) + data[at:]


def long_field(rng: random.Random, data: bytes) -> bytes:
    at = _at(rng, data)
    return data[:at] + b"x" * 200_000 + data[at:]


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = data.splitlines(keepends=True) or [data]
    i = rng.randrange(len(lines))
    return b"".join(lines[: i + 1] + lines[i:])


def zip_claim(rng: random.Random, data: bytes) -> bytes:
    """A ZIP archive whose central directory claims a huge uncompressed size (a bomb's header)."""
    at = data.rfind(b"PK\x01\x02")
    if at < 0:
        return flip(rng, data)
    return data[: at + 24] + rng.choice([2_500_000_000, 0xFFFFFFFF, 0]).to_bytes(4, "little") + data[at + 28 :]


def zip_member(rng: random.Random, data: bytes) -> bytes:
    """A ZIP archive with one member damaged by another mutation (the archive itself stays valid)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = {n: z.read(n) for n in z.namelist()}
    except (zipfile.BadZipFile, OSError, ValueError):
        return flip(rng, data)
    name = rng.choice(sorted(members))
    members[name] = rng.choice(TEXT_MUTATIONS)(rng, members[name])
    return _zip(members)


TEXT_MUTATIONS = [flip, truncate, huge_number, non_ascii_number, invalid_utf8, deep_json, lone_surrogate, long_field, duplicate_line]
ZIP_MUTATIONS = [flip, truncate, zip_claim, zip_member, zip_member]


def mutate(rng: random.Random, seed: Seed, root: Path) -> str:
    """Write ``seed`` under ``root`` with one file damaged (or renamed to a non-UTF-8 name); say what was done."""
    target = rng.choice(seed.mutable)
    files = dict(seed.files)
    rename = rng.random() < 0.08
    if rename:
        what = "rename"
    else:
        mutation = rng.choice(ZIP_MUTATIONS if target.endswith(".zip") else TEXT_MUTATIONS)
        files[target] = mutation(rng, files[target])
        what = mutation.__name__
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if rename:
        old = root / target
        stem, dot, ext = old.name.rpartition(".")
        new = os.fsencode(old.parent) + b"/" + (stem or ext).encode() + b"\xff" + (b"." + ext.encode() if dot and stem else b"")
        os.rename(old, new)
    return f"{seed.name}: {what} {target}"


def cases() -> list[tuple[str, int]]:
    return [(fmt, i) for fmt in sorted(available()) for i in range(CASES)]


def test_every_registered_format_has_fuzz_inputs():
    assert set(fixtures()) == set(available())


@pytest.mark.parametrize("fmt, case", cases(), ids=lambda v: str(v))
def test_damaged_input_never_ends_in_an_internal_error(fmt, case, tmp_path, capsys):
    rng = random.Random(f"{SEED}/{fmt}/{case}")
    seeds = fixtures()[fmt] + samples().get(fmt, [])
    seed = seeds[case % len(seeds)]
    root = tmp_path / "in"
    what = mutate(rng, seed, root)
    args = [a.replace("{root}", str(root)) for a in seed.args]
    extra = ["--tokenizer", "whitespace"] if fmt != "labels" else []
    strict = ["--strict"] if rng.random() < 0.15 else []
    rc = main(["convert", *args, *extra, *strict, "--out", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert rc in (0, 2, 3), f"{what}: exit {rc}: {err}"
    assert "Traceback" not in err and "internal error" not in err, f"{what}: {err}"
