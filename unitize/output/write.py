"""Writing a run: unit matrices streamed per dataset, segments, documents, report, manifest.

:func:`write_run` takes a unitized corpus of either kind (spans or items: each
offers ``datasets()`` and ``summary()``) and writes everything into an
:class:`~unitize.output.directory.OutputDir`, the manifest last. Data files are
byte-identical across reruns on the same inputs; what depends on time or host
stays in the manifest's ``run`` section.
"""

from __future__ import annotations

import platform
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa

from .. import __version__
from ..model import Corpus
from ..progress import Progress, Sized, no_progress
from ..schema import FORMAT_VERSION, documents_schema
from .directory import OutputDir, ParquetStream

Dataset = tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]


def write_run(
    unitized: Any,
    out: Path,
    *,
    progress: Progress = no_progress,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
    run_started: float | None = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest.

    ``run_started`` (a :func:`time.time`) adds the run's ``seconds_total`` to the manifest's ``run`` section.
    """
    started = time.time()
    target = OutputDir(out)
    try:
        unit_rows = _write_datasets(target, unitized.datasets(), progress, threads)
        if unitized.kind == "spans":
            for unit, res in unitized.results.items():
                target.write_table(f"segments/{unit}.parquet", res.segments)
            target.write_table("documents.parquet", documents_table(unitized))
        target.write_jsonl("report.jsonl", (f.as_dict() for f in unitized.findings))
        manifest = {
            "format_version": FORMAT_VERSION,
            "tool": {"name": "unitize", "version": __version__},
            "libraries": _versions(),
            "settings": unitized.settings.resolved(),
            "inputs": input_rows(unitized.corpus),
            "outputs": target.outputs,
            "accounting": unitized.accounting,
            "summary": {**unitized.summary(), "unit_rows": dict(sorted(unit_rows.items()))},
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


def _write_datasets(target: OutputDir, datasets: list[Dataset], progress: Progress, threads: int) -> dict[str, int]:
    """Stream each dataset into ``units/<name>/part-0.parquet``; rows written per dataset."""

    def write(dataset: Dataset) -> tuple[str, int]:
        name, schema, tables = dataset
        relative = f"units/{name}/part-0.parquet"
        stream = ParquetStream(target.file(relative), schema)
        for table in tables():
            stream.write(table)
        stream.close()
        return relative, stream.rows

    if threads > 1 and len(datasets) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            done = list(progress(Sized(pool.map(write, datasets), len(datasets)), "writing unit matrices"))
    else:
        done = [write(d) for d in progress(datasets, "writing unit matrices")]
    rows: dict[str, int] = {}
    for relative, n in done:
        target.record(relative, n)
        rows[relative.split("/")[1]] = n
    return rows


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
