"""A TSV unitize writes, read the way INCEpTION reads it (issue 33, item 1).

INCEpTION's TSV 3.x reader rebuilds the document text from the ``#Text=`` lines, undoing only the escapes of
``Escaping.unescapeText`` (a doubled backslash, ``\\t \\n \\r \\f \\b``); ``[ ] | _ ; * ->`` are escaped in token
forms and feature values only. This test rebuilds the text that way, independently of unitize's reader, and checks
that every token row's offsets (UTF-16 code units) hold its form.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import CORPORA, needs_shared
from unitize.config import Settings
from unitize.model import Corpus, Document, Span, Submission
from unitize.run import read_corpus
from unitize.run.conversion import write_corpus

_TEXT = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r", "\\f": "\f", "\\b": "\b"}
_ROW = re.compile(r"^(\d+)-(\d+)(?:\.\d+)?\t(\d+)-(\d+)\t([^\t]*)\t")


def inception_text_and_rows(tsv: str) -> tuple[str, list[tuple[int, int, str, bool]]]:
    """The document text as INCEpTION rebuilds it, and each row's (begin, end, form, sub-token)."""
    text, rows, sentence = "", [], []
    for line in tsv.split("\n") + [""]:
        if line.startswith("#Text="):
            sentence.append(re.sub(r"\\[\\tnrfb]", lambda m: _TEXT[m.group()], line[len("#Text="):]))
            continue
        m = _ROW.match(line)
        if m and sentence:  # a sentence's first row: its text starts at the row's begin
            begin = int(m.group(3))
            units = len(text.encode("utf-16-le")) // 2
            if begin == units - 1 and text.endswith("\n"):
                text = text[:-1]
            else:
                assert begin >= units, f"a sentence starts at {begin}, inside the text before it ({units})"
                text += " " * (begin - units)
            text += "\n".join(sentence) + "\n"
            sentence = []
        if m:
            form = re.sub(r"\\(->|[\\\[\]|_;*\t\n])", lambda x: x.group(1), m.group(5))
            rows.append((int(m.group(3)), int(m.group(4)), form, "." in line.split("\t")[0]))
    return text, rows


def misplaced(folder: Path) -> tuple[int, int]:
    """(token rows, rows whose offsets do not hold their form) over every TSV under ``folder``."""
    total = bad = 0
    for path in sorted(folder.rglob("*.tsv")):
        text, rows = inception_text_and_rows(path.read_text(encoding="utf-8"))
        units = text.encode("utf-16-le")
        for begin, end, form, sub in rows:
            if sub:
                continue
            total += 1
            bad += units[2 * begin : 2 * end].decode("utf-16-le") != form
    return total, bad


def test_reserved_characters_in_the_text_keep_every_token_in_place(tmp_path: Path) -> None:
    text = "x_y [a] b;c *d* e->f C:\\x\tg|h\n"
    corpus = Corpus(format="span-table", documents={"d": Document("d", text)},
                    spans=[Span("ann", "d", "all", "1", "span", 0, 4, 7, label="L")], submissions=[Submission("s", "ann", "d", "all", 1)])
    from unitize.adapters import get_adapter

    corpus.traits = get_adapter("span-table").traits
    write_corpus(corpus, "webanno-tsv", tmp_path / "out")
    tsv = next((tmp_path / "out").rglob("*.tsv")).read_text(encoding="utf-8")
    assert "#Text=x_y [a] b;c *d* e->f C:\\\\x\\tg|h" in tsv
    rebuilt, _ = inception_text_and_rows(tsv)
    assert rebuilt == text
    total, bad = misplaced(tmp_path / "out")
    assert total > 5 and bad == 0
    back = read_corpus(Settings(format="webanno-tsv", input={"annotations": tmp_path / "out" / "annotations"}, base=tmp_path))
    assert back.documents["d"].text == text and [(s.begin, s.end, s.label) for s in back.spans] == [(4, 7, "L")]


@needs_shared
@pytest.mark.parametrize("project", ["bratiaa-example/example-files/example-project", "format-samples/label-studio"])
def test_shared_projects_written_as_tsv_misplace_no_token(tmp_path: Path, project: str) -> None:
    source = CORPORA / project
    fmt = "brat" if "bratiaa" in project else "label-studio"
    settings = Settings(format=fmt, input={"annotations": source}, base=source)
    write_corpus(read_corpus(settings), "webanno-tsv", tmp_path / "tsv", settings=settings)
    total, bad = misplaced(tmp_path / "tsv")
    assert total > 1000 and bad == 0
