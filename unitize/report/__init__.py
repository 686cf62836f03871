"""``unitize report``: a static HTML report of where annotators disagree.

    from unitize.report import report
    folder = report("out/")          # out/report/index.html

The folder holds ``index.html`` (styles and script inlined), ``data/overview.js``
(the study, exclusions, agreement table, rankings and matrices),
``data/docs/<n>.js`` (one document each: its text, segments and disagreement
regions, loaded only when the document is opened) and ``data/items/<n>.js``
(an item group's items with disagreement), and ``plots/`` (the agreement plots,
copied). Data files are JavaScript (a call of ``unitizeReport.load``), loaded by
``<script>`` elements, so the report opens from a file URL with no server and
no network. Without ``agreement/`` the page says how to make it and shows the
data views, which need only the unit matrices.

The data behind the page are in :mod:`unitize.dataset.regions` (disagreement regions),
:mod:`.where` (shares, rankings, pair and confusion matrices), :mod:`.study`
(overview) and :mod:`.build` (one pass gathering them); :mod:`.page` writes the folder,
as JSON text (:mod:`.jsontext`).
"""

from __future__ import annotations

from pathlib import Path

from ..output import locks_output
from ..runtime.progress import Progress, no_progress
from .build import Report, build
from .page import write_report


@locks_output
def report(out: Path | str, dest: Path | str | None = None, progress: Progress | None = None) -> tuple[Path, Report]:
    """Write the report of output directory ``out`` into ``dest`` (default ``out/report``)."""
    from ..dataset.directory import OutputData

    data = OutputData(Path(out))
    final = Path(dest) if dest is not None else data.path / "report"
    built = build(data, progress or no_progress)
    write_report(built, final, data, progress or no_progress)
    return final, built


__all__ = ["Report", "build", "report", "write_report"]
