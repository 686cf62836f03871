"""Label Studio JSON exports: a list of tasks, one ``annotations[]`` entry per annotator.

A task is ``{"id", "data": {"text": …}, "annotations": [{"completed_by", "was_cancelled",
"result": […]}]}``. Results with ``value.start``/``value.end`` and ``value.labels``
(type ``labels``, or any ``*labels`` tag) are spans — one per label when a region
carries several; ``relation`` results are kept in the attrs of the regions they join.
The annotator is ``completed_by``: an integer, or an object whose ``email`` (else
``id``) is used. Cancelled annotations are not read (reported). Offsets are code
points of ``data[text_key]`` (``offsets = "utf16"`` for exports of old versions that
counted in JavaScript); each span's ``value.text`` is checked against the task text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model import Corpus, Span, Submission
from ..model.findings import finding
from ..model.text import OFFSET_UNITS, OffsetUnit, TextConventions, is_offset_unit
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import InputError, load_json
from ._spans import (
    GROUP,
    SPAN_TRAITS,
    decode_file,
    is_offset,
    malformed,
    put_document,
    read_input,
    selected,
    to_codepoints,
)
from .files import input_files

#: the text is inside each task (the file's BOM dropped); offsets are code points (the ``offsets`` option: old
#: versions counted UTF-16)
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")


def _annotator(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("email") or value.get("id")
    return None if value is None or isinstance(value, bool) else str(value)


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    encoding: str,
    offsets: str,
    text_key: str,
    layer: str | None = None,
    annotators: list[str] | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read a Label Studio JSON export (a file, or a directory of them)."""
    annotations = Path(annotations)
    if not is_offset_unit(offsets):
        raise AdapterError(f"[input] offsets must be one of {', '.join(OFFSET_UNITS)}, not {offsets!r}")
    base = Path(base) if base is not None else Path.cwd()
    corpus = Corpus(format="label-studio")
    files = input_files(annotations, base, corpus, lambda n: n.endswith(".json"), "Label Studio export")
    wanted = set(annotators) if annotators else None
    seen: dict[tuple[str, str], str] = {}
    for path in (progress or no_progress)(files, "reading annotations"):
        name, raw = read_input(path, base, corpus, "annotations")
        decoded = decode_file(raw, name, corpus, TEXT, encoding=encoding) if raw is not None else None
        if decoded is None:
            continue
        try:
            tasks = load_json(decoded.text)
        except InputError as exc:
            corpus.findings.append(finding("file-unreadable", str(exc), "file left out", file=name, record=f"line {exc.line}"))
            continue
        for t, task in enumerate(tasks if isinstance(tasks, list) else [tasks]):
            _read_task(corpus, task, t, name, _Reading(text_key, offsets, layer, wanted, seen))
    return corpus


@dataclass(frozen=True)
class _Reading:
    """How the tasks of an export are read: the text key, the offset unit, the layer, the annotators asked for;
    ``seen``: (document, annotator) -> the file whose annotation was read."""

    text_key: str
    offsets: OffsetUnit
    layer: str | None
    wanted: set[str] | None
    seen: dict[tuple[str, str], str]


def _read_task(corpus: Corpus, task: Any, t: int, name: str, reading: _Reading) -> None:
    """One task: its text as a document, each of its annotations as an annotator's submission."""
    where = f"task {t + 1}"
    text = task.get("data", {}).get(reading.text_key) if isinstance(task, dict) and isinstance(task.get("data"), dict) else None
    if not isinstance(text, str):
        malformed(corpus, name, None, f"{where} has no string data.{reading.text_key}", "task left out; set [input] text_key")
        return
    doc = str(task.get("id", t + 1))
    put_document(corpus, doc, text, name)
    for a, ann in enumerate(task.get("annotations") if isinstance(task.get("annotations"), list) else ()):
        who = _annotator(ann.get("completed_by")) if isinstance(ann, dict) else None
        record = f"{where}/annotation {a + 1}"
        if who is None:
            malformed(corpus, name, None, f"{record} has no completed_by", "annotation left out", doc=doc)
            continue
        if not selected(corpus, reading.wanted, who):
            continue
        if ann.get("was_cancelled"):
            corpus.findings.append(finding("unknown-element", f"{record} was cancelled", "not read", file=name, record=record, doc=doc, annotator=who))
            continue
        if (doc, who) in reading.seen:
            corpus.findings.append(
                finding("duplicate-record", f"annotator {who} annotated task {doc} twice", "this annotation left out (the first is used)",
                        file=name, record=record, doc=doc, group=GROUP, annotator=who)
            )
            continue
        reading.seen[(doc, who)] = name
        result = ann.get("result")
        if result is not None and not isinstance(result, list):
            malformed(corpus, name, None, f"{record}: 'result' is not a list", "annotation read as empty", doc=doc, annotator=who)
        n = _read_results(corpus, result if isinstance(result, list) else [], text, reading.offsets, who, doc, reading.layer, name, record)
        corpus.submissions.append(Submission(name, who, doc, GROUP, n))



