"""The report's overview: the study (manifest), what validation excluded (accounting, report.jsonl),
where the quotes of model answers were found (the manifest's quote accounting), the agreement results
(``agreement/results.parquet``, read whatever columns it has) and the alt-test's verdicts
(``agreement/alt_test.csv`` and ``alt_test_humans.csv``)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .. import metrics as registry
from ..cells import value as as_written
from ..dataset.directory import OutputData
from ..dataset.roles import ceiling_values
from ..dataset.roles import resolve as resolve_roles
from ..errors import UnitizeError
from ..model.findings import QUOTE_CODES
from ..output.derived import ESTIMATE_FILES


def bands() -> dict[str, dict[str, Any]]:
    """The interpretation bands of the registry as the page reads them: per scale its source, its
    metrics and its cuts ``[lower bound or null, name, mark]``, highest first."""
    return {b.name: {"source": b.source, "metrics": [m.name for m in registry.METRICS if m.band is b],
                     "bands": [list(cut) for cut in b.cuts]} for b in registry.bands()}


#: results columns the agreement table shows in this order; any other column is shown after them
KNOWN_COLUMNS = ("setting", "group", "layer", "metric", "value", "ci_low", "ci_high", "reason", "annotators", "documents",
                 "relations", "units", "units_used", "std_err", "df", "p_value", "pair", "annotator_a", "annotator_b",
                 "label", "doc", "level", "params", "unit", "approach", "mode")


def band(metric: str, value: float | None) -> tuple[str, str] | None:
    """(short mark, band name) of a value on its metric's scale; None when it has no scale or no value."""
    found = registry.get(metric).band if metric in registry.names() else None
    return found.of(value) if found is not None else None


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _as_counted(name: str) -> tuple[tuple[int, int, str], ...]:
    """A name's key in the order people count: its runs of ASCII digits by value (``w2`` before ``w10``; compared by
    length first, so no ``int()`` of thousands of digits)."""
    return tuple((0, len(part.lstrip("0")), part.lstrip("0")) if part.isdigit() else (1, 0, part)
                 for part in re.split(r"([0-9]+)", name) if part)


def study_name(data: OutputData) -> str:
    """What the study is called: its study file's folder (``brat-mini`` for ``brat-mini/study.toml``), else the file's
    name, else the output directory's name."""
    source = (data.manifest.get("settings") or {}).get("source")
    if isinstance(source, str) and source.endswith(".toml"):
        path = Path(source)
        return path.parent.name if path.stem == "study" and path.parent.name else path.stem
    return data.path.name


def study(data: OutputData) -> dict[str, Any]:
    """Inputs, annotators, settings and counts from the manifest."""
    m = data.manifest
    settings, summary = m.get("settings", {}), m.get("summary", {})
    inputs = data.inputs()
    return {
        "format": settings.get("format"),
        "source": settings.get("source"),
        "tool": f"{m.get('tool', {}).get('name', 'unitize')} {m.get('tool', {}).get('version', '')}".strip(),
        "inputs": len(inputs),
        "input_bytes": sum(int(i.get("bytes") or 0) for i in inputs),
        "roles": dict(Counter(i.get("role") or "input" for i in inputs)),
        "documents": summary.get("documents"),
        "groups": summary.get("groups"),
        "annotators": sorted(summary.get("annotators") or [], key=_as_counted),  # w2 before w10, as people count
        "layers": summary.get("layers") or settings.get("layers") or [],
        "tokenizer": settings.get("tokenizer"),
        "modes": settings.get("modes"),
        "discontinuous": settings.get("discontinuous"),
        "keep_missing": settings.get("keep_missing"),
        "keep_mismatched": settings.get("keep_mismatched"),
        "items": summary.get("items"),
        "settings": [{"name": s.name, "kind": s.kind, "unit": s.unit, "approach": s.approach, "mode": s.mode,
                      "layout": s.layout.name, "value": s.value, "annotators": len(s.annotators)} for s in data.settings],
    }


class _Count(TypedDict):
    """Records that went one way (a reason) and how many."""

    reason: str
    n: int


