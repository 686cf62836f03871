#!/usr/bin/env python3
"""Generate a synthetic multi-annotator DATT (Turkish Discourse Bank) corpus.

The layout is the one `unitize` reads with ``format = "datt"``::

    OUT/texts/<doc>.txt                               raw text, UTF-8, no BOM
    OUT/annotations/<doc>_<annotator>_<conn>.xml      one file per (doc, annotator, connective)
    OUT/study.toml                                    config for `unitize convert`
    OUT/corpus.json                                   parameters and summary (read by run.py)

Each XML file has a ``<Document>`` root holding ``--relations`` EXPLICIT
``<Relation>`` elements, one per occurrence of that connective in that text,
with children ``Conn, Mod, Arg1, Arg2, Supp1, Supp2, Shared, Supp_Shared``.
Offsets are code points into the raw text, with the end exclusive. ``\\r\\n``
counts as 2 characters.

The text is synthetic but Turkish-like: words are built from syllables, with
Turkish letters, apostrophe suffixes on proper nouns, numbers, commas, and
sentence-final ``. ? ! ...``. Texts are split into paragraphs. About a third of
the texts (``--crlf-fraction``) use CRLF line endings.

For each connective occurrence the generator inserts the connective into the
text. Its position sets a gold Arg1 and Arg2:

* sentence-initial (``tag="inter"``): Arg1 is the previous sentence and Arg2
  is the rest of the sentence;
* clause-initial: Arg1 is the previous clause and Arg2 the rest of the clause;
* clause-final (a postposition such as "için"): Arg2 is the clause before the
  connective and Arg1 the next clause;
* clause-medial: Arg1 is the words before the connective in the clause and
  Arg2 the words after it.

Each annotator then perturbs the gold boundaries a little (a word more or
less, with probability ``--shift-prob``). About 2 % of arguments become
discontinuous (two ``<Span>`` elements). About 1 % of ends are cut inside a
word.

``<Text>`` holds the raw slice. ``&``, ``<`` and ``>`` are escaped, and
``\\r`` is written as ``&#13;`` so that an XML parser returns the slice
unchanged, CRLF included. Parsers turn a literal CR into LF.

The output is deterministic for a given seed and set of parameters. Only the
standard library is used. ``--verify`` uses lxml if it is installed and
xml.etree otherwise.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_FULL_OUT = BENCH_DIR / ".data" / "tdb-full"
DEFAULT_SMALL_OUT = BENCH_DIR / ".data" / "tdb-small"

FULL = dict(texts=197, connectives=60, annotators=3, words=2500, relations=4)
SMALL = dict(texts=10, connectives=5, annotators=3, words=500, relations=4)

# (surface form, sense).  Common TDB explicit connectives.  Multi-word ones are
# written as one contiguous Conn span.
CONNECTIVES = [
    ("ve", "EXPANSION: Conjunction"),
    ("ama", "COMPARISON: Concession: Arg2-as-denier"),
    ("fakat", "COMPARISON: Concession: Arg2-as-denier"),
    ("ancak", "COMPARISON: Concession: Arg2-as-denier"),
    ("çünkü", "CONTINGENCY: Cause: Reason(Arg2-as-reason)"),
    ("oysa", "COMPARISON: Contrast"),
    ("ya da", "EXPANSION: Disjunction"),
    ("veya", "EXPANSION: Disjunction"),
    ("ayrıca", "EXPANSION: Conjunction"),
    ("bu nedenle", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("bu yüzden", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("için", "CONTINGENCY: Purpose"),
    ("rağmen", "COMPARISON: Concession: Arg1-as-denier"),
    ("ise", "COMPARISON: Contrast"),
    ("ki", "EXPANSION: Level-of-detail: Arg2-as-detail"),
    ("de", "EXPANSION: Conjunction"),
    ("sonra", "TEMPORAL: Asynchronous: Precedence"),
    ("önce", "TEMPORAL: Asynchronous: Succession"),
    ("dolayısıyla", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("yani", "EXPANSION: Equivalence"),
    ("örneğin", "EXPANSION: Instantiation: Arg2-as-instance"),
    ("mesela", "EXPANSION: Instantiation: Arg2-as-instance"),
    ("hatta", "EXPANSION: Conjunction"),
    ("üstelik", "EXPANSION: Conjunction"),
    ("yine de", "COMPARISON: Concession: Arg2-as-denier"),
    ("gene de", "COMPARISON: Concession: Arg2-as-denier"),
    ("halbuki", "COMPARISON: Contrast"),
    ("madem", "CONTINGENCY: Cause: Reason(Arg2-as-reason)"),
    ("eğer", "CONTINGENCY: Condition: Arg2-as-cond"),
    ("şayet", "CONTINGENCY: Condition: Arg2-as-cond"),
    ("iken", "TEMPORAL: Synchronous"),
    ("böylece", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("sonuçta", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("nitekim", "EXPANSION: Instantiation: Arg2-as-instance"),
    ("zira", "CONTINGENCY: Cause: Reason(Arg2-as-reason)"),
    ("aslında", "COMPARISON: Concession: Arg2-as-denier"),
    ("ardından", "TEMPORAL: Asynchronous: Precedence"),
    ("bunun yerine", "EXPANSION: Substitution: Arg2-as-subst"),
    ("aksine", "COMPARISON: Contrast"),
    ("tersine", "COMPARISON: Contrast"),
    ("buna karşın", "COMPARISON: Concession: Arg2-as-denier"),
    ("buna rağmen", "COMPARISON: Concession: Arg2-as-denier"),
    ("öyleyse", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("o halde", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("kısacası", "EXPANSION: Level-of-detail: Arg2-as-detail"),
    ("sonunda", "TEMPORAL: Asynchronous: Precedence"),
    ("ilk olarak", "EXPANSION: Conjunction"),
    ("son olarak", "EXPANSION: Conjunction"),
    ("başka bir deyişle", "EXPANSION: Equivalence"),
    ("diğer yandan", "COMPARISON: Contrast"),
    ("öte yandan", "COMPARISON: Contrast"),
    ("bununla birlikte", "COMPARISON: Concession: Arg2-as-denier"),
    ("bundan dolayı", "CONTINGENCY: Cause: Result(Arg2-as-result)"),
    ("bu arada", "TEMPORAL: Synchronous"),
    ("ne var ki", "COMPARISON: Concession: Arg2-as-denier"),
    ("gelgelelim", "COMPARISON: Concession: Arg2-as-denier"),
    ("yalnız", "COMPARISON: Concession: Arg2-as-denier"),
    ("dahası", "EXPANSION: Conjunction"),
    ("kaldı ki", "EXPANSION: Conjunction"),
    ("meğer", "COMPARISON: Contrast"),
    ("yoksa", "EXPANSION: Disjunction"),
    ("karşın", "COMPARISON: Concession: Arg1-as-denier"),
    ("üzere", "CONTINGENCY: Purpose"),
    ("diye", "CONTINGENCY: Purpose"),
    ("veyahut", "EXPANSION: Disjunction"),
]
# Connectives that normally follow their clause ("X için, Y"): placed clause-final.
POSTPOSED = {"için", "rağmen", "sonra", "önce", "iken", "karşın", "üzere", "diye", "ki", "de", "ise"}

_ASCII = str.maketrans({"ç": "c", "ğ": "g", "ı": "i", "ö": "o", "ş": "s", "ü": "u",
                        "Ç": "C", "Ğ": "G", "İ": "I", "Ö": "O", "Ş": "S", "Ü": "U"})


def conn_slug(surface: str) -> str:
    """File-name part for a connective: ASCII, words joined by '_'."""
    return "_".join(surface.translate(_ASCII).lower().split())


def connective_inventory(n: int) -> list[tuple[str, str, str]]:
    """(surface, sense, slug) for n connectives; synthetic ones past the list."""
    out = []
    for i in range(n):
        if i < len(CONNECTIVES):
            surface, sense = CONNECTIVES[i]
        else:  # beyond the real inventory: made-up but stable connectives
            surface, sense = f"bağlaç{i + 1}", "EXPANSION: Conjunction"
        out.append((surface, sense, conn_slug(surface)))
    return out


# ---------------------------------------------------------------- vocabulary

_BACK_V = "aıou"
_FRONT_V = "eiöü"
_CONS = "bcçdfgğhjklmnprsştvyz"
_CONS_W = [3, 2, 2, 5, 1, 2, 1, 2, 1, 5, 7, 5, 3, 6, 4, 3, 5, 3, 4, 4]
_CONS_W += [1] * (len(_CONS) - len(_CONS_W))
_SUFFIX_BACK = ["lar", "da", "dan", "ın", "ı", "a", "la", "lık", "cı", "mak", "yor", "dı", "mış", "acak"]
_SUFFIX_FRONT = ["ler", "de", "den", "in", "i", "e", "le", "lik", "ci", "mek", "iyor", "di", "miş", "ecek"]
_PROPER_SUFFIX_BACK = ["'da", "'ya", "'nın", "'dan", "'ı", "'a", "'la"]
_PROPER_SUFFIX_FRONT = ["'de", "'ye", "'nin", "'den", "'i", "'e", "'le"]
_TR_UPPER = str.maketrans({"i": "İ", "ı": "I"})


def tr_capitalize(w: str) -> str:
    return w[:1].translate(_TR_UPPER).upper() + w[1:]


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    words = set()
    while len(words) < size:
        vowels = _BACK_V if rng.random() < 0.55 else _FRONT_V
        nsyl = rng.choices([1, 2, 3, 4], weights=[2, 6, 4, 1])[0]
        parts = []
        for s in range(nsyl):
            if s > 0 or rng.random() < 0.75:
                parts.append(rng.choices(_CONS, weights=_CONS_W)[0])
            parts.append(rng.choice(vowels))
            if rng.random() < 0.35:
                parts.append(rng.choices(_CONS, weights=_CONS_W)[0])
        w = "".join(parts)
        if rng.random() < 0.45:
            suf = rng.choice(_SUFFIX_BACK if vowels == _BACK_V else _SUFFIX_FRONT)
            if suf[0] in _BACK_V + _FRONT_V and w[-1] in _BACK_V + _FRONT_V:
                suf = ("n" if suf in ("ın", "in", "ı", "i") else "y") + suf  # buffer consonant
            w += suf
        if len(w) >= 2:
            words.add(w)
    return sorted(words)


def make_proper_nouns(rng: random.Random, vocab: list[str], n: int) -> list[str]:
    """Capitalised words with a (vowel-harmonic) case suffix after an apostrophe."""
    out = []
    for _ in range(n):
        w = rng.choice(vocab)
        last_v = [ch for ch in w if ch in _BACK_V + _FRONT_V][-1:] or ["a"]
        out.append(tr_capitalize(w) + rng.choice(
            _PROPER_SUFFIX_BACK if last_v[0] in _BACK_V else _PROPER_SUFFIX_FRONT))
    return out


# ---------------------------------------------------------------- text model

class Doc:
    """A text as sentences → clauses → tokens, rendered to a raw string."""

    __slots__ = ("raw", "tok_start", "tok_end", "tok_sent", "tok_clause",
                 "sent_first", "sent_last", "clause_first", "clause_last", "conn_tok")


def build_sentences(rng: random.Random, vocab, cum_w, proper, n_words: int):
    """Return paragraphs → sentences → clauses → words (plain strings)."""
    paragraphs = []
    total = 0
    while total < n_words:
        para = []
        for _ in range(rng.randint(2, 8)):
            n_clauses = rng.choices([1, 2, 3, 4], weights=[3, 5, 3, 1])[0]
            sent = []
            for _ in range(n_clauses):
                k = rng.randint(2, 9)
                clause = rng.choices(vocab, cum_weights=cum_w, k=k)
                r = rng.random()
                if r < 0.12:
                    clause[rng.randrange(k)] = rng.choice(proper)
                elif r < 0.15:
                    clause[rng.randrange(k)] = str(rng.randint(1, 2024))
                sent.append(clause)
                total += k
            para.append(sent)
            if total >= n_words:
                break
        paragraphs.append(para)
    return paragraphs


def place_connectives(rng: random.Random, paragraphs, n_occ: int, conns):
    """Choose an insertion point for every occurrence.

    Returns {(p, s, c): [(pos, occ_index), ...]} where pos indexes the clause's
    original words (0 = before the first word, len = after the last), and the
    kind of each occurrence."""
    sent_index = [(p, s) for p, para in enumerate(paragraphs) for s in range(len(para))]
    n_sent = len(sent_index)
    used = set()
    inserts: dict = {}
    kinds = []
    for occ in range(n_occ):
        surface = conns[occ % len(conns)][0]
        want = None
        for attempt in range(200):
            si = rng.randrange(n_sent)
            p, s = sent_index[si]
            sent = paragraphs[p][s]
            c = rng.randrange(len(sent))
            n = len(sent[c])
            r = rng.random()
            if surface in POSTPOSED and r < 0.7:
                kind, pos = "final", n
                if c + 1 >= len(sent):
                    continue
            elif r < 0.35:
                kind, pos, c = "sent", 0, 0
                if si == 0:
                    continue
            elif r < 0.75:
                kind, pos = "clause", 0
                if c == 0:
                    continue
            else:
                kind, pos = "medial", rng.randint(1, n - 1)
            key = (p, s, c, pos)
            if key in used and attempt < 150:
                continue
            want = (p, s, c, pos, kind)
            break
        if want is None:  # tiny texts: fall back to a medial position anywhere
            si = rng.randrange(n_sent)
            p, s = sent_index[si]
            c = rng.randrange(len(paragraphs[p][s]))
            want = (p, s, c, rng.randint(1, len(paragraphs[p][s][c]) - 1), "medial")
        p, s, c, pos, kind = want
        used.add((p, s, c, pos))
        inserts.setdefault((p, s, c), []).append((pos, occ))
        kinds.append(kind)
    return inserts, kinds


def render(rng: random.Random, paragraphs, inserts, conns, n_occ: int, crlf: bool) -> Doc:
    nl = "\r\n" if crlf else "\n"
    pieces: list[str] = []
    length = 0
    tok_start, tok_end, tok_sent, tok_clause = [], [], [], []
    sent_first, sent_last, clause_first, clause_last = [], [], [], []
    conn_tok = [0] * n_occ

    def emit(s: str):
        nonlocal length
        pieces.append(s)
        length += len(s)

    # a title block, indented, as in real TDB files
    emit("   " + " ".join(tr_capitalize(w) for w in paragraphs[0][0][0][:3]) + nl + nl)
    sent_id = 0
    clause_id = 0
    for p, para in enumerate(paragraphs):
        if p:
            emit(nl + nl if rng.random() < 0.8 else nl)
            if rng.random() < 0.3:
                emit("\t")
        for s, sent in enumerate(para):
            if s:
                emit(" ")
            sent_first.append(len(tok_start))
            first_word = True
            for c, clause in enumerate(sent):
                if c:
                    emit(" ")
                # merge inserted connectives with the clause words
                items = [(i, 1, w) for i, w in enumerate(clause)]
                for pos, occ in inserts.get((p, s, c), ()):
                    items.append((pos, 0, occ))
                items.sort(key=lambda t: (t[0], t[1]))
                clause_first.append(len(tok_start))
                for j, (_, is_word, val) in enumerate(items):
                    if j:
                        emit(" ")
                    if is_word:
                        w = val
                    else:
                        w = conns[val % len(conns)][0]
                        conn_tok[val] = len(tok_start)
                    if first_word:
                        w = tr_capitalize(w)
                        first_word = False
                    tok_start.append(length)
                    emit(w)
                    tok_end.append(length)
                    tok_sent.append(sent_id)
                    tok_clause.append(clause_id)
                clause_last.append(len(tok_start) - 1)
                clause_id += 1
                if c < len(sent) - 1:
                    emit("," if rng.random() < 0.85 else ";")
            sent_last.append(len(tok_start) - 1)
            sent_id += 1
            emit(rng.choices([".", "?", "!", "..."], weights=[20, 2, 1, 1])[0])
    emit(nl)
    d = Doc()
    d.raw = "".join(pieces)
    d.tok_start, d.tok_end, d.tok_sent, d.tok_clause = tok_start, tok_end, tok_sent, tok_clause
    d.sent_first, d.sent_last = sent_first, sent_last
    d.clause_first, d.clause_last = clause_first, clause_last
    d.conn_tok = conn_tok
    return d


def gold_args(d: Doc, t: int, kind: str):
    """Gold (Arg1, Arg2) token ranges (inclusive) for connective token t."""
    cl = d.tok_clause[t]
    if kind == "sent":
        sid = d.tok_sent[t]
        arg1 = (d.sent_first[sid - 1], d.sent_last[sid - 1])
        arg2 = (t + 1, d.sent_last[sid])
    elif kind == "clause":
        arg1 = (d.clause_first[cl - 1], d.clause_last[cl - 1])
        arg2 = (t + 1, d.clause_last[cl])
    elif kind == "final":
        arg2 = (d.clause_first[cl], t - 1)
        arg1 = (d.clause_first[cl + 1], d.clause_last[cl + 1])
    else:
        arg1 = (d.clause_first[cl], t - 1)
        arg2 = (t + 1, d.clause_last[cl])
    return arg1, arg2


# ---------------------------------------------------------------- annotators

def perturb(rng: random.Random, d: Doc, rng_tok, t: int, p_shift: float,
            p_disc: float, p_cut: float):
    """One annotator's version of a gold token range → list of (begin, end)."""
    a, b = rng_tok
    lo, hi = (0, t - 1) if b < t else (t + 1, len(d.tok_start) - 1)
    if rng.random() < p_shift:
        a += 1 if rng.random() < 0.5 else -1
    if rng.random() < p_shift:
        b += 1 if rng.random() < 0.5 else -1
    a = min(max(a, lo), hi)
    b = min(max(b, lo), hi)
    if a > b:
        a, b = b, a
    if b - a >= 4 and rng.random() < p_disc:
        g0 = rng.randint(a + 1, b - 2)
        g1 = min(g0 + rng.randint(0, 2), b - 1)
        spans = [[d.tok_start[a], d.tok_end[g0 - 1]], [d.tok_start[g1 + 1], d.tok_end[b]]]
    else:
        spans = [[d.tok_start[a], d.tok_end[b]]]
    if rng.random() < p_cut:
        last = spans[-1]
        wlen = d.tok_end[b] - d.tok_start[b]
        if wlen >= 3 and last[1] - last[0] > wlen:
            last[1] -= rng.randint(1, wlen - 1)
    return spans


