"""factgenie campaigns: span annotations of generated outputs by people (crowdsourcing) and models (LLM eval).

A campaign is a folder ``campaigns/<id>/`` holding ``metadata.json`` (its ``config`` names the span
categories: ``annotation_span_categories`` = ``[{"name", "color", "description"}, …]``) and
``files/*.jsonl``, one record per (output, annotator)::

    {"dataset": "d2t-eval", "split": "iaa", "setup_id": "phi3-5", "example_idx": 3,
     "annotations": [{"type": 0, "text": "in 2011", "start": 57, "reason": "…"}],
     "metadata": {"annotator_id": "5f…", "annotator_group": 1, …}}

``annotations`` is one campaign folder, a folder of campaigns (factgenie's ``campaigns/``), one of its
``.jsonl`` files, or a campaign's export ZIP. The texts are the generated outputs, ``texts`` = factgenie's
``data/outputs`` (or one of its ``.jsonl`` files): records ``{"dataset", "split", "setup_id",
"example_idx", "output"}``. Records and outputs are matched on (dataset, split, setup_id, example_idx)
as factgenie matches them, each name slugified (``phi3.5`` in an output file is the ``phi3-5`` of the
annotations); the document id is ``dataset/split/setup_id/example_idx`` in that form (``unitize_doc``
of an output record, as ``convert-format --to factgenie`` writes it, when present).

**Annotators** (``annotators_by``): ``group`` — ``<campaign>-anngroup-<annotator_group>``, the identity
factgenie's own agreement code gives (a crowdsourcing campaign's groups are its annotator slots, an LLM
campaign has group 0: the model); ``id`` — ``metadata.annotator_id`` (the worker, or
``<model>-<campaign>``); ``campaign`` — the campaign id (one annotator per campaign).

**Offsets**: a span is ``start`` and its ``text``. factgenie's Python code (the model annotations, its
agreement and statistics) counts code points — ``end = start + len(text)``; its web page counts UTF-16
code units (JavaScript), which differ after a character outside the Basic Multilingual Plane (an
emoji). A span is placed where its text is: at ``start`` counted in code points, else counted in UTF-16
units, else located as a quote nearest ``start`` (:mod:`.locate`: exact, normalized, fuzzy), with a
``quote-…`` finding; a text found nowhere is reported and left out. ``type`` names the category (an
index into the record's or the campaign's categories); a type outside them is reported and left out.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from slugify import slugify

from ..model import Corpus, Span, Submission
from ..model.findings import QUOTE_CODES, UNPLACED, finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB, InputError, load_json, offset_value
from ._spans import GROUP, SPAN_TRAITS, decoded_sources, first_record, json_lines, malformed, put_document
from .files import shown_name
from .locate import FUZZY, MATCHING, NOT_FOUND, Locator
from .sources import Source, annotation_sources

#: outputs and records are UTF-8 JSON lines; offsets are code points (UTF-16 units recognised per span)
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")
#: how a record's annotator is named
ANNOTATORS_BY = ("group", "id", "campaign")
METADATA = "metadata.json"
#: the ``mode`` of a campaign whose annotator is a model (factgenie's ``CampaignMode.LLM_EVAL``)
LLM_EVAL = "llm_eval"

Key = tuple[str, str, str, int]  # (dataset, split, setup_id, example_idx), slugified as factgenie does


@dataclass(frozen=True)
class _Output:
    doc: str
    text: str
    source: str


def read(
    *,
    annotations: Path,
    texts: Path,
    annotators_by: str,
    layer: str,
    matching: str,
    threshold: float,
    annotators: list[str] | None = None,
    max_unzipped_mb: float,
    base: Path | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read factgenie campaigns (see the module docstring)."""
    annotations, texts = Path(annotations), Path(texts)
    for what, path in (("campaign", annotations), ("outputs", texts)):
        if not path.exists():
            raise AdapterError(f"factgenie {what} not found: {path}")
    if annotators_by not in ANNOTATORS_BY:
        raise AdapterError(f"[input] annotators_by must be one of {', '.join(ANNOTATORS_BY)}, not {annotators_by!r}")
    if matching not in MATCHING:
        raise AdapterError(f"[input] matching must be one of {', '.join(MATCHING)}, not {matching!r}")
    base = Path(base) if base is not None else Path.cwd()
    corpus = Corpus(format="factgenie")
    sources = annotation_sources(annotations, base, corpus, (".jsonl", METADATA), max_unzipped_mb)
    campaigns = _campaigns(annotations, [s for s in sources if PurePosixPath(s.inner).name == METADATA], corpus, base)
    outputs = _outputs(texts, base, corpus, max_unzipped_mb)
    placing = _Placing(layer, matching, float(threshold))
    seen: dict[tuple[str, str], str] = {}
    wanted = set(annotators) if annotators else None
    records = [s for s in sources if s.inner.endswith(".jsonl")]
    kept = [s for s in records if _campaign_of(s.inner, annotations) in campaigns]
    for source in (s for s in records if _campaign_of(s.inner, annotations) not in campaigns):
        corpus.findings.append(finding("file-unreadable", f"no {METADATA} of its campaign (the folder above files/)",
                                       "file left out; give the campaign folder, with its metadata.json", file=source.name))
    for source, decoded in decoded_sources((progress or no_progress)(kept, "reading campaigns"), corpus, TEXT):
        campaign = campaigns[_campaign_of(source.inner, annotations)]
        for number, obj in json_lines(decoded.text):
            _record(corpus, source.name, number, obj, campaign, outputs, annotators_by, placing, seen, wanted)
    return corpus