def exclusions(data: OutputData) -> list[dict[str, Any]]:
    """Per unit type (or the label records), where the records went: kept, and excluded by reason, with shares."""
    acc = data.manifest.get("accounting", {})
    out = []
    for unit, a in (acc.get("by_unit") or {}).items():
        total = int(a.get("records") or 0)
        rows: list[_Count] = [{"reason": "in segments", "n": int(a.get("in_segments") or 0)}]
        rows += [{"reason": k, "n": int(v)} for k, v in sorted((a.get("excluded") or {}).items(), key=lambda kv: -kv[1])]
        out.append({"what": f"{unit} units: records of the selected layers", "total": total,
                    "rows": [dict(r, share=r["n"] / total if total else None) for r in rows]})
    labels = acc.get("labels")
    if labels:
        total = int(labels.get("read") or 0)
        rows = [{"reason": k, "n": int(v)} for k, v in labels.items() if k != "read"]
        rows.sort(key=lambda r: (r["reason"] != "labelled", -r["n"]))
        out.append({"what": "label records", "total": total, "rows": [dict(r, share=r["n"] / total if total else None) for r in rows]})
    return out


def quotes(data: OutputData) -> list[dict[str, Any]]:
    """How the quotes of a ``quotes`` input were located (exact, normalized, fuzzy, ambiguous, not found), with shares;
    empty for other formats."""
    counts = data.manifest.get("accounting", {}).get("quotes") or {}
    total = sum(int(n) for n in counts.values())
    return [{"outcome": o, "code": code, "n": int(counts[o]), "share": int(counts[o]) / total if total else None}
            for o, code in QUOTE_CODES.items() if o in counts]


#: the columns of unitize's CSV files that hold names (text, though they look like numbers: "007" is not 7)
NAMES = ("setting", "candidate", "human", "score", "family", "model", "prompt", "label", "group", "layer", "observation", "values",
         "best", "worst", "alt_test", "reason", "quantity", "metric")


def _csv_rows(path: Path, names: tuple[str, ...] = ("setting", "candidate", "human", "score")) -> list[dict[str, Any]]:
    """The rows of a CSV file unitize wrote, typed as pyarrow reads them (empty cells null; the ``names`` columns text),
    each text as it was before the CSV neutralised it (:func:`unitize.cells.value`: a name is shown as named)."""
    types = {c: pa.string() for c in names}  # a column a file lacks is left out by pyarrow
    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True))
    return [{k: _json_safe(as_written(v) if isinstance(v, str) else v) for k, v in row.items()} for row in table.to_pylist()]


def alt_test(data: OutputData) -> dict[str, Any] | None:
    """The alt-test of ``unitize agree --alt-test``: its verdicts (a row per setting and candidate), each human's
    test, and the declaration's title, source and passing rate; None when ``agreement/alt_test.csv`` is absent."""
    folder = data.path / "agreement"
    if not (folder / "alt_test.csv").is_file():
        return None
    humans = folder / "alt_test_humans.csv"
    try:
        verdicts, per_human = _csv_rows(folder / "alt_test.csv"), _csv_rows(humans) if humans.is_file() else []
    except (OSError, pa.ArrowInvalid):
        return None
    alt = registry.ALT_TEST
    return {"title": alt.title, "source": alt.source, "passing": alt.passing, "verdicts": verdicts, "humans": per_human}


def estimate(data: OutputData) -> dict[str, list[dict[str, Any]]] | None:
    """What ``unitize estimate`` wrote (``estimate/``): its tables by file stem (``estimates``, ``stability``,
    ``stability_curve``, ``unstable``, ``prompts``, ``prompt_spread``); None when there is none."""
    folder = data.path / "estimate"
    if not (folder / ESTIMATE_FILES[0]).is_file():
        return None
    out: dict[str, list[dict[str, Any]]] = {}
    for name in ESTIMATE_FILES:
        try:
            out[name.removesuffix(".csv")] = _csv_rows(folder / name, NAMES) if (folder / name).is_file() else []
        except (OSError, pa.ArrowInvalid):
            out[name.removesuffix(".csv")] = []
    return out


