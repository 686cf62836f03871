"""What the round-trip tests compare: span records (element by element), texts, submissions, and unit matrices
of every setting (char and word units × interval and boundary × separate, combined and labels modes × extend,
keep and drop), or item matrices for flat labels."""

from __future__ import annotations

import difflib
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from tests.adapters.test_fuzz import Seed
from unitize import Corpus, RunError, Settings, load_toml, read_corpus, unitize
from unitize.cli import build_parser
from unitize.cli.study_flags import settings_from_args
from unitize.config.sections import UNITIZE_OPTIONS
from unitize.items.run import ItemsUnitized
from unitize.model import Finding, Submission
from unitize.run.conversion import convert_format
from unitize.validate import check_spans
from unitize.writers import get_target
from unitize.writers.holds import ONE_GROUP, elements

PAIRS = (("char", "interval"), ("char", "boundary"), ("word", "interval"), ("word", "boundary"))
MODES = ("separate", "combined", "labels")
DISCONTINUOUS = ("extend", "keep", "drop")
DEFAULT_TOKENIZER = UNITIZE_OPTIONS["tokenizer"].default


def materialize(seed: Seed, root: Path) -> Settings:
    """Write a seed's files under ``root`` and parse its ``convert`` arguments into settings."""
    if root.exists():
        shutil.rmtree(root)
    for rel, data in seed.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    args = [a.replace("{root}", str(root)) for a in seed.args]
    return settings_from_args(build_parser().parse_args(["convert", *args, "--out", str(root.parent / "unused")]))


def valid(corpus: Corpus) -> Corpus:
    """The corpus without the spans whose offsets its texts refute (a conversion does not write them)."""
    _, fate = check_spans(corpus)
    return replace(corpus, spans=[s for s, why in zip(corpus.spans, fate) if why is None])


def records(corpus: Corpus, *, groups: bool = True) -> Counter:
    """Every element as (annotator, doc, group, layer, label, fragments), counted."""
    return Counter(
        (f[0].annotator, f[0].doc_id, f[0].group if groups else "", f[0].layer, f[0].label, tuple((s.begin, s.end) for s in f))
        for f in elements(s for s in corpus.spans if s.valid).values()
    )


def texts(corpus: Corpus) -> dict[str, str | None]:
    return {d: doc.text for d, doc in corpus.documents.items()}


def submissions(corpus: Corpus) -> set[tuple[str, str, str]]:
    return {(s.annotator, s.doc_id, s.group) for s in corpus.submissions}


