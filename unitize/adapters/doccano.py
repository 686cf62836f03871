"""doccano JSONL exports (sequence labelling), every version's shape.

One JSON object per line (a ``.json`` file holding one object or a list is read too):

- current: ``{"id", "text", "label": [[start, end, "LABEL"], …]}``;
- with relations: ``{"text", "entities": [{"id", "label", "start_offset", "end_offset"}], "relations": […]}``;
- v1.0: ``{"id", "text", "annotations": [{"label", "start_offset", "end_offset", "user"}]}``
  (all users in one file: the annotator is ``user``);
- v1.0–1.5 text label: ``{"text", "labels": [[start, end, "LABEL"], …]}``.

Annotators: the ``user`` of each annotation when present, else the file name without
extension — the per-user export ZIP holds one ``<username>.jsonl`` per member (read
from a directory or the ZIP itself). A collaborative export (one ``all.jsonl``) has
lost who annotated what. Documents are named by ``id``, else by a hash of their text
(so the users' files line up). Offsets are code points (``offsets = "utf16"`` for
exports made by early, JavaScript-counting versions). Relations are kept in the
attrs of the entities they join; text-classification labels are not spans (reported, with
how to read them as flat labels: format ``labels``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..model import Corpus, Span, Submission
from ..model.findings import finding
from ..model.text import OFFSET_UNITS, OffsetUnit, TextConventions, is_offset_unit
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB, InputError, load_json
from ._spans import (
    GROUP,
    SPAN_TRAITS,
    decoded_sources,
    first_record,
    is_offset,
    json_lines,
    malformed,
    put_document,
    to_codepoints,
)
from .sources import annotation_sources

#: the text is inside each record (the file's BOM dropped); offsets are code points (the ``offsets`` option: early
#: versions counted UTF-16)
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")
#: what to do with text-classification records (doccano's other export kind)
CLASSIFICATION_HINT = (
    "not read as spans; read a text-classification export as flat labels: --format labels --shape per-annotator "
    "--item id --label-columns label (--item text when the records have no id)"
)


def _records(text: str) -> Iterator[tuple[int, Any]]:
    """(line, object) of a JSONL text, or of a JSON document holding one object or a list; (line, error) when not JSON."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = load_json(text)
        except InputError as exc:
            yield exc.line, exc
            return
        yield from ((1, obj) for obj in data)
        return
    try:
        yield 1, load_json(text)  # one pretty-printed object
        return
    except InputError:
        pass
    yield from json_lines(text)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _entities(obj: dict) -> tuple[list[tuple[Any, Any, Any, Any, str | None]], bool]:
    """(start, end, label, user, id) of every span of a record, and whether it held class labels."""
    out: list = []
    classes = False
    for key in ("label", "labels"):
        if obj.get(key) is not None and not isinstance(obj.get(key), list):
            classes = True  # a single class label
        for item in _list(obj.get(key)):
            if isinstance(item, (list, tuple)) and len(item) == 3:
                out.append((item[0], item[1], item[2], None, None))
            else:
                classes = True
    for item in _list(obj.get("entities")):
        if not isinstance(item, dict):
            classes = True
            continue
        out.append((item.get("start_offset"), item.get("end_offset"), item.get("label"), item.get("user"), item.get("id")))
    for item in _list(obj.get("annotations")):
        if isinstance(item, dict) and "start_offset" in item:
            out.append((item.get("start_offset"), item.get("end_offset"), item.get("label"), item.get("user"), item.get("id")))
        else:
            classes = True
    return out, classes


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    encoding: str,
    offsets: str,
    layer: str,
    annotators: list[str] | None = None,
    max_unzipped_mb: float,
    progress: Progress | None = None,
) -> Corpus:
    """Read doccano exports: a .jsonl file, a directory of per-user files, or the export ZIP."""
    annotations = Path(annotations)
    if not annotations.exists():
        raise AdapterError(f"doccano input not found: {annotations}")
    if not is_offset_unit(offsets):
        raise AdapterError(f"[input] offsets must be one of {', '.join(OFFSET_UNITS)}, not {offsets!r}")
    base = Path(base) if base is not None else Path.cwd()
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="doccano")
    seen: dict[tuple[str, str], str] = {}
    sources = annotation_sources(annotations, base, corpus, (".jsonl", ".json"), max_unzipped_mb)
    for source, decoded in decoded_sources((progress or no_progress)(sources, "reading annotations"), corpus, TEXT, encoding=encoding):
        name, file_user = source.name, Path(source.inner).stem
        for number, obj in _records(decoded.text):
            if isinstance(obj, Exception) or not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                why = str(obj) if isinstance(obj, Exception) else "not an object with a string 'text'"
                malformed(corpus, name, number, f"record {why}", "record left out; correct the line")
                continue
            text = obj["text"]
            doc = str(obj["id"]) if "id" in obj else "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
            put_document(corpus, doc, text, name)
            entities, classes = _entities(obj)
            if classes:
                corpus.findings.append(finding("unknown-element", "the record holds text-classification labels (a category per text), not spans",
                                               CLASSIFICATION_HINT, file=name, record=f"line {number}", doc=doc))
            users = {str(u) if u is not None else file_user for *_, u, _ in entities} or {file_user}
            links = _relations(obj)
            for who in sorted(users):
                if not first_record(corpus, seen, wanted, doc, who, name, f"line {number}"):
                    continue
                mine = [e for e in entities if (str(e[3]) if e[3] is not None else file_user) == who]
                _add_spans(corpus, mine, text, offsets, who, doc, layer, name, number, links)
                corpus.submissions.append(Submission(name, who, doc, GROUP, len(mine)))
    return corpus


