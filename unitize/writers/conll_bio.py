"""Write CoNLL BIO token files: ``annotations/<annotator>.conll``, one per annotator, IOB2 tags.

Each document the annotator annotated starts with ``-DOCSTART- -X- O O`` and a CoNLL-U
``# newdoc id = <doc>`` comment that names it; then one ``TOKEN TAG`` line per token, a blank line
after each sentence (a line of the text is a sentence). The tokens are the document's own when its
format gave them, else the source study's tokenizer's; the reader rebuilds the text from them, so
the word units are what is kept. What BIO cannot hold is reported per record: a second layer,
discontinuous or zero-length spans, spans that overlap (also in a token they share), spans that
cover no token, labels with spaces. A span that cuts a word is written as the whole words
(``word-snapped``), as word units see it anyway.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Corpus, Span
from ..model.findings import finding
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import by_submission, word_tokens
from .holds import holdable, not_held

TRAITS = WriterTraits(one_layer=True, discontinuous=False, overlap=False, empty=False, label=r"\S+", text="tokens", empty_documents=False)
_LINE_BREAK = re.compile(r"[\r\n]")


def _sentences(text: str, starts: np.ndarray, ends: np.ndarray) -> list[list[int]] | str:
    """Token indices per sentence (a new sentence where a line break precedes a token), or why the document
    cannot be written as CoNLL lines."""
    sentences: list[list[int]] = []
    for i, (b, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        form = text[b:e]
        if not form or form.split() != [form] or form.startswith("-DOCSTART-"):
            return f"its token {form!r} cannot be a CoNLL token"
        gap = text[ends[i - 1] : b] if i else ""
        if not sentences or (_LINE_BREAK.search(gap) and not form.startswith("#")):
            sentences.append([])
        sentences[-1].append(i)
    if not sentences:
        return "it has no token"
    if text[starts[0] : ends[0]].startswith("#"):
        return "its first token begins with '#', which CoNLL readers take for a comment"
    return sentences


def _tag(tags: list[str], frags: list[Span], starts: np.ndarray, ends: np.ndarray) -> tuple[str | None, bool]:
    """Tag the tokens a span covers (IOB2); why it cannot be (or ``None``), and whether it cuts a word."""
    b, e = frags[0].begin, frags[0].end
    first = int(np.searchsorted(ends, b, side="right"))
    last = int(np.searchsorted(starts, e, side="left")) - 1
    if first > last:
        return "it covers no token", False
    if any(t != "O" for t in tags[first : last + 1]):
        return "it shares a token with another span of the annotator", False
    label = frags[0].label
    tags[first] = "B" if label is None else f"B-{label}"
    for i in range(first + 1, last + 1):
        tags[i] = "I" if label is None else f"I-{label}"
    return None, bool(starts[first] != b or ends[last] != e)


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as CoNLL BIO files, one per annotator, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "conll-bio", preferred_layers=source.get("layers", ()))
    written.take(held)
    files: dict[str, list[str]] = defaultdict(list)
    layouts: dict[str, tuple[np.ndarray, np.ndarray, list[list[int]]] | str] = {}
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        document = corpus.documents.get(doc)
        if doc not in layouts:
            if document is None or document.text is None:
                layouts[doc] = "its text was not read"
            else:
                starts, ends = word_tokens(document, source.get("tokenizer"))
                made = _sentences(document.text, starts, ends)
                layouts[doc] = made if isinstance(made, str) else (starts, ends, made)
        layout = layouts[doc]
        if isinstance(layout, str):  # each record of the document is reported (the accounting counts records)
            written.findings += [not_held("conll-bio", frags, f"its document {doc}: {layout}") for frags in elements] or [
                finding("not-convertible", f"document {doc}: {layout}; CoNLL BIO cannot hold it", "not written", doc=doc, annotator=annotator)]
            continue
        assert document is not None and document.text is not None
        starts, ends, sentences = layout
        tags = ["O"] * len(starts)
        for frags in elements:
            why, snapped = _tag(tags, frags, starts, ends)
            if why is not None:
                written.findings.append(not_held("conll-bio", frags, why))
                continue
            written.spans += 1
            if snapped:
                written.findings.append(
                    finding("word-snapped", f"{frags[0].layer} {frags[0].record!r} cuts a word", "written as the whole words it touches",
                            file=frags[0].source or None, record=frags[0].record, doc=doc, annotator=annotator, layer=frags[0].layer)
                )
        lines = files[annotator]
        # an id a comment line cannot hold as it is (line breaks, spaces at its ends) in its encoded form, mapped back by the study
        named = doc if doc == doc.strip() and not _LINE_BREAK.search(doc) else written.names("documents", doc)
        lines += ["-DOCSTART- -X- O O", f"# newdoc id = {named}", ""]
        for sentence in sentences:
            lines += [f"{document.text[starts[i] : ends[i]]} {tags[i]}" for i in sentence] + [""]
        written.relations += len(elements)
    for annotator, lines in sorted(files.items()):
        name = f"annotations/{written.names('annotators', annotator)}.conll"
        target.file(name).write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
        target.record(name, len(lines))
        written.add_file("annotations")
    written.study = {"format": "conll-bio", "annotations": "annotations", "scheme": "iob2", "layer": held.layer or "Entity"}
    written.unitize["tokenizer"] = "given"
    return written


TARGET = Target("conll-bio", "CoNLL BIO token files, one per annotator (IOB2; # newdoc id names each document)", write, TRAITS, reads_as="conll-bio")
