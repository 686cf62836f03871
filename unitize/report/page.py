"""Writing the report folder: ``index.html`` with its styles and script inlined, the data as
JavaScript files (``<script>``-loadable from a file URL), the plots copied.

The folder is written beside its place and swapped in whole; a folder that is
not an earlier report (no ``index.html`` with the report's marker) is never replaced.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ..dataset.directory import OutputData
from ..output import REPORT_MARKER, is_report, refuse_foreign, staged_folder
from ..progress import Progress, no_progress
from .build import Report
from .study import plots

#: the first line of every report's index.html: how an earlier report is recognised (declared in unitize.output)
MARKER = REPORT_MARKER


def static(name: str) -> str:
    """A file shipped in ``unitize/report/static``."""
    return resources.files("unitize.report").joinpath("static", name).read_text(encoding="utf-8")


def script(payload: Any, kind: str, index: int | None = None) -> str:
    """A data file: ``unitizeReport.load(kind, index, {...});`` (JSON is valid JavaScript; ``</`` escaped)."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    body = body.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"unitizeReport.load({json.dumps(kind)},{json.dumps(index)},{body});\n"


def index_html(title: str) -> str:
    page = static("index.html")
    for key, value in (("/*STYLE*/", static("report.css")), ("/*SCRIPT*/", static("report.js"))):
        page = page.replace(key, value)
    return MARKER + "\n" + page.replace("{{TITLE}}", _escape(title))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_report(built: Report, final: Path, data: OutputData, progress: Progress = no_progress) -> Path:
    """Write the report folder ``final`` (staged beside it, then swapped in)."""
    refuse_foreign(final, is_report, "an earlier report (no unitize index.html)")
    with staged_folder(final, "report") as staging:
        (staging / "data" / "docs").mkdir(parents=True)
        (staging / "data" / "items").mkdir(parents=True)
        overview = dict(built.overview, out=str(data.path.name))
        # the staging folder is swapped in whole, so its files need no atomic writes of their own
        (staging / "data" / "overview.js").write_text(script(overview, "overview"), encoding="utf-8")
        for i, doc in enumerate(progress(built.docs, "report: writing documents")):
            (staging / "data" / "docs" / f"{i}.js").write_text(script(doc, "doc", i), encoding="utf-8")
        for i, group in enumerate(built.items):
            (staging / "data" / "items" / f"{i}.js").write_text(script(group, "items", i), encoding="utf-8")
        found = plots(data)
        if found:
            (staging / "plots").mkdir()
            for p in found:
                shutil.copyfile(p, staging / "plots" / p.name)
        (staging / "index.html").write_text(index_html(f"unitize report: {data.path.name}"), encoding="utf-8")
    return final
