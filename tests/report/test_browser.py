"""`unitize report` in a real browser: headless Chromium (Debian's package; `make browser` installs it).

The reports of the example corpus and of the bratiaa brat project are opened from
file URLs; the checks read the DOM: tracks and highlighted units for a known
disagreement, links and keys that work, no console error, no failed load.
``UNITIZE_SCREENSHOT=docs/report.png`` (``make screenshot``) also saves the
README's picture.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.chromium import Chromium, find
from tests.conftest import CORPORA, EXAMPLE, needs_shared
from unitize.cli import main
from unitize.dataset.directory import OutputData
from unitize.dataset.region_rows import setting_regions
from unitize.dataset.texts import Texts

CHROMIUM = find()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine and `make browser` could not install Debian's chromium "
    "(apt-get needs root and the Debian archive): the browser check of `unitize report` is skipped",
)
BRATIAA = CORPORA / "bratiaa-example" / "example-files" / "example-project"


def made(tmp: Path, convert: list[str]) -> tuple[Path, Path]:
    out = tmp / "out"
    assert main(["convert", *convert, "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--plot", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    return out, out / "report" / "index.html"


def overview(index: Path) -> dict:
    text = (index.parent / "data" / "overview.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


@pytest.fixture(scope="module")
def browser():
    with Chromium(CHROMIUM, width=1280, height=900) as b:
        yield b


def open_view(b: Chromium, url: str, ready: str) -> None:
    b.open(url)
    b.wait_for(ready)


def doc_ready(b: Chromium) -> int:
    return b.wait_for("document.querySelectorAll('#textview .c').length")


def test_example_corpus_report_in_chromium(browser: Chromium, tmp_path: Path) -> None:
    out, index = made(tmp_path, [str(EXAMPLE / "study.toml")])
    data = overview(index)
    url = index.as_uri()
    open_view(browser, url, "document.querySelectorAll('table.agree tbody tr').length")
    assert browser.js("document.querySelectorAll('.plots img').length") == len(data["plots"]) > 0
    assert browser.wait_for("Array.from(document.querySelectorAll('.plots img')).every(i => i.complete && i.naturalWidth > 0)")
    # every overview row links to a document that exists
    links = browser.js("Array.from(document.querySelectorAll('table.agree a[data-doc]')).map(a => a.getAttribute('href'))")
    rows = browser.js("document.querySelectorAll('table.agree tbody tr').length")
    assert len(links) == rows
    for href in sorted(set(links))[:6]:
        browser.js(f"location.hash = {json.dumps(href)}")
        doc_ready(browser)
        assert not browser.js("document.querySelector('.error')")
    # the known disagreement (tdb-mini README): in `ve` of 00001927 cem alone marks an Arg1
    di = data["docs"]["ids"].index("00001927")
    browser.js(f"location.hash = '#doc/{di}?s=word-interval&g=ve'")
    doc_ready(browser)
    assert browser.js("document.getElementById('doc-title').textContent") == "Document 00001927"
    assert browser.js("Array.from(document.querySelectorAll('#textview .c')).every(c => c.querySelectorAll('.k').length === 3)")
    assert browser.js("document.querySelectorAll('#textview .k i.s0').length") > 0  # Arg1 drawn
    assert browser.js("document.querySelectorAll('#textview .k i.s1').length") > 0  # Arg2 drawn, another pattern
    head = browser.js("Array.from(document.querySelectorAll('#regions th')).map(t => t.textContent)")
    cells = browser.js("Array.from(document.querySelectorAll('#regions tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
    cem_alone = [r for r in cells if r[1] == "Arg1" and r[head.index("cem")] != "— not marked"
                 and r[head.index("ayse")] == r[head.index("burak")] == "— not marked"]
    assert cem_alone, cells
    begin = int(cem_alone[0][2].split("–")[0])
    highlighted = browser.js("Array.from(document.querySelectorAll('#textview .c.dis .t')).map(t => t.textContent).join('')")
    text = (EXAMPLE / "texts" / "00001927.txt").read_text(encoding="utf-8")
    assert text[begin:begin + 8].split()[0] in highlighted
    browser.js("window.scrollTo(0, document.getElementById('r-1').getBoundingClientRect().top + window.scrollY - 330)")
    browser.wait_for("document.getElementById('r-1').getBoundingClientRect().top < 400")
    shot = browser.screenshot(tmp_path / "doc.png", clip={"x": 0, "y": browser.js("window.scrollY"), "width": 1280, "height": 640})
    if os.environ.get("UNITIZE_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["UNITIZE_SCREENSHOT"])
    # the setting switches in place
    browser.js("document.querySelector('input[name=unit][value=char]').click()")
    browser.wait_for("location.hash.includes('s=char-interval')")
    doc_ready(browser)
    # keyboard: n and p move between documents, in the ranking's order
    first = browser.js("document.getElementById('doc-title').textContent")
    browser.key("n")
    browser.wait_for(f"document.getElementById('doc-title') && document.getElementById('doc-title').textContent !== {json.dumps(first)}")
    browser.key("p")
    browser.wait_for(f"document.getElementById('doc-title') && document.getElementById('doc-title').textContent === {json.dumps(first)}")
    # keyboard only: from the document's heading, Tab reaches "next", Enter opens the next document
    browser.js(f"location.hash = '#doc/{data['settings'][0]['doc_order'][0]}?s={data['settings'][0]['name']}'")
    doc_ready(browser)
    title = browser.js("document.getElementById('doc-title').textContent")
    assert browser.js("document.activeElement.id") == "doc-title"
    browser.press("Tab")
    assert browser.js("document.activeElement.id") == "next-doc"
    browser.press("Enter")
    browser.wait_for(f"document.getElementById('doc-title') && document.getElementById('doc-title').textContent !== {json.dumps(title)}")
    # the other views draw
    for view, ready in (("#where?s=word-interval", "document.querySelectorAll('#docs-list tbody tr').length"),
                        ("#overview", "document.querySelectorAll('table.agree tbody tr').length")):
        browser.js(f"location.hash = {json.dumps(view)}")
        browser.wait_for(ready)
    assert browser.errors == []


@needs_shared
def test_bratiaa_project_report_in_chromium(browser: Chromium, tmp_path: Path) -> None:
    out, index = made(tmp_path, ["--format", "brat", "--annotations", str(BRATIAA)])
    data = overview(index)
    annotators = data["study"]["annotators"]
    assert len(annotators) == 4
    regions = setting_regions(OutputData(out), OutputData(out).setting("word-interval"))
    doc = regions[0].doc
    di = data["docs"]["ids"].index(doc)
    mine = [r for r in regions if r.doc == doc]
    open_view(browser, f"{index.as_uri()}#doc/{di}?s=word-interval&g=all", "document.querySelectorAll('#textview .c').length")
    assert browser.js("Array.from(document.querySelectorAll('#textview .c')).every(c => c.querySelectorAll('.k').length === 4)")
    assert browser.js("document.querySelectorAll('#textview .rm').length") == len(mine)
    assert browser.js("document.querySelectorAll('#regions tbody tr').length") == min(len(mine), 25)
    legend = browser.js("document.getElementById('legend').textContent")
    assert "label PER" in legend and "label LOC" in legend
    first = mine[0]
    shown = browser.js("document.getElementById('r-1').nextElementSibling.textContent").strip()
    assert shown and shown in (Texts(OutputData(out)).text(doc) or "")[first.begin:first.end]
    assert (first.begin, first.end) == tuple(int(x) for x in browser.js(
        "document.querySelector('#regions tbody tr').cells[2].textContent").split("–"))
    browser.screenshot(tmp_path / "bratiaa.png")
    assert browser.errors == []


def test_gold_and_review_page_in_chromium(browser: Chromium, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    index = out / "report" / "index.html"
    review = [json.loads(line) for line in (out / "adjudication" / "review.jsonl").read_text(encoding="utf-8").splitlines()]
    assert overview(index)["adjudication"]["review"] == review and len(review) == 19
    open_view(browser, index.as_uri() + "#gold", "document.querySelectorAll('#review tbody tr').length")
    assert not browser.js("document.getElementById('nav-gold').hidden")
    rows = browser.js("Array.from(document.querySelectorAll('#review tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
    assert len(rows) == min(25, len(review))  # one page
    first = review[0]
    assert rows[0][1:5] == [first["group"], first["doc"], first["layer"], f"{first['begin']}–{first['end']}"]
    assert rows[0][5] == first["text"][:200] and rows[0][8] == "; ".join(first["why"])
    browser.js("document.querySelector('#review tbody a[data-doc]').click()")  # the region's document opens
    doc_ready(browser)
    assert browser.js("document.getElementById('doc-title').textContent") == f"Document {first['doc']}"
    assert browser.errors == []


def test_the_overview_speaks_in_sentences(browser: Chromium, tmp_path: Path) -> None:
    out, index = made(tmp_path, [str(EXAMPLE / "study.toml")])
    open_view(browser, index.as_uri(), "document.querySelectorAll('table.agree tbody tr').length")
    head = browser.js("Array.from(document.querySelectorAll('table.agree thead th')).map(t => t.textContent)")
    rows = browser.js("Array.from(document.querySelectorAll('table.agree tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
    notes = [r[head.index("notes and diagnostics")] for r in rows]
    assert not [n for n in notes if '{"code"' in n or "diagnostics:" in n]  # no JSON: sentences
    assert any(n.startswith("skewed prevalence: 0 is ") for n in notes) and not any("Alpha and kappa fall" in n for n in notes), notes
    advice = browser.js("Array.from(document.querySelectorAll('p.advice')).map(p => p.textContent)")
    assert [a for a in advice if a.startswith("skewed prevalence — Alpha and kappa fall")] and len(advice) == len(set(advice))  # once
    browser.js("const f = document.getElementById('agree-filter'); f.value = 'ki'; f.dispatchEvent(new Event('input'))")
    browser.wait_for("Array.from(document.querySelectorAll('table.agree tbody tr')).every(r => r.cells[1].textContent.includes('ki'))")
    rows = browser.js("Array.from(document.querySelectorAll('table.agree tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
    ki = {(r[0], r[2]): r[head.index("notes and diagnostics")] for r in rows}
    assert "boundary only disagreement: alpha-u 0.813 on the interval approach (word-interval), 0.664 on the boundary approach " \
           "(word-boundary)" in ki[("word-interval", "Arg1")]
    q = [r[head.index("cochran-q")] for r in rows if r[head.index("cochran-q")]]
    assert q and all(cell.startswith("Q ") and "(df " in cell for cell in q if cell != "NaN"), q
    assert browser.errors == []


def test_a_reason_every_row_has_is_said_once(browser: Chromium, tmp_path: Path) -> None:
    out, index = made(tmp_path, [str(EXAMPLE.parent / "crowd-mini" / "study.toml")])
    open_view(browser, index.as_uri(), "document.querySelectorAll('table.agree tbody tr').length")
    said = browser.js("Array.from(document.querySelectorAll('p.note')).map(p => p.textContent).filter(t => t.startsWith('In every row'))")
    assert said == ["In every row: alpha-u — no document is coded by every annotator (alpha-U and gamma pool all annotators on one "
                    "continuum; u-alpha and span-f1 take each document's coders).",
                    "In every row: fleiss — no unit is coded by every annotator."]
    head = browser.js("Array.from(document.querySelectorAll('table.agree thead th')).map(t => t.textContent)")
    notes = browser.js("Array.from(document.querySelectorAll('table.agree tbody tr')).map(r => r.cells[%d].textContent)"
                       % head.index("notes and diagnostics"))
    assert len(notes) == 8 and not [n for n in notes if "coded by every annotator" in n and "cochran-q" not in n]
    assert browser.errors == []
