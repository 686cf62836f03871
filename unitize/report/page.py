"""Writing the report folder: ``index.html`` with its styles and script inlined, the data as
JavaScript files (``<script>``-loadable from a file URL), the plots copied.

The folder is written beside its place and swapped in whole; a folder that is
not an earlier report (no ``index.html`` with the report's marker) is never replaced.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from ..dataset.directory import OutputData
from ..output import REPORT_MARKER, is_report, refuse_foreign, staged_folder
from ..runtime.progress import Progress, no_progress
from .build import Report
from .jsontext import pieces
from .study import plots, study_name

#: the first line of every report's index.html: how an earlier report is recognised (declared in unitize.output)
MARKER = REPORT_MARKER


def static(name: str) -> str:
    """A file shipped in ``unitize/report/static``."""
    return resources.files("unitize.report").joinpath("static", name).read_text(encoding="utf-8")


def script(payload: Any, kind: str, index: int | None = None) -> str:
    """A data file: ``unitizeReport.load(kind, index, {...});`` (JSON, :func:`.jsontext.dumps`, is valid JavaScript;
    ``</`` escaped)."""
    return "".join(script_pieces(payload, kind, index))


def script_pieces(payload: Any, kind: str, index: int | None = None) -> Iterator[str]:
    """:func:`script`'s text in pieces (:func:`.jsontext.pieces`, each escaped: a JSON string, where ``</`` and the
    line separators can be, never spans two), for a file too large to hold as one string."""
    yield f"unitizeReport.load({json.dumps(kind)},{json.dumps(index)},"
    for piece in pieces(payload):
        yield _js_safe(piece)
    yield ");\n"


def _js_safe(json_text: str) -> str:
    """JSON text as JavaScript inside an HTML page's script file: ``</`` and U+2028/U+2029 escaped."""
    return json_text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def write_script(path: Path, payload: Any, kind: str, index: int | None = None) -> None:
    """Write :func:`script`'s text to ``path`` a piece at a time."""
    with path.open("w", encoding="utf-8") as fh:
        fh.writelines(script_pieces(payload, kind, index))


#: a bundle of document pages holds documents until it passes this size (a crowd study: a few files, not one per post)
BUNDLE_BYTES = 1 << 20


def write_bundles(scripts: Iterable[str], folder: Path, limit: int = BUNDLE_BYTES) -> list[int]:
    """Write the documents' scripts, in order, into ``folder/<k>.js`` bundles of about ``limit`` bytes (a document
    larger than that alone); the index of each bundle's first document."""
    starts: list[int] = []
    held: list[str] = []
    size = 0

    def flush() -> None:
        if held:
            (folder / f"{len(starts) - 1}.js").write_text("".join(held), encoding="utf-8")

    for i, text in enumerate(scripts):
        if held and size + len(text) > limit:
            flush()
            held, size = [], 0
        if not held:
            starts.append(i)
        held.append(text)
        size += len(text)
    flush()
    return starts


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
        # the staging folder is swapped in whole, so its files need no atomic writes of their own
        starts = write_bundles((script(doc, "doc", i) for i, doc in enumerate(progress(built.docs, "report: writing documents"))),
                               staging / "data" / "docs")
        overview = dict(built.overview, out=str(data.path.name))
        overview["docs"] = {**overview.get("docs", {}), "bundles": starts}
        write_script(staging / "data" / "overview.js", overview, "overview")  # a crowd study's: a hundred megabytes
        for i, group in enumerate(built.items):
            write_script(staging / "data" / "items" / f"{i}.js", group, "items", i)
        found = plots(data)
        if found:
            (staging / "plots").mkdir()
            for p in found:
                shutil.copyfile(p, staging / "plots" / p.name)
        (staging / "index.html").write_text(index_html(f"unitize report: {study_name(data)}"), encoding="utf-8")
    return final