# ---------------------------------------------------------------- XML

_TEXT_ENT = {"\r": "&#13;"}


def spans_xml(raw: str, spans) -> str:
    return "".join(
        f"<Span>\n<Text>{escape(raw[b:e], _TEXT_ENT)}</Text>\n"
        f"<BeginOffset>{b}</BeginOffset>\n<EndOffset>{e}</EndOffset>\n</Span>\n"
        for b, e in spans)


def element(name: str, raw: str, spans) -> str:
    if not spans:
        return f"<{name}/>\n"
    return f"<{name}>\n{spans_xml(raw, spans)}</{name}>\n"


def relation_xml(raw, sense, note, tag, conn, arg1, arg2, supp1) -> str:
    return (
        f'<Relation type="EXPLICIT" sense={quoteattr(sense)} note={quoteattr(note)} '
        f'pdtb3="yes" tag="{tag}">\n'
        + element("Conn", raw, conn)
        + "<Mod/>\n"
        + element("Arg1", raw, arg1)
        + element("Arg2", raw, arg2)
        + element("Supp1", raw, supp1)
        + "<Supp2/>\n<Shared/>\n<Supp_Shared/>\n</Relation>\n")


# ---------------------------------------------------------------- driver

def doc_id(i: int) -> str:
    return f"{1131 + 1009 * i:08d}"