def _campaign_of(inner: str, annotations: Path) -> str:
    """The campaign folder (inside the input) of a record file: the folder above ``files/``."""
    path = PurePosixPath(inner)
    if path.parent.name == "files":
        return str(path.parent.parent)
    if annotations.is_file() and annotations.parent.name == "files":
        return "<file>"  # one record file given: its campaign is the folder above
    return str(path.parent)


def _campaigns(annotations: Path, found: list[Source], corpus: Corpus, base: Path) -> dict[str, dict[str, Any]]:
    """Each campaign's metadata, by its folder inside the input (``.`` for the input itself)."""
    if annotations.is_file() and annotations.suffix == ".jsonl":
        beside = annotations.parent.parent / METADATA
        if not beside.is_file():
            return {}
        found = [Source(shown_name(beside, base, corpus), METADATA, lambda: iter([beside.read_bytes()]))]
    out: dict[str, dict[str, Any]] = {}
    for source, decoded in decoded_sources(found, corpus, TEXT):
        try:
            meta = load_json(decoded.text)
        except InputError as exc:
            malformed(corpus, source.name, exc.line, f"campaign metadata is not JSON: {exc}", "campaign left out; correct the file")
            continue
        if not isinstance(meta, dict) or not isinstance(meta.get("config", {}), dict):
            malformed(corpus, source.name, None, "campaign metadata is not an object with a 'config' object", "campaign left out")
            continue
        folder = str(PurePosixPath(source.inner).parent)
        meta.setdefault("id", PurePosixPath(source.inner).parent.name or annotations.stem)
        out["<file>" if annotations.is_file() and annotations.suffix == ".jsonl" else folder] = meta
    return out


def key_of(obj: dict[str, Any]) -> Key | str:
    """A record's (dataset, split, setup_id, example_idx) as factgenie indexes it (names slugified), or what is wrong."""
    missing = [k for k in ("dataset", "split", "setup_id", "example_idx") if obj.get(k) is None]
    if missing:
        return f"no {', '.join(missing)}"
    idx = obj["example_idx"]
    index = offset_value(idx) if not isinstance(idx, str) else (int(idx) if idx.isdigit() else None)
    if index is None:
        return f"example_idx {idx!r} is not a non-negative integer"
    return slugify(str(obj["dataset"])), slugify(str(obj["split"])), slugify(str(obj["setup_id"])), index


def doc_id(key: Key) -> str:
    """The document id of an output: ``dataset/split/setup_id/example_idx``."""
    return "/".join(map(str, key))