def roles(data: OutputData) -> dict[str, Any] | None:
    """Who is a human and who a candidate (the study's ``[roles]``), and, from ``agreement/roles.csv``, the human
    ceiling: per setting, layer and metric, the mean over the human pairs, each candidate's mean with the humans and
    each family's stability (as ``unitize agree`` prints it); None without roles."""
    try:
        found = resolve_roles(data)
    except UnitizeError:
        found = None
    path = data.path / "agreement" / "roles.csv"
    try:
        rows = _csv_rows(path) if path.is_file() else []
    except (OSError, pa.ArrowInvalid):
        rows = []
    if found is None and not rows:
        return None
    for r in rows:  # as agree holds them: a pair named, NaN a float
        r["value"] = float("nan") if r.get("value") is None else r["value"]
    ceiling = []
    for metric in dict.fromkeys(r["metric"] for r in rows):
        for (setting, layer), by in sorted(ceiling_values(rows, metric).items()):
            ceiling += [{"setting": setting, "layer": layer, "metric": metric, "who": who, "value": sum(v) / len(v), "n": len(v)}
                        for who, v in by.items()]
    return {"humans": found.humans if found else [], "families": found.families if found else {}, "ceiling": ceiling}


def findings(path: Path, examples: int = 3) -> list[dict[str, Any]]:
    """report.jsonl by code: severity, count, what was done, and the first few messages."""
    by_code: dict[str, dict[str, Any]] = {}
    report = path / "report.jsonl"
    if not report.is_file():
        return []
    with report.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            code = str(row.get("code"))
            entry = by_code.setdefault(code, {"code": code, "severity": row.get("severity"), "n": 0, "actions": Counter(), "examples": []})
            entry["n"] += 1
            if row.get("action"):
                entry["actions"][row["action"]] += 1
            if len(entry["examples"]) < examples:
                entry["examples"].append({k: row.get(k) for k in ("doc", "group", "annotator", "file", "record", "message")})
    order = {"error": 0, "warning": 1, "info": 2}
    out = sorted(by_code.values(), key=lambda e: (order.get(e["severity"], 3), -e["n"], e["code"]))
    for e in out:
        e["action"] = e.pop("actions").most_common(1)[0][0] if e["actions"] else ""
    return out


def results(data: OutputData) -> dict[str, Any] | None:
    """``agreement/results.parquet``'s rows of whole cells (no label, document or annotator breakdown: the rows the page
    shows; a ``--by-doc`` run's per-document rows, which grow with the corpus, stay in the file) as columns and rows
    (every column it has), and every metric it holds; None when absent."""
    path = data.path / "agreement" / "results.parquet"
    if not path.is_file():
        return None
    file = pq.ParquetFile(path)
    kept: list[pa.RecordBatch] = []
    metrics: dict[str, None] = {}  # in the order they come
    for batch in file.iter_batches(batch_size=1 << 16):  # a batch at a time: a --by-doc file holds millions of rows
        if "metric" in batch.schema.names:
            metrics.update(dict.fromkeys(pc.unique(batch["metric"]).to_pylist()))
        kept.append(batch.filter(registry.whole_mask(batch)))
    table = pa.Table.from_batches(kept, schema=file.schema_arrow)
    names = [c for c in KNOWN_COLUMNS if c in table.column_names] + [c for c in table.column_names if c not in KNOWN_COLUMNS]
    columns = {c: table.column(c).to_pylist() for c in names}
    rows = [[_json_safe(columns[c][i]) for c in names] for i in range(table.num_rows)]
    whole = [{"metric": r[names.index("metric")], "value": r[names.index("value")],
              **{c: r[names.index(c)] for c in registry.BREAKDOWN_COLUMNS if c in names}} for r in rows] if "metric" in names else []
    return {"columns": names, "rows": rows, "metrics": list(metrics), "summary_metric": registry.summary_metric(list(metrics), whole)}


#: (setting, group, layer) -> the summary metric's value
SummaryValues = dict[tuple[str, str, str], float | None]


def summary_values(res: dict[str, Any] | None) -> SummaryValues:
    """(setting, group, layer) -> the summary metric's value (whole-layer rows: no pair, label, document or annotator)."""
    if not res or not res["summary_metric"]:
        return {}
    col = {c: i for i, c in enumerate(res["columns"])}
    out = {}
    for row in res["rows"]:
        if row[col["metric"]] != res["summary_metric"]:
            continue
        if any(c in col and row[col[c]] not in (None, "") for c in ("pair", "label", "doc", "annotator", "annotator_a")):
            continue
        out[(row[col["setting"]], row[col["group"]], row[col["layer"]])] = row[col["value"]]
    return out


def plots(data: OutputData) -> list[Path]:
    """The PNG plots of ``agreement/plots`` (copied into the report)."""
    folder = data.path / "agreement" / "plots"
    return sorted(folder.glob("*.png")) if folder.is_dir() else []
