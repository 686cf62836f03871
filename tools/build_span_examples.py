#!/usr/bin/env python3
"""(Re)generate the span-tool example projects in ``unitize/examples``.

``brat-mini`` (brat project), ``inception-mini`` (INCEpTION / WebAnno TSV 3.3
project export), ``crowd-mini`` (a crowd span table shaped like ToxicSpans) and
``bio-mini`` (a pair of CoNLL BIO files). Texts and annotations are written for
unitize by its developers and dedicated to the public domain (CC0 1.0).

Every annotation below is a quotation of the text — ``(label, phrase)`` or
``(label, phrase, n)`` for the n-th occurrence — never a number: offsets are
computed here (code points for brat and the span table, UTF-16 code units for
the TSV, tokens for BIO) and each slice is checked against its phrase. Running
the script twice gives byte-identical files.

Usage::

    python tools/build_span_examples.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import io
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LICENCE = "CC0 1.0 (public domain dedication): texts and annotations written for unitize by its developers; invented people and places."

# --- brat-mini: three annotators, three documents, PER/ORG/LOC/MISC -----------------------------

BRAT_TEXTS = {
    "harbour": "Maria Lopez opened a bakery on Harbour Street in Porto last spring.\n"
    "The Porto Chamber of Commerce gave her its small-business award in May.\n",
    "festival": "The Riverside Jazz Festival returns to Cork in July.\n"
    "Organisers from Cork City Council expect ten thousand visitors, and the singer Aoife Byrne will open the first night.\n",
    "lab": "Dr. Samuel Okafor left the University of Leeds to join Northwind Robotics in Oslo.\n"
    "He says the move was planned with his former student Lena Berg.\n",
}
BRAT = {
    "ana": {
        "harbour": [("PER", "Maria Lopez"), ("LOC", "Harbour Street"), ("LOC", "Porto"), ("ORG", "Porto Chamber of Commerce")],
        "festival": [("MISC", "Riverside Jazz Festival"), ("LOC", "Cork"), ("ORG", "Cork City Council"), ("PER", "Aoife Byrne")],
        "lab": [("PER", "Samuel Okafor"), ("ORG", "University of Leeds"), ("ORG", "Northwind Robotics"), ("LOC", "Oslo"), ("PER", "Lena Berg")],
    },
    "ben": {  # misses Harbour Street, splits the chamber, takes "Dr." into the name
        "harbour": [("PER", "Maria Lopez"), ("LOC", "Porto"), ("LOC", "Porto", 2), ("ORG", "Chamber of Commerce")],
        "festival": [("ORG", "Riverside Jazz Festival"), ("LOC", "Cork"), ("ORG", "Cork City Council"), ("PER", "Aoife Byrne")],
        "lab": [("PER", "Dr. Samuel Okafor"), ("ORG", "University of Leeds"), ("ORG", "Northwind Robotics"), ("LOC", "Oslo"), ("PER", "Lena Berg")],
    },
    "chen": {  # one long location, a nested city, a first name only, Oslo missed
        "harbour": [("PER", "Maria Lopez"), ("LOC", "Harbour Street in Porto"), ("ORG", "Porto Chamber of Commerce")],
        "festival": [("MISC", "Riverside Jazz Festival"), ("LOC", "Cork"), ("ORG", "Cork City Council"), ("LOC", "Cork", 2), ("PER", "Aoife")],
        "lab": [("PER", "Samuel Okafor"), ("ORG", "University of Leeds"), ("ORG", "Northwind Robotics"), ("PER", "Lena Berg")],
    },
}
BRAT_CONF = "[entities]\nPER\nORG\nLOC\nMISC\n\n[relations]\n\n[events]\n\n[attributes]\n"

# --- inception-mini: INCEpTION export, NamedEntity layer, an emoji (UTF-16 offsets) -------------

TSV_TEXTS = {
    "concert.txt": ["Great night with Ludovico Einaudi at Teatro Dal Verme 🎹 in Milan !", "Thanks to Radio Popolare for the tickets ."],
    "match.txt": ["Inter beat Torino 2 - 1 at San Siro on Sunday .", "Coach Simone Inzaghi praised Lautaro Martinez 🔥 after the game ."],
}
TSV = {
    "ana": {
        "concert.txt": [("PER", "Ludovico Einaudi"), ("LOC", "Teatro Dal Verme"), ("LOC", "Milan"), ("ORG", "Radio Popolare")],
        "match.txt": [("ORG", "Inter"), ("ORG", "Torino"), ("LOC", "San Siro"), ("PER", "Simone Inzaghi"), ("PER", "Lautaro Martinez")],
    },
    "ben": {  # the theatre as an organisation, the radio missed
        "concert.txt": [("PER", "Ludovico Einaudi"), ("ORG", "Teatro Dal Verme"), ("LOC", "Milan")],
        "match.txt": [("ORG", "Inter"), ("ORG", "Torino"), ("LOC", "San Siro"), ("PER", "Coach Simone Inzaghi"), ("PER", "Lautaro Martinez")],
    },
    "chen": {  # the teams as places, a surname only
        "concert.txt": [("PER", "Ludovico Einaudi"), ("LOC", "Teatro Dal Verme"), ("LOC", "Milan"), ("ORG", "Radio Popolare")],
        "match.txt": [("LOC", "Inter"), ("LOC", "Torino"), ("LOC", "San Siro"), ("PER", "Inzaghi"), ("PER", "Lautaro Martinez")],
    },
}
TSV_HEADER = "#FORMAT=WebAnno TSV 3.3\n#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value\n\n\n"

# --- crowd-mini: ToxicSpans-shaped tables, four workers, three per comment ----------------------

COMMENTS = {
    "1001": "This is the dumbest plan I have ever read, and the author is a clown.",
    "1002": "Thanks for the detailed answer, it helped a lot.",
    "1003": "Shut up, nobody asked for your stupid opinion.",
    "1004": "If you come near my garden again you will regret it.",
    "1005": "What a load of garbage, honestly.",
}
#: comment -> worker -> spans (an assigned worker without spans marked nothing)
CROWD = {
    "1001": {"w01": [("Insult", "dumbest"), ("Insult", "clown")], "w02": [("Insult", "the author is a clown")], "w03": [("Insult", "dumbest plan")]},
    "1002": {"w01": [], "w03": [], "w04": []},
    "1003": {"w02": [("Insult", "stupid opinion")], "w03": [("Insult", "stupid")], "w04": [("Insult", "Shut up"), ("Insult", "stupid")]},
    "1004": {"w01": [("Threat", "you will regret it")], "w02": [("Threat", "If you come near my garden again you will regret it")], "w04": []},
    "1005": {"w02": [("Insult", "garbage")], "w03": [("Profane", "garbage")], "w04": [("Insult", "load of garbage")]},
}

# --- bio-mini: two annotators' CoNLL files, two documents ---------------------------------------

BIO_DOCS = [
    ["Anna Schmidt flew from Berlin to Lisbon on Monday .", "She will speak at the Lisbon Web Summit next week ."],
    ["The Green Valley Cooperative sells cheese in Lyon .", "Its founder Paul Martin met the mayor of Lyon yesterday ."],
]
BIO = {
    "ayse": [
        [("PER", "Anna Schmidt"), ("LOC", "Berlin"), ("LOC", "Lisbon"), ("MISC", "Lisbon Web Summit")],
        [("ORG", "Green Valley Cooperative"), ("LOC", "Lyon"), ("PER", "Paul Martin"), ("LOC", "Lyon", 2)],
    ],
    "burak": [  # the summit as an organisation, "The" inside the cooperative, the second Lyon missed
        [("PER", "Anna Schmidt"), ("LOC", "Berlin"), ("LOC", "Lisbon"), ("ORG", "Lisbon Web Summit")],
        [("ORG", "The Green Valley Cooperative"), ("LOC", "Lyon"), ("PER", "Paul Martin")],
    ],
}


def locate(text: str, phrase: str, n: int = 1) -> tuple[int, int]:
    """Code-point offsets of the n-th occurrence of ``phrase`` as a whole phrase."""
    found = [m.start() for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)]
    if len(found) < n:
        raise ValueError(f"{phrase!r} (occurrence {n}) not in {text!r}")
    return found[n - 1], found[n - 1] + len(phrase)


def spans(text: str, marks: list[tuple]) -> list[tuple[str, int, int]]:
    out = []
    for label, phrase, *n in marks:
        b, e = locate(text, phrase, *n)
        assert text[b:e] == phrase
        out.append((label, b, e))
    return out


def tokens(sentence: str) -> list[str]:
    return sentence.split(" ")


def tag_tokens(sentences: list[str], chosen: list[tuple[str, int, int]]) -> dict[tuple[int, int], tuple[str, int, int]]:
    """(sentence, token) -> (label, element number from 1, position in the element) for space-separated tokens;
    offsets are those of the sentences joined with newlines."""
    text = "\n".join(sentences)
    tags = {}
    for k, (label, b, e) in enumerate(chosen, 1):
        s = text[:b].count("\n")
        at = sum(len(x) + 1 for x in sentences[:s])
        covered = []
        for t, word in enumerate(tokens(sentences[s])):
            if at < e and at + len(word) > b:
                covered.append(t)
            at += len(word) + 1
        assert covered and " ".join(tokens(sentences[s])[covered[0] : covered[-1] + 1]) == text[b:e]
        for i, t in enumerate(covered):
            tags[(s, t)] = (label, k if len(covered) > 1 else 0, i)
    return tags


def utf16(text: str, i: int) -> int:
    return len(text[:i].encode("utf-16-le")) // 2


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def csv_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def build_brat(out: Path) -> None:
    root = out / "brat-mini"
    write(root / "annotations" / "annotation.conf", BRAT_CONF)
    for who, docs in BRAT.items():
        for doc, marks in docs.items():
            text = BRAT_TEXTS[doc]
            lines = [f"T{k}\t{label} {b} {e}\t{text[b:e]}" for k, (label, b, e) in enumerate(spans(text, marks), 1)]
            write(root / "annotations" / who / f"{doc}.txt", text)
            write(root / "annotations" / who / f"{doc}.ann", "\n".join(lines) + "\n")
    write(root / "study.toml", STUDY["brat"])
    write(root / "README.md", README["brat"])


def build_tsv(out: Path) -> None:
    root = out / "inception-mini"
    for who, docs in TSV.items():
        for doc, marks in docs.items():
            sentences = TSV_TEXTS[doc]
            text = "\n".join(sentences)
            tags = tag_tokens(sentences, spans(text, marks))
            blocks, at = [], 0
            for s, sentence in enumerate(sentences):
                rows = [f"#Text={sentence}"]
                for t, word in enumerate(tokens(sentence)):
                    label, k, _ = tags.get((s, t), ("_", 0, 0))
                    ident = "_" if label == "_" else f"*[{k}]" if k else "*"
                    value = f"{label}[{k}]" if k else label
                    rows.append(f"{s + 1}-{t + 1}\t{utf16(text, at)}-{utf16(text, at + len(word))}\t{word}\t{ident}\t{value}\t")
                    at += len(word) + 1
                blocks.append("\n".join(rows) + "\n")
            write(root / "annotation" / doc / f"{who}.tsv", TSV_HEADER + "\n".join(blocks))
    write(root / "study.toml", STUDY["webanno-tsv"])
    write(root / "README.md", README["webanno-tsv"])


def build_crowd(out: Path) -> None:
    root = out / "crowd-mini"
    write(root / "comments.csv", csv_text([["comment_id", "comment_text"], *([doc, text] for doc, text in COMMENTS.items())]))
    roster, rows, key = [["annotation", "comment_id", "worker"]], [["annotation", "type", "start", "end"]], 0
    for doc, workers in CROWD.items():
        for worker, marks in workers.items():
            roster.append([str(key), doc, worker])
            rows += [[str(key), label, str(b), str(e)] for label, b, e in spans(COMMENTS[doc], marks)]
            key += 1
    write(root / "annotations.csv", csv_text(roster))
    write(root / "spans.csv", csv_text(rows))
    write(root / "study.toml", STUDY["span-table"])
    write(root / "README.md", README["span-table"])


def build_bio(out: Path) -> None:
    root = out / "bio-mini"
    for who, docs in BIO.items():
        lines = []
        for sentences, marks in zip(BIO_DOCS, docs):
            tags = tag_tokens(sentences, spans("\n".join(sentences), marks))
            lines += ["-DOCSTART- O", ""]
            for s, sentence in enumerate(sentences):
                for t, word in enumerate(tokens(sentence)):
                    label, _, i = tags.get((s, t), (None, 0, 0))
                    lines.append(f"{word}\t{'O' if label is None else ('B-' if i == 0 else 'I-') + label}")
                lines.append("")
        write(root / "annotations" / f"{who}.conll", "\n".join(lines))
    write(root / "study.toml", STUDY["conll-bio"])
    write(root / "README.md", README["conll-bio"])


STUDY = {
    "brat": """# A brat project: three annotators (ana, ben, chen), one folder each, three short