def _outputs(texts: Path, base: Path, corpus: Corpus, max_unzipped_mb: float) -> dict[Key, _Output]:
    """Every generated output of ``texts`` by its key (the first of two records with one key; a different copy reported)."""
    out: dict[Key, _Output] = {}
    for source, decoded in decoded_sources(annotation_sources(texts, base, corpus, (".jsonl",), max_unzipped_mb), corpus, TEXT, role="texts"):
        for number, obj in json_lines(decoded.text):
            key = key_of(obj) if isinstance(obj, dict) else "not an object"
            if isinstance(obj, Exception) or isinstance(key, str) or not isinstance(obj.get("output"), str):
                why = str(obj) if isinstance(obj, Exception) else key if isinstance(key, str) else "no 'output' string"
                malformed(corpus, source.name, number, f"output record: {why}", "output left out; correct the line")
                continue
            doc = str(obj.get("unitize_doc") or doc_id(key))
            if key in out:
                if out[key].text != obj["output"]:
                    corpus.findings.append(finding("duplicate-text", f"a second, different output for {doc} (first in {out[key].source})",
                                                   "the first is used", file=source.name, record=f"line {number}", doc=doc))
                continue
            out[key] = _Output(doc, obj["output"], f"{source.name} line {number}")
    return out


@dataclass(frozen=True)
class _Placing:
    layer: str
    matching: str
    threshold: float


def _record(corpus: Corpus, name: str, number: int, obj: Any, campaign: dict[str, Any], outputs: dict[Key, _Output], by: str,
            placing: _Placing, seen: dict[tuple[str, str], str], wanted: set[str] | None) -> None:
    """One annotation record: its spans placed in its output's text, or reported."""
    key = key_of(obj) if isinstance(obj, dict) else "not an object"
    if isinstance(obj, Exception) or isinstance(key, str):
        malformed(corpus, name, number, f"record {obj if isinstance(obj, Exception) else key}", "record left out; correct the line")
        return
    meta = {**campaign.get("config", {}), **(obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {})}
    who = _annotator(by, campaign, meta)
    spans = obj.get("annotations")
    if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
        malformed(corpus, name, number, "record has no 'annotations' list of objects (an LLM generation record?)", "record left out",
                  annotator=who)
        return
    output = outputs.get(key)
    if output is None:
        corpus.findings.append(finding("raw-text-missing", f"no output {doc_id(key)} in the texts ({len(spans)} span(s))",
                                       "record left out; set [input] texts to factgenie's data/outputs folder", file=name,
                                       record=f"line {number}", doc=doc_id(key), annotator=who))
        return
    if not first_record(corpus, seen, wanted, output.doc, who, name, f"line {number}"):
        return
    put_document(corpus, output.doc, output.text, output.source)
    categories = [c.get("name") if isinstance(c, dict) else c for c in meta.get("annotation_span_categories") or []]
    for k, item in enumerate(spans, 1):
        _span(corpus, output, item, categories, placing, who, name, number, k)
    corpus.submissions.append(Submission(name, who, output.doc, GROUP, len(spans)))
    if campaign.get("mode") == LLM_EVAL:
        corpus.candidates.add(who)


def _annotator(by: str, campaign: dict[str, Any], meta: dict[str, Any]) -> str:
    if by == "campaign":
        return str(campaign["id"])
    if by == "id" and meta.get("annotator_id") not in (None, ""):
        return str(meta["annotator_id"])
    group = meta.get("annotator_group")
    return f"{campaign['id']}-anngroup-{'all' if group is None else group}"


