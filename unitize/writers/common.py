"""What the format writers share: relations rebuilt from span records, raw-text copies, study files."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import AdapterError, get_adapter
from ..config.options import dump_string
from ..config.sections import UNITIZE_OPTIONS
from ..model import Corpus, Document, Span
from ..model.findings import finding
from ..model.text import TextConventions, natural_key
from ..output import OutputDir
from ..units.tokenize import get_tokenizer
from . import Written
from .holds import elements
from .offsets import TargetText, target_text


@dataclass
class RelationOut:
    """One relation to write: its spans by layer, in fragment order."""

    record: str
    line: int | None
    attrs: dict[str, Any]
    label: str | None
    layers: dict[str, list[Span]] = field(default_factory=dict)


def relations(corpus: Corpus) -> dict[tuple[str, str, str], list[RelationOut]]:
    """(annotator, doc, group) -> its relations in source order, for every submission (empty ones too)."""
    out: dict[tuple[str, str, str], dict[str, RelationOut]] = defaultdict(dict)
    for sub in corpus.submissions:
        out[(sub.annotator, sub.doc_id, sub.group)]
    for span in corpus.spans:
        rels = out[(span.annotator, span.doc_id, span.group)]
        rel = rels.get(span.record)
        if rel is None:
            rel = rels[span.record] = RelationOut(span.record, span.line, span.attrs, span.label)
        rel.layers.setdefault(span.layer, []).append(span)
    return {
        key: sorted(rels.values(), key=lambda r: (r.line if r.line is not None else -1, natural_key(r.record)))
        for key, rels in sorted(out.items())
    }


def raw_file_texts(fmt: str) -> bool | None:
    """Whether the documents of a corpus read as format ``fmt`` came from raw text files (``None``: unknown format)."""
    try:
        conventions = get_adapter(fmt).text
    except AdapterError:
        return None
    return None if conventions is None else bool(conventions.suffixes)


class Texts:
    """The target views of the corpus's documents, each read once; with ``copy``, the texts are written to
    ``texts/<doc>.txt`` (raw files byte for byte; ``nested``: document ids may hold ``/``)."""

    def __init__(self, corpus: Corpus, base: Path, target: OutputDir, written: Written, conventions: TextConventions,
                 *, copy: bool = True, nested: bool = False):
        self.corpus, self.base, self.target, self.written = corpus, base, target, written
        self.conventions, self.copy, self.nested = conventions, copy, nested
        self.raw_file = raw_file_texts(corpus.format)
        self._annotation_files = {sub.source for sub in corpus.submissions}
        self._views: dict[str, TargetText | None] = {}

    def get(self, doc_id: str) -> TargetText | None:
        """The document's view in the target's conventions; ``None`` (and a finding, once) when it has none."""
        if doc_id in self._views:
            return self._views[doc_id]
        doc = self.corpus.documents.get(doc_id)
        raw_file = self.raw_file
        if raw_file and doc is not None and doc.source in self._annotation_files:
            raw_file = False  # its text came in the annotation file (a quote record's own text), not from a raw file
        view = target_text(doc, self.base, self.conventions, raw_file=raw_file) if doc else "it was never read"
        if isinstance(view, str):
            self.written.findings.append(
                finding(
                    "not-convertible",
                    f"document {doc_id}: {view}, so its offsets cannot be converted",
                    "its annotations were not written; give the raw texts ([input] texts)",
                    doc=doc_id,
                )
            )
            self._views[doc_id] = None
            return None
        if self.copy:
            relative = f"texts/{self.written.names('documents', doc_id, nested=self.nested)}.txt"
            self.target.file(relative).write_bytes(view.raw)
            self.target.record(relative, None)
            self.written.add_file("texts")
        self._views[doc_id] = view
        return view


def toml_value(value: Any) -> str:
    """A TOML literal for a string, integer, boolean or list of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_value(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return dump_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML literal for {value!r}")


def study_toml(input_table: dict[str, Any], unitize_table: dict[str, Any], comment: str, extra: dict[str, dict[str, Any]] | None = None) -> str:
    """A study file: ``[input]`` (a nested dict becomes a sub-table), ``[unitize]`` and ``extra`` tables (their
    dict values inline tables)."""
    lines = [f"# {comment}", "", "[input]"]
    tables = []
    for key, value in input_table.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif value is not None:
            lines.append(f"{key} = {toml_value(value)}")
    for key, table in tables:
        lines += ["", f"[input.{key}]"] + [f"{toml_value(k)} = {toml_value(v)}" for k, v in table.items()]
    if unitize_table:
        lines += ["", "[unitize]"] + [f"{k} = {toml_value(v)}" for k, v in unitize_table.items()]
    for name, table in (extra or {}).items():
        if table:
            lines += ["", f"[{name}]"] + [f"{toml_value(str(k))} = {toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


def encodings(corpus: Corpus, *, utf8_first: bool = False) -> dict[str, str]:
    """``encoding`` (and ``encoding_fallback``) that read the copied texts back as they were read; ``utf8_first``:
    UTF-8 is the encoding whatever the texts' (a format whose annotation files, written in UTF-8, are read in it
    too), theirs the fallback."""
    seen = sorted({d.encoding for d in corpus.documents.values() if d.encoding})
    if utf8_first:
        seen = ["utf-8", *seen]
    if not seen:
        return {}
    main = "utf-8" if "utf-8" in seen else seen[0]
    others = [e for e in seen if e != main]
    return {"encoding": main, **({"encoding_fallback": others[0]} if others else {})}


def by_submission(corpus: Corpus, spans: list[Span]) -> dict[tuple[str, str], list[list[Span]]]:
    """(annotator, doc) -> its elements (each a list of fragments) in text order, for every submission of the
    corpus (an annotator who marked nothing gets an empty list); groups are merged (span-tool formats have none)."""
    out: dict[tuple[str, str], list[list[Span]]] = {(s.annotator, s.doc_id): [] for s in corpus.submissions}
    for frags in elements(spans).values():
        out.setdefault((frags[0].annotator, frags[0].doc_id), []).append(frags)
    for found in out.values():
        found.sort(key=lambda f: (f[0].begin, f[-1].end, f[0].layer, f[0].label or "", natural_key(f[0].record)))
    return dict(sorted(out.items()))


def numeric_id(value: str) -> int | str:
    """An id as the integer it spells when it spells one exactly (``"12"``; not ``"012"``), else as it is:
    tools that number their tasks and documents get numbers back."""
    return int(value) if value.isascii() and value.isdigit() and str(int(value)) == value and len(value) < 19 else value


def word_tokens(doc: Document, spec: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A document's word units as code-point ``(starts, ends)``: its own tokens when its format gave them, else
    those of the tokenizer ``spec`` (the source study's; the built-in default when it has none)."""
    if doc.tokens is not None:
        return doc.tokens
    name = spec if spec and spec != "given" else UNITIZE_OPTIONS["tokenizer"].default
    return get_tokenizer(name)(doc.text or "")


#: one document's JSON record of a JSON-Lines writer: (annotator, document id, its text view, the elements'
#: target offsets, the elements) -> (the record, the spans it holds)
JsonRecord = Callable[[str, str, TargetText, list[list[int]], list[list[Span]]], tuple[dict[str, Any], int]]


def write_jsonl_per_annotator(corpus: Corpus, target: OutputDir, base: Path, written: Written, spans: list[Span], text: TextConventions,
                              record: JsonRecord) -> None:
    """``annotations/<annotator>.jsonl``: one JSON record per (annotator, document) that holds spans, text embedded
    (doccano's and the quote records' shape); the spans and files counted in ``written``."""
    texts = Texts(corpus, base, target, written, text, copy=False)
    lines: dict[str, list[str]] = defaultdict(list)
    for (annotator, doc), found in by_submission(corpus, spans).items():
        view = texts.get(doc)
        if view is None:
            continue
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in found], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        payload, n = record(annotator, doc, view, offsets, found)
        lines[annotator].append(json.dumps(payload, ensure_ascii=False))
        written.spans += n
        written.relations += n
    for annotator, records in sorted(lines.items()):
        name = f"annotations/{written.names('annotators', annotator)}.jsonl"
        target.file(name).write_text("".join(line + "\n" for line in records), encoding="utf-8", newline="\n")
        target.record(name, len(records))
        written.add_file("annotations")


#: entity colours, distinct and light enough for black text (brat's own examples use such)
_COLOURS = ("#8fb2ff", "#ffccaa", "#a4e57e", "#f1f447", "#e3a6ff", "#7fe2ff", "#ffa5c0", "#c7c7c7", "#b4f0c8", "#ffd27f",
            "#c2b8ff", "#f0b4b4")


#: what XML 1.0 cannot hold, as a regular expression's character class: control characters but tab, line feed and
#: carriage return; U+FFFE, U+FFFF; lone surrogates
XML_EXCLUDED = r"\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff"
XML_INVALID = re.compile(f"[{XML_EXCLUDED}]")
#: a label an XML file can hold: the ``WriterTraits.label`` of the writers that write one
XML_LABEL = f"[^{XML_EXCLUDED}]*"


def xml_ok(text: str) -> bool:
    """Whether an XML file (lxml, cassis) can hold ``text``."""
    return XML_INVALID.search(text) is None


def colour(k: int) -> str:
    """The ``k``-th of distinct colours for labels (brat's visual.conf, factgenie's span categories)."""
    if k < len(_COLOURS):
        return _COLOURS[k]
    import colorsys

    r, g, b = colorsys.hsv_to_rgb((k * 0.618033988749895) % 1.0, 0.35, 1.0)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
