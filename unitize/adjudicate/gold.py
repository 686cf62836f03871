"""The gold as a model :class:`~unitize.model.Corpus`, and written in an annotation format.

The gold is one more annotator (``gold`` unless named otherwise) of the output directory's
documents: its spans are the gold spans (:class:`~.votes.GoldSpan`), in characters of the
document text as ``documents.parquet`` holds it; item data gives its item labels. Optionally
the original annotators come along, as unitize resolved them (``segments/<unit>.parquet``:
overlaps merged, selections snapped to words), so the written study holds the gold beside
the annotators, in the same unit space.

Relation formats (whose annotators give relations, the traits' ``count_rule``) pair the gold
spans of one (group, document) into relations by their rank in the text: the first ``Arg1``
with the first ``Arg2``. Other formats give every gold span a record of its own. An output
directory holds no relation types or senses, so where the format groups by connective the
relations (the annotators' too) say their group as the inserted connective of an ``Implicit``
relation: the files read back into the same groups.

Writing goes through the writer registry (:func:`unitize.writers.writers`), so every format a
writer exists for is a target. Raw texts are copied from where the study read them when
they are still there unchanged (their sha256 is in ``documents.parquet``); otherwise the
text ``documents.parquet`` holds is written as UTF-8.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..dataset.directory import OutputData, Setting
from ..model import Corpus, Document, ItemLabel, Span, Submission
from ..model.traits import FormatTraits
from .votes import GoldSpan

SOURCE = "adjudication"


def study_base(data: OutputData) -> Path | None:
    """The folder the study's relative paths start from (its study file's folder), when the manifest says."""
    source = data.manifest.get("settings", {}).get("source")
    return Path(source).parent if isinstance(source, str) and Path(source).is_absolute() else None


def documents(data: OutputData, scratch: Path) -> tuple[dict[str, Document], int]:
    """The documents with their texts, and how many texts had to be written from ``documents.parquet``
    into ``scratch`` (their raw file gone or changed)."""
    base = study_base(data)
    out: dict[str, Document] = {}
    rewritten = 0
    for k, row in enumerate(data.documents()):
        text = row.get("text")
        raw = base / row["source"] if base is not None and row.get("source") else None
        if raw is not None and raw.is_file() and hashlib.sha256(raw.read_bytes()).hexdigest() == row.get("sha256"):
            out[row["doc_id"]] = Document(row["doc_id"], text, str(raw), row.get("encoding"), row.get("newline"),
                                          bool(row.get("bom")), row.get("bytes"), row.get("sha256"))
            continue
        if text is None:
            out[row["doc_id"]] = Document(row["doc_id"], None)
            continue
        path = scratch / f"{k}.txt"
        path.write_bytes(text.encode("utf-8"))
        rewritten += 1
        out[row["doc_id"]] = Document(row["doc_id"], text, str(path), "utf-8", None, False, path.stat().st_size)
    return out, rewritten


def _attrs(traits: FormatTraits, group: str) -> dict[str, Any]:
    """A relation's attributes where the format groups by connective: the group as the inserted connective."""
    return {"type": "Implicit", "inserted": group} if traits.count_rule and traits.group_by == "connective" else {}


def _records(spans: list[GoldSpan], relations: bool) -> list[str]:
    """A record id per gold span: relations pair by rank within (group, document, layer)."""
    rank: dict[tuple[str, ...], int] = defaultdict(int)
    out = []
    for g in spans:
        key = (g.group, g.doc, g.layer) if relations else (g.group, g.doc)
        rank[key] += 1
        out.append(f"gold-{rank[key]}")
    return out


def span_corpus(data: OutputData, setting: Setting, spans: list[GoldSpan], name: str, with_annotators: bool,
                scratch: Path) -> tuple[Corpus, int]:
    """Unit data: the gold (and the annotators) as a corpus; how many texts came from ``documents.parquet``."""
    traits = data.traits
    docs, rewritten = documents(data, scratch)
    ordered = sorted(spans, key=lambda g: (g.group, g.doc, g.begin, g.end, g.layer, g.label or ""))
    corpus = Corpus(format=str(data.manifest.get("settings", {}).get("format") or "unitize"), documents=docs, traits=traits)
    for g, record in zip(ordered, _records(ordered, traits.count_rule)):
        corpus.spans.append(Span(name, g.doc, g.group, record, g.layer, 0, g.begin, g.end, g.label, _attrs(traits, g.group), SOURCE))
    present = data.universe.annotators()
    per_doc: dict[tuple[str, str], int] = defaultdict(int)
    for s in corpus.spans:
        per_doc[(s.group, s.doc_id)] += 1
    for (group, doc), annotators in sorted(present.items()):
        if annotators:
            corpus.submissions.append(Submission(SOURCE, name, doc, group, per_doc[(group, doc)]))
    if with_annotators:
        _add_annotators(data, setting, corpus, present)
    return corpus, rewritten


def _add_annotators(data: OutputData, setting: Setting, corpus: Corpus, present: dict[tuple[str, str], list[str]]) -> None:
    """The annotators' resolved segments of the setting's unit type, and a submission wherever they have data."""
    table = data.segments(setting.unit) if setting.unit else None
    counts: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    if table is not None:
        columns = [table.column(c).to_pylist() for c in ("group", "doc_id", "layer", "annotator", "label", "begin", "end", "records")]
        for k, (group, doc, layer, annotator, label, begin, end, records) in enumerate(zip(*columns)):
            record = records[0] if records else f"segment-{k}"
            corpus.spans.append(Span(annotator, doc, group, record, layer, 0, begin, end, label, _attrs(corpus.traits, group), SOURCE))
            counts[(annotator, group, doc)].add(record)
    for (group, doc), annotators in sorted(present.items()):
        for annotator in annotators:
            corpus.submissions.append(Submission(SOURCE, annotator, doc, group, len(counts[(annotator, group, doc)])))


def item_corpus(data: OutputData, gold: dict[tuple[str, str], str | None], name: str, own: list[ItemLabel] | None) -> Corpus:
    """Item data: the gold labels (and the annotators' own, when given) as a corpus of item labels."""
    corpus = Corpus(format=str(data.manifest.get("settings", {}).get("format") or "labels"), traits=data.traits)
    corpus.items = [ItemLabel(group, item, name, label, source=SOURCE) for (group, item), label in gold.items()] + list(own or [])
    return corpus


def source_settings(data: OutputData) -> dict[str, Any]:
    """What a writer may read of the study's settings (as ``convert-format`` passes them)."""
    settings = data.manifest.get("settings", {})
    return {"group_by": data.traits.group_by, **(settings.get("input") or {})}
