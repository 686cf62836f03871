"""Conversion between annotation formats, with the model as the pivot.

``convert_format`` reads any input the adapters know, checks offsets against the raw texts,
and writes the records in any format a writer is declared for (:mod:`unitize.writers`), with
the texts, a ``study.toml`` that reads the result back, ``report.jsonl`` and ``manifest.json``.
Spans whose offsets are invalid are not written; every record the target cannot hold is a
``not-convertible`` finding of its own, counted in the manifest. A conversion that writes
nothing usable fails and leaves nothing behind; an existing output is replaced only with
``force``.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._version import __version__
from ..adapters import get_adapter
from ..config import Settings
from ..config.sections import ASSIGNMENT_ALL, ASSIGNMENT_PER_DOCUMENT
from ..errors import RunError
from ..model import Corpus, Finding
from ..model.findings import ERROR, count_by_severity, sort_key, top_codes
from ..output import OutputDir, atomic_write_text, claim_output, input_rows, run_section
from ..runtime.progress import Progress
from ..schema import FORMAT_VERSION
from ..spans.run import per_document
from ..validate import check_spans
from ..writers import Target, WriterError, Written, available, get_target
from ..writers.common import study_toml
from .pipeline import read_corpus

#: what a conversion output directory holds (and a rerun replaces)
OWNED = ("annotations", "texts", "study.toml", "report.jsonl", "manifest.json")
_BUILTIN = Settings.__dataclass_fields__


def targets() -> list[str]:
    """The formats ``convert_format`` can write."""
    return sorted(available())


def convert_format(
    settings: Settings,
    to: str,
    out: Path,
    *,
    strict: bool = False,
    force: bool = False,
    options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> tuple[Corpus, list[Finding], dict[str, Any] | None]:
    """Read the input of ``settings`` and write it as format ``to`` (with the writer's ``options``) into ``out``.

    Returns the corpus, every finding (reading, offsets, conversion) and the manifest (``None`` when
    ``strict`` stopped the run before writing). ``out`` must be new or empty unless ``force`` (then
    only an earlier conversion's output is replaced).
    """
    try:
        target = get_target(to)
    except WriterError as exc:
        raise RunError(str(exc)) from None
    out = Path(out)
    with claim_output(out, kind="conversion", owned=OWNED):  # checked and locked before any input is read
        _refuse_unforced(out, force, "--force")
        return _convert_format(settings, target, out, dict(options or {}), strict, progress)


def _refuse_unforced(out: Path, force: bool, flag: str) -> None:
    """Refuse an earlier conversion in ``out`` without ``force``. Called once ``out`` is claimed, so another command's
    output (or a folder that is no output) is refused first, by the claim, with what it holds."""
    if not force and out.is_dir() and any(not n.startswith(".") for n in os.listdir(out)):
        raise RunError(f"{out} exists and is not empty; pass {flag} to replace an earlier conversion there (nothing was changed)")


def _source(settings: Settings, corpus: Corpus) -> dict[str, Any]:
    """What a writer may ask of the source study: its ``[input]``, its grouping, the layers it names (when it
    names them), the tokenizer its word units use, and the assignment in effect."""
    tokenizer = settings.tokenizer
    if tokenizer == _BUILTIN["tokenizer"].default and corpus.traits.tokenizer is not None:
        tokenizer = corpus.traits.tokenizer
    # the layers the source study unitizes, when they are not "every layer found" (the discourse formats' Arg1 and
    # Arg2): a span tool's study reading the output back would otherwise unitize every layer written
    named_layers = settings.layers != _BUILTIN["layers"].default or corpus.traits.default_layers != "found"
    assignment = ASSIGNMENT_PER_DOCUMENT if per_document(settings, corpus, corpus.annotators) else ASSIGNMENT_ALL
    return {
        "group_by": corpus.traits.group_by,
        **settings.input,
        "layers": list(settings.layers) if named_layers else [],
        "tokenizer": tokenizer,
        "assignment_in_effect": assignment,
    }


def _unitize_table(settings: Settings, target: Target, written: Written, source: dict[str, Any]) -> dict[str, Any]:
    """The ``[unitize]`` table of the written study: the source's layers (those written) when it named them, its
    tokenizer unless the target carries its own tokens (or the source's were its format's), and what the writer adds."""
    table: dict[str, Any] = {}
    if target.traits.kind == "items":
        return table
    layers = [layer for layer in source["layers"] if layer in written.layers]
    if layers:
        table["layers"] = layers
    reads = get_adapter(target.reads_as).traits.tokenizer
    if source["tokenizer"] != "given" and reads is None:
        table["tokenizer"] = source["tokenizer"]
    if source["assignment_in_effect"] == ASSIGNMENT_PER_DOCUMENT:
        # a document written for some annotators only was assigned to them only (a roster, a crowd): said
        # here, since a format without a roster would read it back as everyone's
        table["assignment"] = ASSIGNMENT_PER_DOCUMENT
    return {**table, **_measured(settings), **written.unitize}


#: the [unitize] keys that change what a study's output holds, kept in a written study when not their default
_KEPT = ("modes", "discontinuous", "keep_missing", "keep_mismatched", "layers_from", "layout")


def _measured(settings: Settings) -> dict[str, Any]:
    """The source study's settings of what is unitized and how (units, approaches, modes, missing documents, …)
    where they are not the defaults, so that the written study reads back to the same settings."""
    kept: dict[str, Any] = {}
    units, approaches = settings.units, tuple(dict.fromkeys(a for _, a in settings.pairs))
    if settings.pairs != _BUILTIN["pairs"].default and set(settings.pairs) == set(itertools.product(units, approaches)):
        kept["units"], kept["approaches"] = list(units), list(approaches)
    for key in _KEPT:
        value = getattr(settings, key)
        if value != _BUILTIN[key].default:
            kept[key] = list(value) if isinstance(value, tuple) else value
    return kept


def _convert_format(
    settings: Settings, target: Target, out: Path, options: dict[str, Any], strict: bool, progress: Progress | None
) -> tuple[Corpus, list[Finding], dict[str, Any] | None]:
    started = time.time()
    corpus = read_corpus(settings, progress)
    offset_findings, fate = check_spans(corpus)
    findings = corpus.findings + offset_findings
    if strict and any(f.severity == ERROR for f in findings):
        return corpus, sorted(findings, key=sort_key), None
    kept = replace(corpus, spans=[s for s, why in zip(corpus.spans, fate) if why is None or why == "raw-text-missing"])
    left_out = sum(1 for why in fate if why is not None and why != "raw-text-missing")
    found, manifest = _write(kept, target, out, settings, options, findings, started, len(corpus.spans), left_out)
    return corpus, found, manifest


def write_corpus(
    corpus: Corpus,
    to: str,
    out: Path,
    *,
    settings: Settings | None = None,
    options: dict[str, Any] | None = None,
    force: bool = False,
) -> tuple[list[Finding], dict[str, Any]]:
    """Write a corpus made or changed in Python (an adjudicated gold, a generated one) as format ``to`` into ``out``.

    ``settings`` are those of the study the corpus came from (its ``base`` is where the documents' ``source``
    paths are relative to, its tokenizer and layers are kept); without, a study's defaults. Returns every
    finding of the writer and the manifest; what the target cannot hold is reported as by :func:`convert_format`.
    """
    try:
        target = get_target(to)
    except WriterError as exc:
        raise RunError(str(exc)) from None
    out = Path(out)
    settings = settings or Settings(format=corpus.format)
    with claim_output(out, kind="conversion", owned=OWNED):
        _refuse_unforced(out, force, "force")
        return _write(corpus, target, out, settings, dict(options or {}), [], time.time(), len(corpus.spans), 0)


def _write(corpus: Corpus, target: Target, out: Path, settings: Settings, options: dict[str, Any], findings: list[Finding], started: float,
           read_spans: int, left_out: int) -> tuple[list[Finding], dict[str, Any]]:
    """Write ``corpus`` (its spans those to write) as ``target``, with study.toml, report.jsonl and manifest.json."""
    if corpus.traits.kind != target.traits.kind:
        what = {"spans": "text spans", "items": "flat labels (items × annotators)"}
        raise RunError(
            f"format {corpus.format} holds {what[corpus.traits.kind]} and {target.name} holds {what[target.traits.kind]}: "
            "one cannot be written as the other (nothing was written)"
        )
    outdir = OutputDir(out, owned=OWNED, kind="conversion", per_file=("annotations", "texts"),
                       editable=target.editable)
    try:
        source = _source(settings, corpus)
        try:
            written = target(corpus, outdir, settings.base, source, **options)
        except WriterError as exc:
            raise RunError(str(exc)) from None
        read_n = read_spans + len(corpus.items)
        if not (written.spans or written.items or (not read_n and sum(written.files.values()))):
            unit = "label" if target.traits.kind == "items" else "span"
            lines = [f"no {unit} could be written as {target.name} ({read_n:,} read); nothing was written."]
            lines += [f"  {line}" for line in top_codes(findings + written.findings)]
            raise RunError("\n".join(lines))
        findings = sorted(findings + written.findings, key=sort_key)
        outdir.write_jsonl("report.jsonl", (f.as_dict() for f in findings))
        study_text = study_toml(
            written.input_table(),
            _unitize_table(settings, target, written, source),
            f"written by unitize {__version__} convert-format --to {target.name}; read it back with `unitize convert study.toml`",
            extra={**({"items": settings.items} if target.traits.kind == "items" else {}), **({"roles": settings.roles} if settings.roles else {})},
        )
        atomic_write_text(outdir.file("study.toml"), study_text)
        outdir.record("study.toml", None)
        manifest = _manifest(settings, target, corpus, read_spans, left_out, written, findings, outdir, started, options)
        outdir.write_json("manifest.json", manifest)
        outdir.commit()
    except BaseException:
        outdir.abort()
        raise
    return findings, manifest


def _manifest(settings: Settings, target: Target, corpus: Corpus, read_spans: int, left_out: int, written: Written,
              findings: list[Finding], outdir: OutputDir, started: float, options: dict[str, Any]) -> dict[str, Any]:
    accounting: dict[str, Any] = {
        "spans": {
            "read": read_spans,
            "written": written.spans,
            "invalid_offsets": left_out,
            "not_written_other": len(corpus.spans) - written.spans,
        },
        "relations_written": written.relations,
        "not_convertible": sum(1 for f in written.findings if f.code == "not-convertible"),
        "files": written.files,
    }
    if target.traits.kind == "items":
        accounting["items"] = {"read": len(corpus.items), "written": written.items}
    return {
        "format_version": FORMAT_VERSION,
        "kind": "conversion",
        "tool": {"name": "unitize", "version": __version__},
        "settings": {**settings.resolved(with_output=False), "to": target.name, **({"options": options} if options else {})},
        "inputs": input_rows(corpus),
        "outputs": outdir.outputs,
        "accounting": accounting,
        **({"names": written.names.changed} if written.names.changed else {}),
        "summary": {
            "format": corpus.format,
            "to": target.name,
            "documents": len(corpus.documents),
            "annotators": corpus.annotators if target.traits.kind == "spans" else sorted({i.annotator for i in corpus.items}),
            "findings": count_by_severity(findings),
        },
        "run": run_section(started, seconds_total=round(time.time() - started, 3)),
    }