def unit_rows(corpus: Corpus, settings: Settings, *, discontinuous: tuple[str, ...] = DISCONTINUOUS, modes: tuple[str, ...] = MODES,
              pairs: tuple[tuple[str, str], ...] = PAIRS, drop: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
    """Every unit (or item) matrix of ``corpus`` by setting, as rows (columns in ``drop`` left out)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if corpus.traits.kind == "items":
        result = unitize(corpus, replace(settings, items={**settings.items, "layouts": ["long"]}))
        assert isinstance(result, ItemsUnitized)
        return {"items": result.table("long").to_pylist()}
    if not any(len(f) > 1 for f in elements(s for s in corpus.spans if s.valid).values()):
        discontinuous = discontinuous[:1]  # the three treatments agree when no element has several fragments
    for d in discontinuous:
        s = replace(settings, pairs=pairs, modes=modes, discontinuous=d, layout="long")  # type: ignore[arg-type]
        result = unitize(corpus, s)
        for unit, approach in s.pairs:
            for mode in s.modes:
                rows = [r for t in result.matrices(unit, approach, mode) for r in t.to_pylist()]  # type: ignore[union-attr]
                out[f"{d}/{unit}-{approach}-{mode}"] = [{k: v for k, v in r.items() if k not in drop} for r in rows]
    return out


def units_differ(a: Corpus, a_settings: Settings, b: Corpus, b_settings: Settings) -> list[str]:
    """The settings whose unit (or item) matrices differ between two corpora, compared as Arrow tables (columns by
    name): :func:`unit_rows` as Python rows took 23 GB on ToxicSpans and the test run was killed."""
    if a.traits.kind == "items" or b.traits.kind == "items":
        return [] if unit_rows(a, a_settings) == unit_rows(b, b_settings) else ["items"]
    discontinuous = DISCONTINUOUS
    if not any(len(f) > 1 for c in (a, b) for f in elements(s for s in c.spans if s.valid).values()):
        discontinuous = discontinuous[:1]  # the three treatments agree when no element has several fragments
    differ = []
    for d in discontinuous:
        ra, rb = (unitize(c, replace(s, pairs=PAIRS, modes=MODES, discontinuous=d, layout="long"))  # type: ignore[arg-type]
                  for c, s in ((a, a_settings), (b, b_settings)))
        for unit, approach in PAIRS:
            for mode in MODES:
                ta, tb = (list(r.matrices(unit, approach, mode)) for r in (ra, rb))  # type: ignore[union-attr]
                same = len(ta) == len(tb) and all(
                    x.num_rows == y.num_rows and sorted(x.column_names) == sorted(y.column_names)
                    and x.select(sorted(x.column_names)).replace_schema_metadata(None).equals(y.select(sorted(y.column_names)).replace_schema_metadata(None))
                    for x, y in zip(ta, tb)
                )
                if not same:
                    differ.append(f"{d}/{unit}-{approach}-{mode}")
    return differ


def read_back(out: Path) -> tuple[Corpus, Settings]:
    settings = load_toml(out / "study.toml")
    return read_corpus(settings), settings


#: the formats that hold text spans (every writer but the flat labels')
SPAN_FORMATS = ("brat", "webanno-tsv", "doccano", "label-studio", "conll-bio", "span-table", "quotes", "spacy", "huggingface", "factgenie", "xmi",
                "datt", "pdtb2", "pdtb3", "conll16")


def dropped(findings: list[Finding]) -> set[tuple[str, str, str, str, str]]:
    """The elements (annotator, doc, group, record, layer) the ``not-convertible`` findings name."""
    return {(f.annotator or "", f.doc or "", f.group or "", f.record, f.layer or "") for f in findings
            if f.code == "not-convertible" and f.record is not None}


def expected(source: Corpus, findings: list[Finding], back: Corpus | None = None) -> Corpus:
    """``source`` as a conversion that reported ``findings`` should read back: without the elements it reported
    ``not-convertible``, and a span it reported ``word-snapped`` as the whole tokens (of ``back``) it touches."""
    gone = dropped(findings)
    snapped = {(f.annotator, f.doc, f.record, f.layer) for f in findings if f.code == "word-snapped"}
    spans = []
    for s in source.spans:
        if (s.annotator, s.doc_id, s.group, s.record, s.layer) in gone:
            continue
        if (s.annotator, s.doc_id, s.record, s.layer) in snapped and back is not None:
            tokens = back.documents[s.doc_id].tokens
            assert tokens is not None
            starts, ends = tokens
            first, last = int(np.searchsorted(ends, s.begin, side="right")), int(np.searchsorted(starts, s.end, side="left")) - 1
            s = replace(s, begin=int(starts[first]), end=int(ends[last]))
        spans.append(s)
    return replace(source, spans=spans)


def moved(want: Corpus, back: Corpus) -> Corpus:
    """``want`` with the offsets of its spans moved onto ``back``'s texts where the target kept a text its own way
    (CRLF as two characters where the source counted one, a line break added at the end): the texts aligned,
    a span's ends go with the characters they are next to."""
    spans = []
    maps: dict[str, Callable[[int, bool], int]] = {}
    for s in want.spans:
        old, new = texts(want).get(s.doc_id), texts(back).get(s.doc_id)
        if old is None or new is None or old == new or not s.valid:
            spans.append(s)
            continue
        if s.doc_id not in maps:
            maps[s.doc_id] = _aligned(old, new)
        spans.append(replace(s, begin=maps[s.doc_id](s.begin, False), end=maps[s.doc_id](s.end, True)))
    return replace(want, spans=spans)


#: what a target may add, drop or change when it keeps a text its own way: line breaks, spaces, a BOM
IGNORABLE = frozenset(" \t\r\n\f\v\u00a0\u2028\u2029\ufeff")


def _skeleton(text: str) -> str:
    return "".join(c for c in text if c not in IGNORABLE)


def _walk(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """The opcodes of two texts with the same characters but for :data:`IGNORABLE` ones, in linear time: equal
    characters matched as they come, an ignorable one of one text alone inserted or deleted (both: replaced)."""
    ops: list[tuple[str, int, int, int, int]] = []

    def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if ops and ops[-1][0] == tag and ops[-1][2] == i1 and ops[-1][4] == j1:
            ops[-1] = (tag, ops[-1][1], i2, ops[-1][3], j2)
        else:
            ops.append((tag, i1, i2, j1, j2))

    i = j = 0
    while i < len(old) or j < len(new):
        both = i < len(old) and j < len(new)
        if both and old[i] == new[j]:
            add("equal", i, i + 1, j, j + 1)
            i, j = i + 1, j + 1
        elif both and new[j] in IGNORABLE and new[j + 1 : j + 2] == old[i]:  # "\n" → "\r\n": the "\r" inserted
            add("insert", i, i, j, j + 1)
            j += 1
        elif both and old[i] in IGNORABLE and old[i + 1 : i + 2] == new[j]:
            add("delete", i, i + 1, j, j)
            i += 1
        elif both and old[i] in IGNORABLE and new[j] in IGNORABLE:
            add("replace", i, i + 1, j, j + 1)
            i, j = i + 1, j + 1
        elif j < len(new) and new[j] in IGNORABLE:
            add("insert", i, i, j, j + 1)
            j += 1
        else:
            add("delete", i, i + 1, j, j)
            i += 1
    return ops


def _aligned(old: str, new: str) -> Callable[[int, bool], int]:
    # only line breaks, spaces or a BOM changed: aligned in linear time; else difflib's quadratic matcher
    same = _skeleton(old) == _skeleton(new)
    blocks = _walk(old, new) if same else difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def at(p: int, end: bool) -> int:
        if end and p == 0:
            return 0  # an end goes with the character before it: at the start there is none (an empty span there stays empty)
        for tag, i1, i2, j1, j2 in blocks:
            if tag == "equal" and i1 <= p < i2 or (tag == "equal" and p == i2 and end):
                return j1 + p - i1
            if i1 <= p <= i2 and tag != "equal":
                return j2 if (end and p == i2) or (not end and p == i2 and i2 > i1) else j1
        return len(new)

    return at


def tokenizer(corpus: Corpus, settings: Settings) -> str:
    """The tokenizer word units are made by: the study's, or the format's own tokens (``given``) by default."""
    if settings.tokenizer == DEFAULT_TOKENIZER and corpus.traits.tokenizer is not None:
        return corpus.traits.tokenizer
    return settings.tokenizer


def one_group(corpus: Corpus) -> Corpus:
    """``corpus`` as a format without groups reads it back: every submission and record in the one group."""
    subs: dict[tuple[str, str], Submission] = {}
    for sub in corpus.submissions:
        key = (sub.annotator, sub.doc_id)
        subs[key] = replace(sub, group=ONE_GROUP, records=sub.records + (subs[key].records if key in subs else 0))
    spans = [replace(s, group=ONE_GROUP, record=f"{s.group}/{s.record}") for s in corpus.spans]
    return replace(corpus, spans=spans, submissions=list(subs.values()))


def cross(seed: Seed, to: str, root: Path, *, units: bool = True) -> Counter:
    """Read ``seed``, convert it to ``to``, read it back and compare: elements read back unchanged (``pass``),
    reported ``not-convertible``, or different (``diff``: a record lost, changed or added; a unit that differs)."""
    settings = materialize(seed, root / "in")
    try:
        source = read_corpus(settings)
    except RunError:
        return Counter()  # a sample of the format that holds no span record (doccano's text classification)
    if source.traits.kind != "spans":
        return Counter()
    if source.traits.tokenizer is None:
        settings = replace(settings, tokenizer="whitespace")
    src = valid(source)
    n = len(elements(s for s in src.spans if s.valid))
    try:
        _, findings, manifest = convert_format(settings, to, root / "out")
    except RunError as exc:
        if "could be written" not in str(exc):
            raise
        return Counter({"not-convertible": n, "nothing-writable": 1})
    assert manifest is not None
    gone = dropped(findings)
    not_convertible = manifest["accounting"]["not_convertible"]
    assert not_convertible == sum(1 for f in findings if f.code == "not-convertible")
    try:
        back, back_settings = read_back(root / "out")
    except RunError:
        if n:
            raise
        # no span at all: a discourse format written without a relation names no annotator to read back
        return Counter({"nothing-writable": 1})
    want = expected(moved(src, back), findings, back)
    groups = get_target(to).traits.groups
    a, b = records(back, groups=groups), records(want, groups=groups)
    out = Counter({"pass": sum((a & b).values()), "not-convertible": len(gone), "diff": sum((a - b).values()) + sum((b - a).values()),
                   "snapped": sum(1 for f in findings if f.code == "word-snapped")})
    if units and not out["diff"]:
        # char units: the same whatever either format tokenizes by; word units too when both tokenize alike
        pairs = PAIRS if tokenizer(back, back_settings) == tokenizer(src, settings) else PAIRS[:2]
        # per document, units are compared where the target kept its text (a text it changed is reported)
        kept = {d for d, t in texts(want).items() if t is not None and texts(back).get(d) == t}
        out["text-changed"] = sum(1 for d, t in texts(want).items() if t is not None and d not in kept)
        drop = ("group",) if not groups else ()
        if not groups:
            want = one_group(want)
        if not any(sp.valid for sp in want.spans):
            drop += ("layer",)  # without a span, most formats do not say which layer they would be in
        if src.traits.default_layers != "found" and back.traits.default_layers == "found":
            # a span tool's study unitizes every layer found, and a study naming Arg1 and Arg2 (the built-in
            # default) cannot say otherwise: the source's layers (a discourse study's) are compared
            found = {sp.layer for sp in back.spans}
            layers = tuple(layer for layer in settings.layers if layer in found)
            back = replace(back, traits=replace(back.traits, default_layers=None))
            back_settings, settings = replace(back_settings, layers=layers), replace(settings, layers=layers)
        mine, theirs = (
            {k: [r for r in rows if r.get("doc_id") in kept] for k, rows in unit_rows(c, s, pairs=pairs, drop=drop).items()}
            for c, s in ((back, back_settings), (want, settings))
        )
        if "layer" in drop:  # and a layer-less study unitizes its default layers, all empty: compared as one
            mine, theirs = ({k: sorted({tuple(sorted(r.items())) for r in rows}) for k, rows in m.items()} for m in (mine, theirs))
        if mine != theirs:
            out["diff"] += 1
    return out