STUDY_TOML = """\
[input]
format = "datt"
annotations = "annotations"
texts = "texts"

[unitize]
units = ["char", "word"]
approaches = ["interval", "boundary"]
layers = ["Arg1", "Arg2"]
tokenizer = "spacy:tr"
discontinuous = "extend"

[output]
dir = "out"
"""


def generate(out: Path, *, texts: int, connectives: int, annotators: int, words: int,
             relations: int, seed: int = 0, crlf_fraction: float = 1 / 3,
             shift_prob: float = 0.15, disc_prob: float = 0.02, cut_prob: float = 0.01,
             supp_prob: float = 0.01, vocab_size: int = 4000) -> dict:
    t0 = time.perf_counter()
    out = Path(out)
    tdir, adir = out / "texts", out / "annotations"
    tdir.mkdir(parents=True, exist_ok=True)
    adir.mkdir(parents=True, exist_ok=True)
    conns = connective_inventory(connectives)
    vrng = random.Random(f"vocab-{seed}")
    vocab = make_vocabulary(vrng, vocab_size)
    vrng.shuffle(vocab)
    # Zipf-like word frequencies
    cum_w, acc = [], 0.0
    for r in range(len(vocab)):
        acc += 1.0 / (r + 2) ** 1.05
        cum_w.append(acc)
    proper = make_proper_nouns(vrng, vocab, 200)
    ann_names = [f"ann{k + 1}" for k in range(annotators)]
    # annotators differ a little in how loosely they mark boundaries
    ann_shift = [shift_prob * (0.6 + 0.8 * k / max(1, annotators - 1)) for k in range(annotators)]

    n_files = n_rel = n_spans = n_disc = n_cut = n_bytes = n_crlf = 0
    n_arg_spans = {"Arg1": 0, "Arg2": 0}
    n_occ = connectives * relations
    for i in range(texts):
        did = doc_id(i)
        rng = random.Random(f"text-{seed}-{i}")
        crlf = rng.random() < crlf_fraction
        n_crlf += crlf
        # --words counts the inserted connectives too (most are one word)
        paragraphs = build_sentences(rng, vocab, cum_w, proper, max(words - n_occ, words // 2))
        inserts, kinds = place_connectives(rng, paragraphs, n_occ, conns)
        d = render(rng, paragraphs, inserts, conns, n_occ, crlf)
        raw = d.raw
        data = raw.encode("utf-8")
        (tdir / f"{did}.txt").write_bytes(data)
        n_bytes += len(data)
        golds = []
        for occ in range(n_occ):
            t = d.conn_tok[occ]
            golds.append((t, gold_args(d, t, kinds[occ])))
        for k, ann in enumerate(ann_names):
            arng = random.Random(f"ann-{seed}-{i}-{k}")
            for ci, (surface, sense, slug) in enumerate(conns):
                parts = ['<?xml version="1.0" encoding="utf-8"?>\n<Document>\n']
                for r in range(relations):
                    occ = r * connectives + ci
                    t, (g1, g2) = golds[occ]
                    kind = kinds[occ]
                    conn = [(d.tok_start[t], d.tok_end[t])]
                    a1 = perturb(arng, d, g1, t, ann_shift[k], disc_prob, cut_prob)
                    a2 = perturb(arng, d, g2, t, ann_shift[k], disc_prob, cut_prob)
                    supp1 = []
                    if arng.random() < supp_prob and g1[0] > 0 and g1[0] - 1 != t:
                        w = g1[0] - 1
                        supp1 = [(d.tok_start[w], d.tok_end[w])]
                    note = sense.rsplit(": ", 1)[-1] if arng.random() < 0.9 else ""
                    parts.append(relation_xml(raw, sense, note, "inter" if kind == "sent" else "intra",
                                              conn, a1, a2, supp1))
                    n_rel += 1
                    n_arg_spans["Arg1"] += len(a1)
                    n_arg_spans["Arg2"] += len(a2)
                    n_spans += 1 + len(a1) + len(a2) + len(supp1)
                    n_disc += (len(a1) > 1) + (len(a2) > 1)
                    n_cut += sum(1 for b, e in a1 + a2 if e < len(raw) and raw[e].isalnum()
                                 and raw[e - 1].isalnum())
                parts.append("</Document>\n")
                data = "".join(parts).encode("utf-8")
                (adir / f"{did}_{ann}_{slug}.xml").write_bytes(data)
                n_files += 1
                n_bytes += len(data)
    (out / "study.toml").write_text(STUDY_TOML, encoding="utf-8")
    elapsed = time.perf_counter() - t0
    summary = dict(
        params=dict(texts=texts, connectives=connectives, annotators=annotators, words=words,
                    relations=relations, seed=seed, crlf_fraction=crlf_fraction,
                    shift_prob=shift_prob, disc_prob=disc_prob, cut_prob=cut_prob,
                    supp_prob=supp_prob, vocab_size=vocab_size),
        texts=texts, crlf_texts=n_crlf, xml_files=n_files, relations=n_rel, spans=n_spans,
        arg1_spans=n_arg_spans["Arg1"], arg2_spans=n_arg_spans["Arg2"],
        discontinuous_args=n_disc, subword_cuts=n_cut, bytes=n_bytes,
        seconds=round(elapsed, 3))
    (out / "corpus.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


# ---------------------------------------------------------------- verification

def verify(out: Path, sample: int | None = None, seed: int = 0) -> dict:
    """Parse XML files and check every span: its raw slice must equal <Text>."""
    try:
        from lxml import etree
        parser_name = "lxml"
    except ImportError:  # pragma: no cover
        import xml.etree.ElementTree as etree
        parser_name = "xml.etree"
    out = Path(out)
    files = sorted((out / "annotations").glob("*.xml"))
    if sample is not None and sample < len(files):
        files = random.Random(seed).sample(files, sample)
    texts: dict[str, str] = {}
    n_span = n_bad = n_crlf_spans = 0
    problems = []
    for f in files:
        did = f.name.split("_", 1)[0]
        if did not in texts:
            with open(out / "texts" / f"{did}.txt", encoding="utf-8", newline="") as fh:
                texts[did] = fh.read()
        raw = texts[did]
        root = etree.parse(str(f)).getroot()
        assert root.tag == "Document", f
        for rel in root:
            assert rel.tag == "Relation", f
            assert [c.tag for c in rel] == ["Conn", "Mod", "Arg1", "Arg2", "Supp1", "Supp2",
                                            "Shared", "Supp_Shared"], f
            assert len(rel.find("Arg1")) >= 1 and len(rel.find("Arg2")) >= 1, f
            for span in rel.iter("Span"):
                b = int(span.findtext("BeginOffset"))
                e = int(span.findtext("EndOffset"))
                text = span.findtext("Text") or ""
                n_span += 1
                n_crlf_spans += "\r\n" in raw[b:e]
                if not (0 <= b < e <= len(raw)) or raw[b:e] != text:
                    n_bad += 1
                    if len(problems) < 5:
                        problems.append((f.name, b, e, raw[b:e], text))
    res = dict(parser=parser_name, files=len(files), spans=n_span, bad=n_bad,
               spans_with_crlf=n_crlf_spans, problems=problems)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output directory (default {DEFAULT_FULL_OUT}, or {DEFAULT_SMALL_OUT} with --small)")
    ap.add_argument("--small", action="store_true",
                    help="small preset for quick checks: " + ", ".join(f"{k}={v}" for k, v in SMALL.items()))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--texts", type=int, default=None, help=f"number of texts (full: {FULL['texts']})")
    ap.add_argument("--connectives", type=int, default=None,
                    help=f"distinct connectives per text (full: {FULL['connectives']})")
    ap.add_argument("--annotators", type=int, default=None, help=f"(full: {FULL['annotators']})")
    ap.add_argument("--words", type=int, default=None, help=f"words per text (full: {FULL['words']})")
    ap.add_argument("--relations", type=int, default=None,
                    help=f"occurrences per connective per text (full: {FULL['relations']})")
    ap.add_argument("--crlf-fraction", type=float, default=1 / 3, help="share of texts with CRLF")
    ap.add_argument("--shift-prob", type=float, default=0.15,
                    help="mean probability that an annotator moves a boundary by one word")
    ap.add_argument("--disc-prob", type=float, default=0.02, help="probability of a discontinuous argument")
    ap.add_argument("--cut-prob", type=float, default=0.01, help="probability of a sub-word argument end")
    ap.add_argument("--force", action="store_true",
                    help="replace texts/ and annotations/ if OUT already holds a corpus")
    ap.add_argument("--verify", nargs="?", type=int, const=-1, default=None, metavar="N",
                    help="after generating, parse N random XML files (all if N omitted) and check spans")
    ap.add_argument("--verify-only", action="store_true", help="only verify an existing corpus")
    args = ap.parse_args(argv)

    preset = SMALL if args.small else FULL
    params = {k: (getattr(args, k) if getattr(args, k) is not None else v) for k, v in preset.items()}
    out = args.out or (DEFAULT_SMALL_OUT if args.small else DEFAULT_FULL_OUT)

    if not args.verify_only:
        existing = out / "annotations"
        if existing.is_dir() and any(existing.iterdir()):
            if not args.force:
                print(f"error: {out} already holds a corpus; use --force to replace it", file=sys.stderr)
                return 2
            for sub in ("texts", "annotations"):
                shutil.rmtree(out / sub, ignore_errors=True)
        s = generate(out, seed=args.seed, crlf_fraction=args.crlf_fraction,
                     shift_prob=args.shift_prob, disc_prob=args.disc_prob,
                     cut_prob=args.cut_prob, **params)
        print(f"{out}: {s['texts']} texts ({s['crlf_texts']} CRLF), {s['xml_files']} files, "
              f"{s['relations']} relations, {s['spans']} spans (Arg1 {s['arg1_spans']}, "
              f"Arg2 {s['arg2_spans']}, {s['discontinuous_args']} discontinuous args, "
              f"{s['subword_cuts']} sub-word ends), {s['bytes'] / 1e6:.1f} MB in {s['seconds']:.1f} s")
    if args.verify is not None or args.verify_only:
        n = None if args.verify in (None, -1) else args.verify
        v = verify(out, n, args.seed)
        ok = v["bad"] == 0
        print(f"verify ({v['parser']}): {v['files']} files, {v['spans']} spans, "
              f"{v['spans_with_crlf']} spanning CRLF, {v['bad']} mismatches -> {'OK' if ok else 'FAIL'}")
        for p in v["problems"]:
            print("  ", p)
        if not ok:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
