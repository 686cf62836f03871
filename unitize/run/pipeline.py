"""The run: read → validate and unitize → write, for span corpora and item corpora alike.

Each step is a plain function over plain data:

- :func:`read_corpus` — settings → :class:`~unitize.model.Corpus` (the adapter's work);
- :func:`unitize` — corpus + settings → a unitized corpus of its kind: text spans
  become a :class:`~unitize.spans.matrices.Unitized` (:mod:`unitize.spans.run`: validation,
  segments, unit matrices on demand), flat labels an
  :class:`~unitize.items.run.ItemsUnitized` (:mod:`unitize.items.run`: item matrices);
- :func:`write_output` — a unitized corpus → an output directory, returns the manifest
  (:mod:`unitize.output`);
- :func:`convert` — all three, as the CLI runs them.
"""

from __future__ import annotations

import difflib
import itertools
import sys
import time
from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..adapters import Adapter, available, get_adapter
from ..config import Settings
from ..errors import RunError
from ..items.run import ItemsUnitized, unitize_items
from ..model import Corpus
from ..names import file_names, named
from ..output import RunResult, claim_output, write_run
from ..runtime.executors import Executor, TaskMap, executor_of
from ..runtime.progress import Progress, no_progress
from ..spans.matrices import Unitized
from ..spans.run import unitize_spans

#: the format hint looks at no more files than this
HINT_FILES = 10_000


def read_corpus(settings: Settings, progress: Progress | None = None, *, stream: bool = False) -> Corpus:
    """Read the input named by ``settings`` with its format's adapter.

    ``stream``: when the format's reader can (``traits.streams``), the spans are left to be read a
    batch of whole groups at a time (:class:`~unitize.model.SpanStream`) by the run that unitizes them.
    """
    adapter = get_adapter(settings.format)
    options = dict(settings.input)
    try:
        names = file_names(options.pop("names", None))
    except ValueError as exc:
        raise RunError(str(exc)) from None
    unknown = set(options) - set(adapter.options)
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
    for key, value in options.items():
        adapter.options[key].check(value, f"[input] {key}")  # numbers: finite, in their declared bounds
    absent = [name for name, option in adapter.options.items() if option.required and name not in settings.input]
    if absent:
        raise RunError(f"format {settings.format!r} needs [input] {', '.join(absent)} (flags: {', '.join('--' + n.replace('_', '-') for n in absent)})")
    streaming = {"stream": True} if stream and adapter.traits.streams else {}
    corpus = named(adapter.read(**options, base=settings.base, progress=progress or no_progress, **streaming), names)
    if not corpus.submissions and not corpus.findings and not corpus.items and corpus.stream is None:
        where = settings.input.get("annotations") or "the input"
        why = (
            f"; {corpus.skipped_by_selection} file(s) were skipped by the annotators/groups selection "
            f"{settings.input.get('annotators') or ''} {settings.input.get('groups') or ''}".rstrip()
            if corpus.skipped_by_selection
            else ""
        )
        hints = [h for h in (annotator_hint(settings.input.get("annotators"), corpus), format_hint(adapter, where)) if h]
        raise RunError(f"no annotation files were read from {where}{why}" + "".join(f"\n  {h}" for h in hints))
    return corpus


def format_hint(adapter: Adapter, where: Any) -> str | None:
    """For a folder holding none of the files ``adapter`` reads: what it holds, and the formats that read that."""
    folder = Path(where) if isinstance(where, (str, Path)) else None
    if folder is None or not folder.is_dir() or not adapter.suffixes:
        return None
    files = itertools.islice((p for p in folder.rglob("*") if not p.name.startswith(".") and p.is_file()), HINT_FILES)
    found = Counter(p.suffix.lower() or p.name for p in files)
    if any(suffix in found for suffix in adapter.suffixes):
        return None
    wanted = " or ".join(f"*{s}" for s in adapter.suffixes)
    if not found:
        return f"{adapter.name} reads {wanted} files; {folder} holds no file"
    held = ", ".join(f"{suffix} ×{n}" for suffix, n in found.most_common(5))
    others = sorted(
        name for name in available() if name != adapter.name and set(get_adapter(name).suffixes) & set(found)
    )
    return f"{adapter.name} reads {wanted} files; {folder} holds {held}" + (
        f" — formats that read those: {', '.join(others)} (`unitize formats` describes them)" if others else ""
    )


