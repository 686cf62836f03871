"""Writing a run: unit matrices per work partition, segments, documents, universe, tokens, report, manifest.

:func:`write_run` takes a unitized corpus of either kind (spans: ``settings_specs()``,
``part(d0, d1)``; items: ``datasets()``; both ``summary()``), cuts it into work
partitions (:mod:`.parts`), has an executor write every partition's parts and
writes the rest into an :class:`~unitize.output.directory.OutputDir`, the
manifest last. Data files are byte-identical across reruns on the same inputs
and across executors; what depends on time or host stays in the manifest's
``run`` section.
"""

from __future__ import annotations

import platform
import socket
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa

from .. import __version__
from ..model import Corpus
from ..progress import Progress, Sized, no_progress
from ..schema import FORMAT_VERSION, documents_schema, tokens_schema, universe_schema
from .directory import OutputDir
from .parts import PARTITION_UNITS, InProcess, PartTask, item_slices, partitions, write_partition

Dataset = tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]


def write_run(
    unitized: Any,
    out: Path,
    *,
    progress: Progress = no_progress,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
    run_started: float | None = None,
    executor: Any = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest.

    ``executor`` (an object with ``map(fn, items) -> list`` in order, e.g. from ``unitize.executors``)
    writes the work partitions; None, or an executor that keeps its tasks in this process (``local``),
    writes them here on ``threads`` threads (Parquet encoding releases the GIL; the bytes are the same).
    ``run_started`` (a :func:`time.time`) adds the run's ``seconds_total`` to the manifest's ``run`` section.
    """
    started = time.time()
    target = OutputDir(out)
    try:
        if executor is None or not getattr(executor, "parallel", True):
            executor = InProcess(threads)
        unit_rows, dense_rows = _write_units(target, unitized, progress, executor)
        if unitized.kind == "spans":
            for unit, res in unitized.results.items():
                target.write_table(f"segments/{unit}.parquet", res.segments)
            target.write_table("documents.parquet", documents_table(unitized))
            target.write_table("universe.parquet", universe_table(unitized))
            if "word" in unitized.spaces:
                target.write_table("tokens.parquet", tokens_table(unitized.spaces["word"]))
        target.write_jsonl("report.jsonl", (f.as_dict() for f in unitized.findings))
        manifest = {
            "format_version": FORMAT_VERSION,
            "tool": {"name": "unitize", "version": __version__},
            "libraries": _versions(),
            "settings": unitized.settings.resolved(),
            "inputs": input_rows(unitized.corpus),
            "outputs": target.outputs,
            "accounting": unitized.accounting,
            "summary": {**unitized.summary(), "unit_rows": dict(sorted(unit_rows.items())),
                        "dense_rows": dict(sorted(dense_rows.items()))},
            "run": run_section(started, seconds_writing=round(time.time() - started, 3), **(run_info or {})),
        }
        if run_started is not None:
            manifest["run"]["seconds_total"] = round(time.time() - run_started, 3)
        target.write_json("manifest.json", manifest)
        target.commit()
    except BaseException:
        target.abort()
        raise
    return manifest


def tasks(unitized: Any, staging: Path) -> list[PartTask]:
    """One task per work partition of a run: its data only (see :mod:`.parts`)."""
    if unitized.kind != "spans":
        datasets = unitized.datasets()
        specs = [(name, schema) for name, schema, _ in datasets]
        return [PartTask(k, str(staging), specs, part) for k, part in enumerate(item_slices(datasets))]
    specs = unitized.settings_specs()
    doc_ids = unitized.doc_ids()
    chars = [len(unitized.corpus.documents[d].text) for d in doc_ids]
    limit = unitized.settings.partition_units or PARTITION_UNITS
    return [PartTask(k, str(staging), specs, unitized.part(d0, d1)) for k, (d0, d1) in enumerate(partitions(chars, limit))]


def _write_units(target: OutputDir, unitized: Any, progress: Progress, executor: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Every part of every setting, written by ``executor``; rows written and rows of the dense matrix per setting."""
    todo = tasks(unitized, target.staging)
    if isinstance(executor, InProcess):
        done = executor.map(write_partition, progress(Sized(todo, len(todo)), "writing unit matrices"))
    else:
        done = executor.map(write_partition, todo)
    rows: dict[str, int] = {}
    for i, spec in enumerate(todo[0].specs):  # outputs listed by setting, then part
        rows[spec[0]] = 0
        for parts in done:
            relative, n = parts[i]
            target.record(relative, n)
            rows[spec[0]] += n
    if unitized.kind != "spans":
        return rows, dict(rows)
    dense = {name: unitized.dense_rows(u, m) for name, _, u, _, m in unitized.settings_specs()}
    return rows, dense


def universe_table(unitized: Any) -> pa.Table:
    """``universe.parquet``: per (group, doc_id) of the unit universe the annotators with a submission, in study order."""
    groups, docs, annotators = [], [], []
    for group in sorted(g for g in unitized.groups if unitized.universe.get(g)):
        expected = set(unitized.expected.get(group, []))
        for doc in unitized.documents_in(group):
            missing = unitized.universe[group][doc]
            names = [a for a in unitized.annotators if a in expected and a not in missing]
            groups.append(group)
            docs.append(doc)
            annotators.append(names)
    return pa.Table.from_pydict({"group": groups, "doc_id": docs, "annotators": annotators}, schema=universe_schema())


def tokens_table(space: Any) -> pa.Table:
    """``tokens.parquet``: every token of every document with text, its character extent (code points)."""
    doc = np.repeat(np.arange(len(space.doc_ids)), space.n_units)
    token = np.arange(int(space.n_units.sum()), dtype=np.int64) - np.repeat(space.base, space.n_units)
    shift = np.repeat(space.char_base, space.n_units)
    return pa.Table.from_arrays(
        [
            pa.DictionaryArray.from_arrays(pa.array(doc.astype(np.int32)), pa.array(space.doc_ids, pa.string())).cast(pa.string()),
            pa.array(token.astype(np.int32)),
            pa.array((space.starts - shift).astype(np.int32)),
            pa.array((space.ends - shift).astype(np.int32)),
        ],
        schema=tokens_schema(),
    )


def documents_table(unitized: Any) -> pa.Table:
    """``documents.parquet``: per document its source, size, hash, decoding, unit counts and text."""
    corpus = unitized.corpus
    doc_ids = sorted(corpus.documents)
    word = unitized.spaces.get("word")
    tokens = dict(zip(word.doc_ids, word.n_units.tolist())) if word else {}
    rows = [corpus.documents[d] for d in doc_ids]
    return pa.Table.from_pydict(
        {
            "doc_id": doc_ids,
            "source": [d.source for d in rows],
            "bytes": [d.size for d in rows],
            "sha256": [d.sha256 for d in rows],
            "encoding": [d.encoding for d in rows],
            "newline": [d.newline for d in rows],
            "bom": [d.bom for d in rows],
            "chars": [len(d.text) if d.text is not None else None for d in rows],
            "tokens": [tokens.get(d.doc_id) for d in rows],
            "tokenizer": [unitized.settings.tokenizer if word and d.text is not None else None for d in rows],
            "text": [d.text for d in rows],
        },
        schema=documents_schema(),
    )


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "pyarrow", "lxml", "spacy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def input_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The manifest's ``inputs``: every file read, by role and path."""
    return [
        {"path": i.path, "role": i.role, "bytes": i.size, "sha256": i.sha256}
        for i in sorted(corpus.inputs, key=lambda i: (i.role, i.path))
    ]


def run_section(started: float, **more: Any) -> dict[str, Any]:
    """The manifest's ``run`` section: when and where (the only host- or time-dependent part)."""
    return {
        "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        **more,
    }
