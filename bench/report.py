"""How long `unitize report` takes on a large study, and how soon its page is usable in a browser.

    python bench/report.py OUT                  # OUT: an output directory (best with agreement/)
    python bench/report.py OUT --dest DIR       # the report written to DIR, not OUT/report
    python bench/report.py OUT --skip-build     # only the browser part, on OUT/report (or DIR)

Writes the report (timed; ``build_peak_rss_mib``: the peak resident memory of the
``unitize report`` process, from the child's rusage), then opens it in
headless Chromium (Debian's; `make browser`) from its file URL and times, until
the DOM shows it: the overview with its agreement table, the "Where it
disagrees" view with every document ranked, the worst document with its tracks,
and the next document by the `n` key. ToxicSpans (16,100 posts, 3,579 workers),
converted with char and word units, both approaches, separate and labels modes,
is the large case of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.chromium import Chromium, find  # noqa: E402


def timed(b: Chromium, action, ready: str) -> float:
    start = time.perf_counter()
    action()
    b.wait_for(ready, timeout=120)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--dest", type=Path, help="where the report goes (default OUT/report)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    result: dict = {"out": str(args.out)}
    folder = args.dest or args.out / "report"
    if not args.skip_build:
        start = time.perf_counter()
        subprocess.run([args.python, "-m", "unitize", "report", str(args.out), "--dest", str(folder), "-q"], check=True, cwd=REPO)
        result["build_s"] = round(time.perf_counter() - start, 2)
        result["build_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    index = folder / "index.html"
    files = list((index.parent / "data").rglob("*.js"))
    result["report_files"] = len(files)
    result["report_mib"] = round(sum(f.stat().st_size for f in files) / 2**20, 1)
    result["overview_js_mib"] = round((index.parent / "data" / "overview.js").stat().st_size / 2**20, 2)
    exe = find()
    if exe is None:
        print("no chromium (make browser installs it)", file=sys.stderr)
        return 2
    with Chromium(exe) as b:
        result["documents"] = None
        result["overview_usable_s"] = round(timed(b, lambda: b.open(index.as_uri()), "document.querySelectorAll('main h2').length > 0 && !document.getElementById('loading')"), 2)
        result["documents"] = b.js("unitizeReport.overview.docs.ids.length")
        result["where_usable_s"] = round(timed(b, lambda: b.js("location.hash = '#where'"), "document.querySelectorAll('#docs-list tbody tr').length"), 2)
        result["worst_document_s"] = round(timed(b, lambda: b.js("document.querySelector('#docs-list a[data-doc]').click()"), "document.querySelectorAll('#textview .c').length"), 2)
        title = b.js("document.getElementById('doc-title').textContent")
        result["next_document_s"] = round(timed(b, lambda: b.key("n"), f"document.getElementById('doc-title') && document.getElementById('doc-title').textContent !== {json.dumps(title)} && document.querySelectorAll('#textview .c').length"), 2)
        result["heap_mib"] = round((b.js("performance.memory ? performance.memory.usedJSHeapSize : 0") or 0) / 2**20, 1)
        result["console_errors"] = b.errors
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