def _read_results(corpus: Corpus, results: list, text: str, offsets: OffsetUnit, who: str, doc: str, layer: str | None, name: str, record: str) -> int:
    links: dict[int | str, list[str]] = {}
    for r in results:
        if isinstance(r, dict) and r.get("type") == "relation":
            kinds = named if isinstance(named := r.get("labels"), list) else []
            desc = f"{'/'.join(map(str, kinds)) or 'relation'} {r.get('from_id')}->{r.get('to_id')}"
            for end in (r.get("from_id"), r.get("to_id")):
                if isinstance(end, (int, str)):
                    links.setdefault(end, []).append(desc)
    regions = [r for r in results if isinstance(r, dict) and isinstance(r.get("value"), dict) and "start" in r["value"]]
    others = sorted({str(r.get("type")) if isinstance(r, dict) else type(r).__name__ for r in results
                     if r not in regions and not (isinstance(r, dict) and r.get("type") == "relation")})
    if others:
        corpus.findings.append(
            finding("unknown-element", f"{record}: results of type {', '.join(others)} are not text spans", "not read",
                    file=name, record=record, doc=doc, annotator=who)
        )
    good = [r for r in regions if is_offset(r["value"]["start"]) and is_offset(r["value"].get("end"))]
    points = iter(to_codepoints(text, [x for r in good for x in (r["value"]["start"], r["value"]["end"])], offsets))
    for i, r in enumerate(regions):
        value = r["value"]
        labels = [v for k, v in value.items() if k.endswith("labels") and isinstance(v, list) for v in v] or [None]
        rec = f"{record}/{r.get('id', i + 1)}"
        span_layer = layer or str(r.get("from_name") or "label")
        if r in good:
            begin, end = next(points), next(points)
        else:
            begin = end = -1
            corpus.findings.append(
                finding("offset-invalid", f"region {rec}: start/end {value.get('start')!r}, {value.get('end')!r} are not non-negative integers",
                        "region left out", file=name, record=rec, doc=doc, group=GROUP, annotator=who, layer=span_layer)
            )
        for label in labels:
            corpus.spans.append(
                Span(who, doc, GROUP, rec if len(labels) == 1 else f"{rec}:{label}", span_layer, 0, begin, end, label=None if label is None else str(label),
                     attrs={"relations": links[r["id"]]} if isinstance(r.get("id"), (int, str)) and r["id"] in links else {},
                     source=name, stored_text=value.get("text") if isinstance(value.get("text"), str) else None)
            )
    return len(regions)


ADAPTER = Adapter(
    suffixes=(".json",),
    name="label-studio",
    text=TEXT,
    description="Label Studio JSON export: tasks with one annotations[] entry per annotator (completed_by)",
    read=read,
    options={
        "annotations": Option("path", None, "a Label Studio JSON export (or a directory of them)", example="export.json", required=True),
        "encoding": Option("str", TEXT.encoding, "encoding of the files"),
        "offsets": Option("str", TEXT.offsets, "codepoint, or utf16 (old versions counted in JavaScript)", choices=OFFSET_UNITS),
        "text_key": Option("str", "text", "key of the text in each task's data"),
        "layer": Option("str", None, "layer of every span (default: the result's from_name, e.g. label)", example="NER"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["1", "2"]),
    },
    traits=replace(SPAN_TRAITS, layers=("label",)),
)
