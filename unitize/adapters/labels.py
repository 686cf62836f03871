"""Flat labels: items × annotators from CSV, TSV, JSON, JSON lines or Parquet.

No text offsets: every record says which annotator gave which item which label
in one or more groups (questions, scheme levels). Shapes (``shape``):

- ``long``: one row per (item, annotator); ``annotator`` names the annotator
  column; every column in ``labels`` is a group.
- ``per-annotator``: one file per annotator (a directory of them, or one
  file); the annotator is the file name without extension, or the
  ``annotator`` column when given; every column in ``labels`` is a group.
- ``wide``: one row per item, one column per annotator (``annotator_columns``,
  default every column but the item column and ``ignore``); the group is
  ``group``.
- ``lists``: one record per item; ``annotator`` holds the annotators and each
  ``labels`` column the parallel labels (JSON lists or comma-separated strings).
- ``dict``: one record per item; each ``labels`` column holds an
  ``{annotator: label}`` object.

``bundles`` merges several feature columns of a record into one group whose
value is ``Feature=value+Feature=value`` in the order of the feature names
(empty features left out). Every value is read as text, exactly as written
(``00123`` stays ``00123``): empty cells and the ``missing`` tokens mean *not
labelled*. A JSON list value is a set of labels, kept sorted and ``+``-joined.
A label longer than ``max_label_chars`` is a ``label-too-long`` finding (the cell
left null), an item id or annotator name that long makes the record malformed; a
file that cannot be read (empty, no header, not the columns the others have) is a
``file-unreadable`` finding, and the other files are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Corpus, Finding, InputFile
from ..model.findings import finding
from ..model.item_records import ItemRecords
from ..model.traits import FormatTraits
from ..runtime.progress import Progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_LABEL_CHARS, SPREADSHEET_SAFE_HELP
from .files import clean_name, shown_name
from .label_files import KEY_COLUMN, STREAMED, fingerprint, open_records
from .label_shapes import Malformed, Mapping, require
from .suggest import suggest_labels

SHAPES = ("long", "wide", "per-annotator", "lists", "dict")
FILE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet"}


def read(
    *,
    annotations: Path,
    item: str | None = None,
    shape: str,
    file_format: str | None = None,
    annotator: str | None = None,
    labels: list[str] | None = None,
    annotator_columns: list[str] | None = None,
    ignore: list[str] | None = None,
    group: str,
    bundles: dict[str, list[str]] | None = None,
    missing: list[str] | None = None,
    normalize_ids: bool,
    pattern: str | None = None,
    encoding: str,
    delimiter: str | None = None,
    annotators: list[str] | None = None,
    groups: list[str] | None = None,
    max_label_chars: int,
    base: Path,
    spreadsheet_safe: bool,
    progress: Progress | None = None,
) -> Corpus:
    """Read flat labels into :attr:`Corpus.items` (see the module docstring for the shapes)."""
    _check_options(shape, item, annotator, labels, annotator_columns, bundles, missing, file_format, pattern)
    assert isinstance(item, str)  # _check_options refuses anything but a column name
    _check_types(normalize_ids, group, annotator, ignore, delimiter)
    files = _label_files(Path(annotations), pattern, shape)
    mapping = Mapping(shape, item, annotator, labels, annotator_columns, ignore, group, bundles,
                      frozenset(m.strip() for m in missing or []), normalize_ids, max_label_chars)
    reading = _Reading(mapping, file_format, encoding, delimiter, spreadsheet_safe, base,
                       set(annotators) if annotators else None, set(groups) if groups else None)
    items = ItemRecords()
    corpus = Corpus(format="labels", items=items)
    items_by_file: dict[str, set[str]] = {}
    unusable: list[AdapterError] = []  # files whose columns are not the mapping's, when others may be
    for path in files:
        part = reading.file(path, corpus, unusable, alone=len(files) == 1)
        if part is None:
            continue
        corpus.inputs.append(part.input)
        corpus.findings += part.findings
        items.absorb(part.records)
        corpus.not_selected |= part.not_selected
        corpus.skipped_by_selection += part.skipped
        items_by_file[part.input.path] = part.items
    if unusable and not items_by_file:
        raise unusable[0]
    if shape == "per-annotator" and len(items_by_file) > 1:
        _compare_item_sets(items_by_file, corpus)
    return corpus


def _check_types(normalize_ids: Any, group: Any, annotator: Any, ignore: Any, delimiter: Any) -> None:
    for key, value, kind in (("normalize_ids", normalize_ids, bool), ("group", group, str), ("annotator", annotator, (str, type(None)))):
        if not isinstance(value, kind):
            raise AdapterError(f"[input] {key} has the wrong type: {value!r}")
    if ignore is not None and (not isinstance(ignore, list) or not all(isinstance(v, str) for v in ignore)):
        raise AdapterError("[input] ignore must be a list of column names")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise AdapterError("[input] delimiter must be one character")


def _label_files(annotations: Path, pattern: str | None, shape: str) -> list[Path]:
    """The files to read: the one named, or those of a directory (by ``pattern``, else every known extension)."""
    if annotations.is_dir():
        files = sorted(p for p in annotations.glob(pattern or "*") if p.is_file() and (pattern or p.suffix.lower() in FILE_FORMATS))
        if not files:
            raise AdapterError(f"no label files in {annotations} (pattern {pattern or '*' + '|*'.join(FILE_FORMATS)})")
    elif annotations.is_file():
        files = [annotations]
    else:
        raise AdapterError(f"[input] annotations: {annotations} does not exist")
    if len(files) > 1 and shape != "per-annotator":
        raise AdapterError(f"shape {shape!r} reads one file, but {annotations} holds {len(files)}; use shape = \"per-annotator\" or name the file")
    return files


@dataclass
class _FilePart:
    """What one file gave: kept only if the file reads to its end."""

    input: InputFile
    records: ItemRecords = field(default_factory=ItemRecords)
    findings: list[Finding] = field(default_factory=list)
    items: set[str] = field(default_factory=set)
    not_selected: set[str] = field(default_factory=set)
    skipped: int = 0


@dataclass(frozen=True)
class _Reading:
    """How the files of one study are read: the record mapping, the file options and the selection."""

    mapping: Mapping
    file_format: str | None
    encoding: str
    delimiter: str | None
    spreadsheet_safe: bool
    base: Path
    annotators: set[str] | None
    groups: set[str] | None

    def file(self, path: Path, corpus: Corpus, unusable: list[AdapterError], *, alone: bool) -> _FilePart | None:
        """One file's labels, or ``None`` (a finding says why) when it cannot be read to its end."""
        name = shown_name(path, self.base, corpus)
        fmt = self.file_format or FILE_FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise AdapterError(f"{name}: cannot tell the file format from the extension; set [input] file_format")
        try:
            size, sha256 = fingerprint(path, fmt, self.encoding)
            header, found = open_records(path, fmt, self.encoding, self.delimiter, self.spreadsheet_safe)
            records: Iterable[tuple[int, dict[str, Any]]] = found if fmt in STREAMED else list(found)
        except (OSError, ValueError) as exc:  # ValueError: undecodable text, InputError (JSON, CSV, Parquet)
            corpus.findings.append(finding("file-unreadable", f"cannot read {name}: {exc}", "file left out; fix or remove it", file=name))
            return None
        m = self.mapping
        file_annotator = clean_name(path.stem) if m.shape == "per-annotator" and not m.annotator else None
        try:
            self._check_columns(name, header, records, m.needed(file_annotator))
        except AdapterError as exc:
            if alone:
                raise
            unusable.append(exc)  # one annotator's odd file: reported, the others read (all of them odd: the mapping is wrong)
            corpus.findings.append(finding("file-unreadable", str(exc), "file left out; fix its header or remove it", file=name))
            return None
        wide_columns = m.wide_columns(name, header, records)
        part = _FilePart(InputFile(path=name, role="annotations", size=size, sha256=sha256))
        try:
            for line, record in records:
                self._record(part, name, line, record, header, file_annotator, wide_columns)
        except (OSError, ValueError) as exc:  # a file that stops reading part way: left out whole, as one that does not open
            part.records.close()
            corpus.findings.append(finding("file-unreadable", f"cannot read {name}: {exc}", "file left out; fix or remove it", file=name))
            return None
        return part

    def _check_columns(self, name: str, header: list[str] | None, records: Iterable[tuple[int, dict[str, Any]]], needed: list[str]) -> None:
        item = self.mapping.item
        if header is not None:
            require(name, header, needed)
        elif isinstance(records, list) and any("\0bad" not in r for _, r in records) and not any(item in r for _, r in records):
            # (unreadable records are reported below)
            fields = sorted({k for _, r in records for k in r if not k.startswith(chr(0))})
            raise AdapterError(f"{name}: no record has the item field {item!r}; set [input] item to one of: {', '.join(fields) or '(none)'}")

    def _record(self, part: _FilePart, name: str, line: int, record: dict[str, Any], header: list[str] | None,
                file_annotator: str | None, wide_columns: list[str] | None) -> None:
        """One record's cells into ``part`` (or a ``record-malformed`` finding)."""
        m = self.mapping
        iid = m.item_id(record.get(m.item))
        problem = m.problem(record, header, iid)
        if problem is None:
            try:
                cells = m.cells(record, file_annotator, wide_columns)
            except Malformed as exc:
                problem = str(exc)
        if problem is not None or iid is None:
            part.findings.append(finding("record-malformed", f"{name} line {line}: {problem}", "record left out; fix the line", file=name, record=str(line)))
            return
        if m.shape == "per-annotator":
            part.items.add(iid)
        for grp, who, value in cells:
            if len(who) > m.max_label_chars:
                part.findings.append(finding("record-malformed", f"{name} line {line}: an annotator name of {len(who):,} characters",
                                             "label left out; fix the line", file=name, record=str(line)))
                continue
            if value is not None and len(value) > m.max_label_chars:
                part.findings.append(finding(
                    "label-too-long", f"{name} line {line}: a label of {len(value):,} characters (more than max_label_chars = "
                    f"{m.max_label_chars:,}): {value[:40]!r}…", "cell left null; a label is a category name: fix the cell or raise "
                    "[input] max_label_chars", file=name, record=str(line), doc=iid, group=grp, annotator=who))
                value = None
            if (self.annotators is not None and who not in self.annotators) or (self.groups is not None and grp not in self.groups):
                part.skipped += 1
                if self.annotators is not None and who not in self.annotators:
                    part.not_selected.add(who)
                continue
            part.records.add(grp, iid, who, value, name, line)