def _span(corpus: Corpus, output: _Output, item: dict[str, Any], categories: list[Any], placing: _Placing, who: str, name: str,
          number: int, k: int) -> None:
    record = f"line {number}/{k}"
    where = {"file": name, "record": record, "doc": output.doc, "group": GROUP, "annotator": who, "layer": placing.layer}
    kind, quote, start = item.get("type", item.get("annotation_type")), item.get("text"), offset_value(item.get("start"))
    index = offset_value(kind) if not isinstance(kind, str) else (int(kind) if kind.isdigit() else None)
    if index is None or index >= len(categories):
        corpus.findings.append(finding("label-undeclared", f"type {kind!r} is none of the {len(categories)} span categories "
                                       "of the campaign", "span left out; correct its type or the campaign's categories", **where))
        return
    if not isinstance(quote, str) or not quote or start is None:
        corpus.findings.append(finding("offset-invalid", f"text {quote!r} at start {item.get('start')!r}: a span needs a non-empty "
                                       "text and a non-negative integer start", "span left out", **where))
        return
    span = Span(who, output.doc, GROUP, record, placing.layer, 0, -1, -1, label=str(categories[index]), source=name, line=number)
    at = _at(output.text, quote, start)
    if at is not None:
        span.begin, span.end = at, at + len(quote)
    else:
        found = Locator(output.text, placing.matching, placing.threshold).locate(quote, None, start)
        code = QUOTE_CODES[found.outcome]
        if found.outcome == NOT_FOUND:
            span.attrs[UNPLACED] = code
            corpus.findings.append(finding(code, f"{json.dumps(quote[:200], ensure_ascii=False)} is neither at {start} nor elsewhere in the "
                                           "output", "span left out; correct its text or start", **where))
        else:
            span.begin, span.end = found.begin, found.end
            corpus.findings.append(finding(code, f"{json.dumps(quote[:200], ensure_ascii=False)} is not at {start}: placed at "
                                           f"{found.begin}-{found.end} ({found.outcome})", "placed where its text is; check it", **where))
    corpus.spans.append(span)


def _at(text: str, quote: str, start: int) -> int | None:
    """Where ``quote`` is in ``text`` if ``start`` counts code points or UTF-16 units (the code-point offset), else None."""
    if text.startswith(quote, start):
        return start
    units = text.encode("utf-16-le")
    if 2 * start <= len(units) and not 0xDC00 <= int.from_bytes(units[2 * start:2 * start + 2] or b"\0\0", "little") <= 0xDFFF:
        point = len(units[:2 * start].decode("utf-16-le"))
        if point != start and text.startswith(quote, point):
            return point
    return None


def suggest(folder: Path, given: dict[str, Any]) -> dict[str, Any]:
    """For ``unitize init``: the campaigns (the folder above every ``metadata.json`` with a ``files/`` folder beside it: a
    campaign, or factgenie's ``campaigns/``) and the outputs (the first ``outputs`` folder holding ``.jsonl`` files)."""
    out: dict[str, Any] = {}
    if "annotations" not in given:
        campaigns = sorted(m.parent for m in folder.rglob(METADATA) if (m.parent / "files").is_dir())
        if campaigns:
            out["annotations"] = campaigns[0] if len(campaigns) == 1 else Path(os.path.commonpath(campaigns))
    if "texts" not in given:
        outputs = sorted((p for p in folder.rglob("outputs") if p.is_dir() and any(p.rglob("*.jsonl"))), key=lambda p: len(p.parts))
        if outputs:
            out["texts"] = outputs[0]
    return out


ADAPTER = Adapter(
    suffixes=(".jsonl", ".zip"),
    name="factgenie",
    text=TEXT,
    description="factgenie campaigns (crowdsourcing and LLM eval): metadata.json + files/*.jsonl, texts from data/outputs",
    read=read,
    suggest=suggest,
    options={
        "annotations": Option("path", None, "a campaign folder, a folder of campaigns (factgenie's campaigns/), one of its "
                              "files/*.jsonl, or a campaign's export ZIP", example="campaigns", required=True),
        "texts": Option("path", None, "factgenie's data/outputs folder (or one .jsonl of outputs)", example="outputs", required=True),
        "annotators_by": Option("str", "group", "who an annotator is: group (<campaign>-anngroup-<n>, as factgenie's agreement), "
                                "id (metadata.annotator_id) or campaign", choices=ANNOTATORS_BY),
        "layer": Option("str", "Entity", "layer name of the spans", example="Error"),
        "matching": Option("str", FUZZY, "a span whose text is not at its start is searched for: exact, normalized or fuzzy",
                           choices=MATCHING),
        "threshold": Option("float", 85.0, "the least fuzzy score (0-100) of such a search"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["llm-eval-anngroup-0"]),
        "max_unzipped_mb": Option(
            "float", MAX_UNZIPPED_MB, "the most an export ZIP may inflate to, in MB", minimum=MIN_UNZIPPED_MB, maximum=MAX_UNZIPPED_MB_LIMIT,
        ),
    },
    traits=replace(SPAN_TRAITS, layers=("Entity",)),
)