# English documents with PER, ORG, LOC and MISC entities. Written for unitize (CC0).
# Run it with `make demo`, or:
#   unitize convert unitize/examples/brat-mini/study.toml --out brat-out
#   unitize agree brat-out

[input]
format = "brat"
annotations = "annotations"          # <annotator>/<doc>.ann with <doc>.txt beside it

[unitize]
units = ["char", "word"]
approaches = ["interval", "boundary"]
modes = ["separate", "labels"]       # a 0/1 matrix (any entity?) and a label matrix (which entity?)
tokenizer = "spacy:en"
""",
    "webanno-tsv": """# An INCEpTION project export (WebAnno TSV 3.3): annotation/<document>/<user>.tsv,
# three annotators (ana, ben, chen), two documents with emoji (offsets in UTF-16).
# Written for unitize (CC0). Run it with `make demo`, or:
#   unitize convert unitize/examples/inception-mini/study.toml --out inception-out
#   unitize agree inception-out

[input]
format = "webanno-tsv"
annotations = "."                    # the export folder (or its .zip): annotation/ is found below it

[unitize]
units = ["word"]                     # the TSV's own tokens (tokenizer "given")
approaches = ["interval", "boundary"]
modes = ["separate", "labels"]
""",
    "span-table": """# A crowd span table shaped like ToxicSpans: comments, an assignment roster and the