def _check_options(shape, item, annotator, labels, annotator_columns, bundles, missing, file_format, pattern) -> None:
    if shape not in SHAPES:
        raise AdapterError(f"[input] shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    if not isinstance(item, str) or not item:
        raise AdapterError("[input] item must name the item-id column")
    for key, value in (("labels", labels), ("annotator_columns", annotator_columns), ("missing", missing)):
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise AdapterError(f"[input] {key} must be a list of strings")
    if bundles is not None:
        if not isinstance(bundles, dict) or not all(isinstance(v, list) and v and all(isinstance(f, str) for f in v) for v in bundles.values()):
            raise AdapterError("[input] bundles must map a group name to a list of feature columns")
        clash = set(bundles) & set(labels or [])
        if clash:
            raise AdapterError(f"[input] bundles and labels both define group(s) {', '.join(sorted(clash))}")
    if shape in ("long", "lists") and not annotator:
        raise AdapterError(f"shape {shape!r} needs [input] annotator (the annotator column)")
    if shape != "wide" and not labels and not (bundles and shape in ("long", "per-annotator")):
        raise AdapterError(f"shape {shape!r} needs [input] labels (the label columns; each is a group)")
    if shape in ("lists", "dict") and bundles:
        raise AdapterError("bundles need one row per (item, annotator): shape long or per-annotator")
    if file_format is not None and file_format not in set(FILE_FORMATS.values()):
        raise AdapterError(f"[input] file_format must be one of {', '.join(sorted(set(FILE_FORMATS.values())))}")
    if pattern is not None and not isinstance(pattern, str):
        raise AdapterError("[input] pattern must be a glob such as \"*.csv\"")


def _compare_item_sets(items_by_file: dict[str, set[str]], corpus: Corpus) -> None:
    """Report every annotator file whose item set differs from the union of all files."""
    union = set().union(*items_by_file.values())
    for name, items in items_by_file.items():
        lacking = union - items
        if lacking:
            example = ", ".join(sorted(lacking)[:5])
            corpus.findings.append(
                finding(
                    "item-set-mismatch",
                    f"{name} has no row for {len(lacking)} of the {len(union)} items other files have (e.g. {example})",
                    "those items are null (not labelled) for this annotator",
                    file=name,
                )
            )


ADAPTER = Adapter(
    suffixes=tuple(FILE_FORMATS),
    name="labels",
    description="flat labels, items × annotators: long, wide, per-annotator, lists or dict records in CSV, TSV, JSON, JSON lines or Parquet",
    read=read,
    options={
        "annotations": Option("path", None, "a label file, or a directory of them (shape per-annotator)", example="annotations", required=True),
        "shape": Option("str", "long", "how the records are laid out: long, wide, per-annotator, lists or dict", choices=SHAPES),
        "file_format": Option(
            "str", None, "csv, tsv, json, jsonl or parquet (default: from the file extension)", choices=tuple(sorted(set(FILE_FORMATS.values())))
        ),
        "item": Option("str", None, f"the item-id column (\"{KEY_COLUMN}\" for a JSON object keyed by item id)", example="id"),
        "annotator": Option("str", None, "the annotator column (long, lists; optional for per-annotator: default the file name)", example="annotator"),
        "labels": Option("list", None, "label columns, each a group (long, per-annotator, lists, dict)", example=["sentiment", "topic"]),
        "annotator_columns": Option(
            "list", None, "wide: the annotator columns (default every column but item and ignore)", example=["ayse", "burak"]
        ),
        "ignore": Option("list", None, "wide: columns that are not annotators (text, comments)", example=["text"]),
        "group": Option("str", "label", "wide: the group name"),
        "bundles": Option(
            "toml", None, "{group = [feature columns]}: features merged into Feature=value+Feature=value", example={"role": ["Speaker", "Addressee"]}
        ),
        "missing": Option("list", None, "cell values meaning not labelled besides empty cells", example=["NA", "-", "?"]),
        "normalize_ids": Option("bool", False, "strip whitespace and leading zeros of item ids (false: 00123 and 123 differ)"),
        "pattern": Option("str", None, "per-annotator: glob of the files in the directory (default every known extension)", example="*.csv"),
        "encoding": Option("str", "utf-8", "text encoding of CSV, TSV and JSON files"),
        "delimiter": Option("str", None, "CSV field delimiter (default , for csv and TAB for tsv)", example=";"),
        "annotators": Option("list", None, "only these annotators", example=["ayse", "burak"]),
        "groups": Option("list", None, "only these groups", example=["sentiment"]),
        "spreadsheet_safe": Option("bool", False, SPREADSHEET_SAFE_HELP),
        "max_label_chars": Option(
            "int", MAX_LABEL_CHARS, "the longest label (and item id, annotator name) read; a longer one is reported, its cell left null", minimum=1
        ),
    },
    traits=FormatTraits(kind="items"),
    suggest=suggest_labels,
)
