"""The output directory of a run: staged, written file by file, committed atomically.

A run writes into a staging directory inside the output directory and moves
each finished file into place with :func:`os.replace`, so a crash never leaves
a half-written file where a reader would look, and a failed run leaves the
previous complete output untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

#: writer options for every Parquet file (columns named in them are added per table)
PARQUET_WRITE_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 1}

_DELTA = "DELTA_BINARY_PACKED"
#: outputs a run owns; anything else in an output directory is left alone
#: (``agreement`` and ``exports`` are made later from the data by `unitize agree` / `export`;
#: a new run removes them, since they would describe the previous data)
OWNED = ("units", "segments", "documents.parquet", "report.jsonl", "agreement", "exports", "manifest.json")
_STAGING = ".unitize-staging"


class OutputError(ValueError):
    """The output directory cannot be used."""


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """Writer options for a table of ``schema``.

    Dictionary encoding for strings and the small annotator columns, delta
    encoding for the ascending integer columns, statistics only where readers
    filter (group, doc_id, layer, unit).
    """
    dictionary, delta = [], {}
    for f in schema:
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type) or pa.types.is_uint8(f.type):
            dictionary.append(f.name)
        elif f.name in ("unit", "begin", "end", "unit_begin", "unit_end") and pa.types.is_int32(f.type):
            delta[f.name] = _DELTA
    stats = [n for n in ("group", "doc_id", "layer", "unit", "unit_type", "annotator") if n in schema.names]
    return {**PARQUET_WRITE_OPTIONS, "use_dictionary": dictionary, "column_encoding": delta, "write_statistics": stats}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ParquetStream:
    """A Parquet file written table by table (one row group per table or more)."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = path
        self.schema = schema
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(str(path), schema, **parquet_options(schema))

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._writer.write_table(table.cast(self.schema) if table.schema != self.schema else table)
            self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()


class OutputDir:
    """A run's output directory, with a staging area committed at the end."""

    def __init__(self, path: Path, owned: tuple[str, ...] = OWNED):
        self.path = Path(path)
        self.owned = owned
        if self.path.exists():
            if not self.path.is_dir():
                raise OutputError(f"output path {self.path} exists and is not a directory")
            entries = [p.name for p in self.path.iterdir() if not p.name.startswith(_STAGING)]
            if entries and "manifest.json" not in entries:
                raise OutputError(
                    f"output directory {self.path} is not empty and holds no unitize manifest.json; "
                    "choose a new or empty directory"
                )
        self.staging = self.path / f"{_STAGING}-{os.getpid()}"
        try:
            if self.staging.exists():
                shutil.rmtree(self.staging)
            self.staging.mkdir(parents=True)
        except OSError as exc:
            raise OutputError(f"cannot create the output directory {self.path}: {exc.strerror or exc}") from None
        self.outputs: list[dict[str, Any]] = []

    def file(self, relative: str) -> Path:
        """Where to write ``relative`` during the run (inside the staging area)."""
        path = self.staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def record(self, relative: str, rows: int | None) -> None:
        path = self.staging / relative
        self.outputs.append(
            {"path": relative, "rows": rows, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
        )

    def write_table(self, relative: str, table: pa.Table) -> None:
        stream = ParquetStream(self.file(relative), table.schema)
        stream.write(table)
        stream.close()
        self.record(relative, table.num_rows)

    def write_jsonl(self, relative: str, rows: Iterable[dict[str, Any]]) -> None:
        count = 0
        with open(self.file(relative), "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False))
                fh.write("\n")
                count += 1
        self.record(relative, count)

    def write_json(self, relative: str, data: dict[str, Any]) -> None:
        with open(self.file(relative), "w", encoding="utf-8", newline="\n") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")

    def commit(self) -> None:
        """Replace the previous run's outputs with this run's, the manifest last.

        Every owned entry of the previous run goes, also those this run does not
        write (an item run leaves no stale ``segments/`` of an earlier span run).
        The previous manifest goes first, so an interrupted commit never leaves a
        manifest describing files that are not there; on any failure every entry
        already moved is put back and the previous output is restored.
        """
        moved: list[tuple[Path, Path | None]] = []  # (target, where its previous version went)

        def set_aside(target: Path, name: str) -> Path | None:
            if not (target.exists() or target.is_symlink()):
                return None
            backup = self.staging / f".old-{name}"
            os.replace(target, backup)
            return backup

        try:
            manifest = self.path / "manifest.json"
            moved.append((manifest, set_aside(manifest, "manifest.json")))
            for name in [n for n in self.owned if n != "manifest.json"] + ["manifest.json"]:
                new = self.staging / name
                target = self.path / name
                backup = set_aside(target, name) if name != "manifest.json" else None
                moved.append((target, backup))
                if new.exists():
                    os.replace(new, target)  # else a previous run's output this run does not make is gone
        except BaseException:
            for target, backup in reversed(moved):
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target, ignore_errors=True)
                elif target.exists():
                    target.unlink()
                if backup is not None and backup.exists():
                    os.replace(backup, target)
            raise
        shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write a text file under a temporary name, then rename it into place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, path)


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of an output directory."""
    manifest = Path(path) / "manifest.json"
    if not manifest.is_file():
        raise OutputError(f"{path} is not a unitize output directory (no manifest.json)")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutputError(f"{manifest} cannot be read: {exc}") from None
    missing = [k for k in ("tool", "settings", "summary", "accounting", "outputs", "inputs") if k not in data]
    if missing:
        raise OutputError(f"{manifest} is not a unitize manifest (no {', '.join(missing)})")
    return data