# spans, four workers, three per comment (a worker with no span marked nothing).
# Written for unitize (CC0). Run it with `make demo`, or:
#   unitize convert unitize/examples/crowd-mini/study.toml --out crowd-out
#   unitize agree crowd-out

[input]
format = "span-table"
annotations = "spans.csv"            # annotation, type, start, end
texts = "comments.csv"               # comment_id, comment_text
roster = "annotations.csv"           # annotation, comment_id, worker
columns = {doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start"}

[unitize]
units = ["char", "word"]
approaches = ["interval", "boundary"]
tokenizer = "regex"
layout = "long"                      # crowd data: each comment has its own workers (RAT's missing-annotator rule is off)
""",
    "conll-bio": """# A CoNLL BIO pair: one file per annotator (ayse, burak), the same tokens, two
# documents separated by -DOCSTART-. Written for unitize (CC0). Run it with
# `make demo`, or:
#   unitize convert unitize/examples/bio-mini/study.toml --out bio-out
#   unitize agree bio-out

[input]
format = "conll-bio"
annotations = "annotations"          # annotator = file name without extension

[unitize]
units = ["word"]                     # the files' tokens (tokenizer "given")
approaches = ["interval", "boundary"]
modes = ["separate", "labels"]
""",
}

README = {
    "brat": f"""# brat-mini: a brat project, three annotators

{LICENCE}

`annotations/` is a brat project in bratiaa's layout: one folder per annotator
(`ana`, `ben`, `chen`), each holding `<doc>.ann` and a copy of `<doc>.txt`, and
`annotation.conf` (entity types PER, ORG, LOC, MISC). Three documents
(`harbour`, `festival`, `lab`), 37 entities. The disagreements are real ones:

| document | what differs |
|---|---|
| harbour | ben misses *Harbour Street* and splits *Porto Chamber of Commerce* into LOC *Porto* + ORG *Chamber of Commerce*; chen marks *Harbour Street in Porto* as one location |
| festival | ben calls the festival ORG, ana and chen MISC; chen also marks *Cork* inside *Cork City Council* (nested) and only *Aoife* of *Aoife Byrne* |
| lab | ben includes *Dr.* in the name; chen misses *Oslo* |

`study.toml` writes 0/1 matrices (entity or not) and label matrices (which
entity), by characters and by words. Files generated by
`tools/build_span_examples.py` (do not edit by hand).
""",
    "webanno-tsv": f"""# inception-mini: an INCEpTION project export, three annotators

{LICENCE}

The layout of an INCEpTION (or WebAnno) project exported as *WebAnno TSV 3.3*:
`annotation/<document>/<user>.tsv`, here two documents (`concert.txt`,
`match.txt`) annotated by `ana`, `ben` and `chen` on INCEpTION's NamedEntity
layer (features `identifier`, `value`; the label is `value`). Each text holds
an emoji, so the TSV offsets (UTF-16 code units) differ from code points after
it — unitize converts them. Disagreements: ben tags *Teatro Dal Verme* as ORG
and misses *Radio Popolare*, and includes *Coach* in *Coach Simone Inzaghi*;
chen tags the football clubs as LOC and marks only *Inzaghi*.

Units are the TSV's own tokens (`tokenizer = "given"` by default for this
format). Files generated by `tools/build_span_examples.py`.
""",
    "span-table": f"""# crowd-mini: a crowd span table, four workers