def annotator_hint(named: Collection[str] | None, corpus: Corpus) -> str | None:
    """For annotators the study names (a list, or a table of their folders) but the input lacks: every annotator found, and the nearest names."""
    if not named:
        return None
    read = set(corpus.annotators) | {r.annotator for r in corpus.items}
    absent = [a for a in named if a not in read]
    if not absent:
        return None
    found = sorted(read | corpus.not_selected)
    if not found:
        return f"annotator(s) {', '.join(absent)} have no files, and no annotator was found"
    guesses = []
    for name in absent:
        near = [f for f in found if f.casefold() == name.casefold()] or difflib.get_close_matches(name, found, n=1, cutoff=0.6)
        if near and near[0] not in named:
            guesses.append(f"{name} → {near[0]}?")
    return (
        f"annotator(s) {', '.join(absent)} have no files; the annotators in the input are {', '.join(found)}"
        + (f" (did you mean {', '.join(guesses)})" if guesses else "")
    )


def is_items(corpus: Corpus) -> bool:
    """Whether a corpus holds flat labels (item matrices) rather than text spans (unit matrices)."""
    return bool(corpus.items) or corpus.traits.kind == "items"


def unitize(
    corpus: Corpus, settings: Settings, progress: Progress | None = None, executor: Executor | None = None
) -> Unitized | ItemsUnitized:
    """Validate and unitize a corpus: unit matrices for text spans, item matrices for flat labels.

    ``executor`` (:mod:`unitize.runtime.executors`; default: here) tokenizes the documents of a span corpus.
    """
    if is_items(corpus):
        return unitize_items(corpus, settings)
    return unitize_spans(corpus, settings, progress or no_progress, executor)


def check_kept(unitized: RunResult) -> None:
    """Raise :class:`RunError` when no input record reached the matrices: such a run produced nothing usable.

    The message names the most frequent finding codes with their first messages,
    and annotators the study names that have no file at all.
    """
    what = unitized.nothing_kept()
    if what is None:
        return
    lines = [f"{what}; nothing was written."]
    hint = annotator_hint(unitized.settings.input.get("annotators"), unitized.corpus)
    if hint:
        lines.append(f"  {hint}")
    top = unitized.findings.top_codes()
    lines += [f"  {line}" for line in top]
    if top and top[0].split(" ")[0] in ("record-malformed", "file-unreadable"):
        lines.append(f"  is the input really in format {unitized.settings.format!r}? `unitize formats` lists the formats")
    if not top:
        lines.append("  no finding explains it: check --layers (and --layers-from) against the layers the input has")
    lines.append("  run `unitize validate` with the same options and --report FILE for every finding")
    raise RunError("\n".join(lines))


def summary(unitized: RunResult) -> dict[str, Any]:
    """Counts a person (or a script) wants after a run."""
    return unitized.summary()


def write_output(
    unitized: RunResult,
    out: Path | str,
    *,
    progress: Progress | None = None,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
    executor: TaskMap | None = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest.

    ``executor`` (``map(fn, items) -> list``) writes the work partitions; None: in this process.
    """
    return write_run(unitized, Path(out), progress=progress or no_progress, threads=threads, run_info=run_info, executor=executor)


def convert(
    settings: Settings,
    *,
    strict: bool = False,
    progress: Progress | None = None,
    executor: Executor | str | None = None,
) -> tuple[Unitized | ItemsUnitized, dict | None]:
    """Read, unitize and write. Under ``strict``, error findings stop the run before any output.

    The output directory is checked and locked first, before any input is read
    (:func:`~unitize.output.claim_output`). ``executor`` — an
    :class:`~unitize.runtime.executors.Executor` or a spec (``local``, ``processes[:N]``,
    ``dask[:ADDRESS]``; default ``settings.executor``, else local) — runs the
    tokenization and the writing of the work partitions; the outputs are the same
    for every executor (only the manifest's ``run`` section names it). Returns the
    unitized corpus and the manifest (``None`` when nothing was written).
    """
    started = time.time()
    if settings.out is None:
        raise RunError("no output directory: set [output] dir or --out")
    pool, owned = executor_of(executor if executor is not None else settings.executor)
    try:
        with claim_output(settings.out, kind="run"):
            corpus = read_corpus(settings, progress, stream=True)
            unitized = unitize(corpus, settings, progress, pool)
            if strict and unitized.errors:
                return unitized, None
            check_kept(unitized)
            manifest = write_run(
                unitized,
                settings.out,
                progress=progress or no_progress,
                run_info={"seconds_total": None, "argv": sys.argv[1:], "executor": pool.name, "workers": pool.workers},
                run_started=started,
                executor=pool,
            )
    finally:
        if owned:
            pool.close()
    return unitized, manifest


__all__ = ["RunError", "check_kept", "convert", "is_items", "read_corpus", "summary", "unitize", "write_output"]
