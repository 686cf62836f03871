"""Conversion between annotation formats, with the model as the pivot.

``convert_format`` reads any input the adapters know, checks offsets against
the raw texts, and writes the records in a target format (DATT XML or PDTB-3
pipe) with the raw texts copied beside them, a ``study.toml`` that reads the
result back, ``report.jsonl`` and ``manifest.json``. Spans whose offsets are
invalid are not written; every record not written is in the report.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ._version import __version__
from .config import Settings
from .errors import RunError
from .findings import ERROR, count_by_severity, sort_key, top_codes
from .model import Corpus, Finding
from .output import OutputDir, atomic_write_text, claim_output, input_rows, run_section
from .progress import Progress
from .run import read_corpus
from .schema import FORMAT_VERSION
from .validate import check_spans
from .writers import Written, writers
from .writers.common import study_toml

#: what a conversion output directory holds (and a rerun replaces)
OWNED = ("annotations", "texts", "study.toml", "report.jsonl", "manifest.json")


def targets() -> list[str]:
    """The formats ``convert_format`` can write."""
    return sorted(writers())


def convert_format(
    settings: Settings, to: str, out: Path, *, strict: bool = False, progress: Progress | None = None
) -> tuple[Corpus, list[Finding], dict[str, Any] | None]:
    """Read the input of ``settings`` and write it as format ``to`` into ``out``.

    Returns the corpus, every finding (reading, offsets, conversion) and the
    manifest (``None`` when ``strict`` stopped the run before writing).
    """
    available = writers()
    if to not in available:
        raise RunError(f"cannot write format {to!r}; writable formats: {', '.join(sorted(available))}")
    with claim_output(out, kind="conversion", owned=OWNED):  # checked and locked before any input is read
        return _convert_format(settings, to, Path(out), available, strict, progress)


def _convert_format(
    settings: Settings, to: str, out: Path, available: dict, strict: bool, progress: Progress | None
) -> tuple[Corpus, list[Finding], dict[str, Any] | None]:
    started = time.time()
    corpus = read_corpus(settings, progress)
    offset_findings, fate = check_spans(corpus)
    findings = corpus.findings + offset_findings
    if strict and any(f.severity == ERROR for f in findings):
        return corpus, sorted(findings, key=sort_key), None
    kept = replace(corpus, spans=[s for s, why in zip(corpus.spans, fate) if why is None or why == "raw-text-missing"])

    target = OutputDir(out, owned=OWNED, kind="conversion")
    try:
        source = {"group_by": corpus.traits.group_by, **settings.input}
        written: Written = available[to](kept, target, settings.base, source)
        if not written.spans:
            lines = [f"no span could be written as {to} ({len(corpus.spans):,} read); nothing was written."]
            lines += [f"  {line}" for line in top_codes(findings + written.findings)]
            raise RunError("\n".join(lines))
        findings = sorted(findings + written.findings, key=sort_key)
        target.write_jsonl("report.jsonl", (f.as_dict() for f in findings))
        study = study_toml(
            written.study,
            {"layers": list(settings.layers), "tokenizer": settings.tokenizer},
            f"written by unitize {__version__} convert-format --to {to}; read it back with `unitize convert study.toml`",
        )
        atomic_write_text(target.file("study.toml"), study)
        target.record("study.toml", None)
        left_out = sum(1 for why in fate if why is not None and why != "raw-text-missing")
        manifest = {
            "format_version": FORMAT_VERSION,
            "kind": "conversion",
            "tool": {"name": "unitize", "version": __version__},
            "settings": {**settings.resolved(with_output=False), "to": to},
            "inputs": input_rows(corpus),
            "outputs": target.outputs,
            "accounting": {
                "spans": {
                    "read": len(corpus.spans),
                    "written": written.spans,
                    "invalid_offsets": left_out,
                    "not_written_other": len(kept.spans) - written.spans,
                },
                "relations_written": written.relations,
                "files": written.files,
            },
            "summary": {
                "format": corpus.format,
                "to": to,
                "documents": len(corpus.documents),
                "annotators": corpus.annotators,
                "findings": count_by_severity(findings),
            },
            "run": run_section(started, seconds_total=round(time.time() - started, 3)),
        }
        target.write_json("manifest.json", manifest)
        target.commit()
    except BaseException:
        target.abort()
        raise
    return corpus, findings, manifest