def _relations(obj: dict) -> dict[Any, list[str]]:
    links: dict[Any, list[str]] = {}
    for rel in _list(obj.get("relations")):
        if isinstance(rel, dict):
            desc = f"{rel.get('type')} {rel.get('from_id')}->{rel.get('to_id')}"
            for end in (rel.get("from_id"), rel.get("to_id")):
                if isinstance(end, (int, str)):
                    links.setdefault(end, []).append(desc)
    return links


def _add_spans(corpus: Corpus, entities: list, text: str, offsets: OffsetUnit, who: str, doc: str, layer: str, name: str, number: int, links: dict) -> None:
    readable = [k for k, e in enumerate(entities) if is_offset(e[0]) and is_offset(e[1])]
    points = dict(zip(readable, zip(*[iter(to_codepoints(text, [x for k in readable for x in entities[k][:2]], offsets))] * 2)))
    for k, (start, end, label, _, ident) in enumerate(entities):
        record = f"line {number}/{k + 1}"
        label = None if label is None else str(label)
        if k in points:
            attrs = {"relations": links[ident]} if isinstance(ident, (int, str)) and ident in links else {}
            begin, stop = points[k]
            corpus.spans.append(Span(who, doc, GROUP, record, layer, 0, begin, stop, label=label, attrs=attrs, source=name, line=number))
            continue
        corpus.spans.append(Span(who, doc, GROUP, record, layer, 0, -1, -1, label=label, source=name, line=number))
        corpus.findings.append(
            finding("offset-invalid", f"span {k + 1}: offsets {start!r}, {end!r} are not non-negative integers", "span left out",
                    file=name, record=record, doc=doc, group=GROUP, annotator=who, layer=layer)
        )


ADAPTER = Adapter(
    suffixes=(".jsonl", ".json", ".zip"),
    name="doccano",
    text=TEXT,
    description="doccano JSONL exports (label tuples, entities, v1.0 annotations with user); per-user files, directory or ZIP",
    read=read,
    options={
        "annotations": Option("path", None, "a .jsonl (or .json) export, a directory of <user>.jsonl files, or the export ZIP",
                              example="export.zip", required=True),
        "encoding": Option("str", TEXT.encoding, "encoding of the files"),
        "offsets": Option("str", TEXT.offsets, "codepoint, or utf16 (early JavaScript-counting versions)", choices=OFFSET_UNITS),
        "layer": Option("str", "Entity", "layer name of the spans", example="NER"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "max_unzipped_mb": Option(
            "float", MAX_UNZIPPED_MB, "the most an export ZIP may inflate to, in MB; larger or bomb-like members are reported, not read",
            minimum=MIN_UNZIPPED_MB, maximum=MAX_UNZIPPED_MB_LIMIT,
        ),
    },
    traits=replace(SPAN_TRAITS, layers=("Entity",)),
)
