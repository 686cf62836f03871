"""Shared fixtures: a small DATT corpus writer and the location of ../shared; ``--fast``, the developer's loop."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from unitize.config import Settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"
EXAMPLE = ROOT / "unitize" / "examples" / "tdb-mini"

needs_shared = pytest.mark.skipif(
    not CORPORA.is_dir(), reason="../shared/corpora is not beside the repository (real-data tests skipped)"
)

ELEMENTS = ("Conn", "Mod", "Arg1", "Arg2", "Supp1", "Supp2", "Shared", "Supp_Shared")


def datt_xml(text: str, relations: list[dict], *, sup: str = "Supp") -> str:
    """A DATT file: each relation maps element names to lists of (begin, end), plus 'attrs'."""
    out = ['<?xml version="1.0" encoding="utf-8"?>', "<Document>"]
    for rel in relations:
        attrs = rel.get("attrs", {"type": "EXPLICIT", "sense": "EXPANSION: Conjunction"})
        out.append("<Relation " + " ".join(f'{k}="{escape(v)}"' for k, v in attrs.items()) + ">")
        for element in ELEMENTS:
            name = element.replace("Supp", sup)
            spans = rel.get(element, [])
            if not spans:
                out.append(f"<{name}/>")
                continue
            out.append(f"<{name}>")
            for b, e in spans:
                stored = rel.get("text", {}).get(element, text[b:e])
                out.append(
                    f"<Span><Text>{escape(stored)}</Text><BeginOffset>{b}</BeginOffset>"
                    f"<EndOffset>{e}</EndOffset></Span>"
                )
            out.append(f"</{name}>")
        out.append("</Relation>")
    out.append("</Document>")
    return "\n".join(out) + "\n"


class DattCorpus:
    """Builds a DATT study in a temporary directory."""

    def __init__(self, root: Path):
        self.root = root
        self.annotations = root / "annotations"
        self.texts = root / "texts"
        self.annotations.mkdir(parents=True)
        self.texts.mkdir(parents=True)
        self.docs: dict[str, str] = {}

    def text(self, doc: str, text: str, *, newline: str = "\n", encoding: str = "utf-8") -> str:
        raw = text.replace("\n", newline)
        (self.texts / f"{doc}.txt").write_bytes(raw.encode(encoding))
        self.docs[doc] = raw
        return raw

    def file(self, doc: str, annotator: str, connective: str, relations: list[dict], **kw) -> Path:
        path = self.annotations / f"{doc}_{annotator}_{connective}.xml"
        path.write_text(datt_xml(self.docs.get(doc, ""), relations, **kw), encoding="utf-8")
        return path

    def settings(self, **changes) -> Settings:
        base = dict(
            format="datt",
            input={"annotations": self.annotations, "texts": self.texts},
            tokenizer="whitespace",
            out=self.root / "out",
            base=self.root,
        )
        base.update(changes)
        return Settings(**base)


@pytest.fixture
def datt(tmp_path: Path) -> DattCorpus:
    return DattCorpus(tmp_path / "study")


def ted_turkish_pair(tmp_path: Path) -> list[str]:
    """TED-MDB Turkish (talk 1971 and its neighbours) as two annotators, ``gold`` and a ``copy`` with
    one Arg2 cut short; the convert flags that read them (pdtb3, regex tokens, grouped by type)."""
    source = CORPORA / "ted-mdb" / "Turkish"
    annotations = tmp_path / "ann"
    for name in ("gold", "copy"):
        shutil.copytree(source / "ann" / "01", annotations / name, ignore=shutil.ignore_patterns("talk_2*"))
    path = annotations / "copy" / "talk_1971_tr.txt"
    lines = path.read_bytes().decode("utf-8").split("\n")
    lines[1] = lines[1].replace("|215..336|", "|215..300|")  # a disagreement
    path.write_bytes("\n".join(lines).encode("utf-8"))
    return ["--format", "pdtb3", "--annotators", f"gold={annotations / 'gold'},copy={annotations / 'copy'}",
            "--texts", str(source / "raw" / "01"), "--tokenizer", "regex", "--group-by", "type"]


#: the names whose mention in a test (or in one of its fixtures) means it reads the real corpora of ../shared
_REAL_DATA = ("CORPORA", "SHARED", "ted_turkish_pair", "needs_shared")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast", action="store_true",
                     help="the developer's loop: leave out the browser check and the tests on the real corpora of ../shared (make test-fast)")


def _reads_real_data(item: pytest.Item) -> bool:
    """Whether a test reads ../shared: its function, or a fixture it uses, names the corpora."""
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        functions += [d.func for d in defs if d.baseid.startswith("tests")]
    for function in functions:
        try:
            source = inspect.getsource(function)  # type: ignore[arg-type]
        except (OSError, TypeError):
            continue
        if any(name in source for name in _REAL_DATA):
            return True
    return any(m.name == "skipif" and "../shared" in str(m.kwargs.get("reason", "")) for m in item.iter_markers())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--fast``: deselect the browser check and every test on the real corpora (the full suite, ``make test``, runs them)."""
    if not config.getoption("--fast"):
        return
    slow = [item for item in items if "test_browser" in item.nodeid or _reads_real_data(item)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        chosen = set(map(id, slow))
        items[:] = [item for item in items if id(item) not in chosen]


def pytest_report_header(config: pytest.Config) -> str:
    """Say at the start whether the real data is there: without it, the tests that read it are skipped."""
    if config is not None and config.getoption("--fast"):
        return "--fast: the browser check and the tests on the real data of ../shared are left out (make test runs them)"
    if CORPORA.is_dir():
        return f"real data: {CORPORA}"
    return (f"real data: {CORPORA} NOT FOUND — the tests on real corpora will be skipped; "
            "clone the repository beside ../shared to run them")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Count at the end the tests skipped for want of ../shared, so that a green run without it is not mistaken for a full one."""
    missing = ("is not beside the repository", "is absent")  # the reasons of a skip for want of ../shared (not "no sample of")
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if any(m in str(getattr(r, "longrepr", "")) for m in missing)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} tests on real data skipped: {CORPORA} is not beside the repository",
                                    yellow=True, bold=True)
