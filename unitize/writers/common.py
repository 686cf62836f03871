"""What the format writers share: relations rebuilt from span records, raw-text copies, study files."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..findings import finding
from ..model import Corpus, Span
from ..output import OutputDir
from ..text import TextConventions, natural_key
from . import Written
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


def safe_name(name: str) -> bool:
    """Whether ``name`` can be one path component."""
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..") and "\0" not in name


class Texts:
    """The target views of the corpus's documents, each read once; copies the raw files to ``texts/``."""

    def __init__(self, corpus: Corpus, base: Path, target: OutputDir, written: Written, conventions: TextConventions):
        self.corpus, self.base, self.target, self.written = corpus, base, target, written
        self.conventions = conventions
        self._views: dict[str, TargetText | None] = {}

    def get(self, doc_id: str) -> TargetText | None:
        if doc_id in self._views:
            return self._views[doc_id]
        doc = self.corpus.documents.get(doc_id)
        view = target_text(doc, self.base, self.conventions) if doc else "it was never read"
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
        if not safe_name(doc_id):
            self.written.findings.append(
                finding("not-convertible", f"document id {doc_id!r} cannot be a file name", "its annotations were not written", doc=doc_id)
            )
            self._views[doc_id] = None
            return None
        relative = f"texts/{doc_id}.txt"
        self.target.file(relative).write_bytes(view.raw)
        self.target.record(relative, None)
        self.written.files["texts"] = self.written.files.get("texts", 0) + 1
        self._views[doc_id] = view
        return view


def toml_value(value: Any) -> str:
    """A TOML literal for a string, integer, boolean or list of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML literal for {value!r}")


def study_toml(input_table: dict[str, Any], unitize_table: dict[str, Any], comment: str) -> str:
    """A study file: ``[input]`` (a nested dict becomes a sub-table) and ``[unitize]``."""
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
    return "\n".join(lines) + "\n"


def encodings(corpus: Corpus) -> dict[str, str]:
    """``encoding`` (and ``encoding_fallback``) that read the copied texts back as they were read."""
    seen = sorted({d.encoding for d in corpus.documents.values() if d.encoding})
    if not seen:
        return {}
    main = "utf-8" if "utf-8" in seen else seen[0]
    others = [e for e in seen if e != main]
    return {"encoding": main, **({"encoding_fallback": others[0]} if others else {})}
