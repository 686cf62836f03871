"""The run: read → validate and unitize → write, for span corpora and item corpora alike.

Each step is a plain function over plain data:

- :func:`read_corpus` — settings → :class:`~unitize.model.Corpus` (the adapter's work);
- :func:`unitize` — corpus + settings → a unitized corpus of its kind: text spans
  become a :class:`~unitize.matrices.Unitized` (:mod:`unitize.span_run`: validation,
  segments, unit matrices on demand), flat labels an
  :class:`~unitize.item_run.ItemsUnitized` (:mod:`unitize.item_run`: item matrices);
- :func:`write_output` — a unitized corpus → an output directory, returns the manifest
  (:mod:`unitize.output`);
- :func:`convert` — all three, as the CLI runs them.
"""

from __future__ import annotations

import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

from .adapters import get_adapter
from .config import Settings
from .errors import RunError
from .item_run import ItemsUnitized, unitize_items
from .matrices import Unitized
from .model import Corpus
from .output import atomic_write_text, write_run
from .progress import Progress, no_progress
from .span_run import unitize_spans


def read_corpus(settings: Settings, progress: Progress | None = None) -> Corpus:
    """Read the input named by ``settings`` with its format's adapter."""
    adapter = get_adapter(settings.format)
    unknown = set(settings.input) - set(adapter.options)
    if unknown:
        raise RunError(
            f"[input] key(s) {', '.join(sorted(unknown))} are not options of format {settings.format!r}; "
            f"known: {', '.join(adapter.options)}"
        )
    if (
        "annotations" in adapter.options
        and "annotations" not in settings.input
        and not isinstance(settings.input.get("annotators"), dict)
    ):
        raise RunError("no input given: set [input] annotations (or --annotations), or an [input.annotators] table")
    required = [
        name
        for name, p in inspect.signature(adapter.read).parameters.items()
        if p.default is inspect.Parameter.empty and p.kind is inspect.Parameter.KEYWORD_ONLY and name not in ("base", "progress")
    ]
    absent = [name for name in required if name not in settings.input]
    if absent:
        raise RunError(f"format {settings.format!r} needs [input] {', '.join(absent)} (flags: {', '.join('--' + n.replace('_', '-') for n in absent)})")
    corpus = adapter.read(**settings.input, base=settings.base, progress=progress or no_progress)
    if not corpus.submissions and not corpus.findings and not corpus.items:
        where = settings.input.get("annotations") or "the input"
        why = (
            f"; {corpus.skipped_by_selection} file(s) were skipped by the annotators/groups selection "
            f"{settings.input.get('annotators') or ''} {settings.input.get('groups') or ''}".rstrip()
            if corpus.skipped_by_selection
            else ""
        )
        raise RunError(f"no annotation files were read from {where}{why}")
    return corpus


def is_items(corpus: Corpus) -> bool:
    """Whether a corpus holds flat labels (item matrices) rather than text spans (unit matrices)."""
    return bool(corpus.items) or get_adapter(corpus.format).defaults.get("kind") == "items"


def unitize(corpus: Corpus, settings: Settings, progress: Progress | None = None) -> Unitized | ItemsUnitized:
    """Validate and unitize a corpus: unit matrices for text spans, item matrices for flat labels."""
    if is_items(corpus):
        return unitize_items(corpus, settings)
    return unitize_spans(corpus, settings, progress or no_progress)


def summary(unitized: Unitized | ItemsUnitized) -> dict[str, Any]:
    """Counts a person (or a script) wants after a run."""
    return unitized.summary()


def write_output(
    unitized: Unitized | ItemsUnitized,
    out: Path | str,
    *,
    progress: Progress | None = None,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest."""
    return write_run(unitized, Path(out), progress=progress or no_progress, threads=threads, run_info=run_info)


def convert(
    settings: Settings, *, strict: bool = False, progress: Progress | None = None
) -> tuple[Unitized | ItemsUnitized, dict | None]:
    """Read, unitize and write. Under ``strict``, error findings stop the run before any output.

    Returns the unitized corpus and the manifest (``None`` when nothing was written).
    """
    started = time.time()
    corpus = read_corpus(settings, progress)
    unitized = unitize(corpus, settings, progress)
    if strict and unitized.errors:
        return unitized, None
    if settings.out is None:
        raise RunError("no output directory: set [output] dir or --out")
    manifest = write_output(
        unitized,
        settings.out,
        progress=progress,
        run_info={"seconds_total": None, "argv": sys.argv[1:]},
    )
    manifest["run"]["seconds_total"] = round(time.time() - started, 3)
    # the run section only: data files and their hashes are untouched
    atomic_write_text(settings.out / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return unitized, manifest


__all__ = ["RunError", "convert", "is_items", "read_corpus", "summary", "unitize", "write_output"]