{LICENCE}

Three CSV tables shaped like ToxicSpans (Pavlopoulos et al. 2021), so the same
`columns` mapping reads both:

| file | columns | one row per |
|---|---|---|
| `comments.csv` | `comment_id, comment_text` | comment (5) |
| `annotations.csv` | `annotation, comment_id, worker` | assignment of a comment to a worker (15; the roster) |
| `spans.csv` | `annotation, type, start, end` | toxic span (code points, end exclusive) |

Each comment went to three of the four workers (`w01`–`w04`). A worker on the
roster with no span marked nothing (zeros), which is not the same as a worker
not assigned (null). Comment 1002 is harmless and nobody marks anything; the
others show a short and a long reading of one insult, a threat marked by its
consequence or as a whole sentence, and *garbage* as Insult or Profane.
Files generated by `tools/build_span_examples.py`.
""",
    "conll-bio": f"""# bio-mini: a CoNLL BIO pair

{LICENCE}

Two annotators' files over the same tokens, `annotations/ayse.conll` and
`annotations/burak.conll` (token, TAB, IOB2 tag; a blank line between
sentences; `-DOCSTART-` between the two documents, read as `doc00001` and
`doc00002`). burak tags *Lisbon Web Summit* as ORG where ayse has MISC,
includes *The* in *The Green Valley Cooperative* and misses the second *Lyon*.
Files generated by `tools/build_span_examples.py`.
""",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "unitize" / "examples", help="the examples folder")
    out = parser.parse_args().out
    for build in (build_brat, build_tsv, build_crowd, build_bio):
        build(out)


if __name__ == "__main__":
    main()
