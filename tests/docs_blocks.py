"""The documentation's pages as data: their fenced code blocks (with the marks above them), tables, headings, links.

``tests/test_docs.py`` runs and checks what this module reads. A *mark* is an HTML comment on the
lines right above a fence — invisible when the page is rendered:

- ``<!-- run -->`` (``sh`` blocks): run the block with ``bash`` in a workspace;
- ``<!-- setup: unitize … -->`` (``python``, ``sql``): run that command in the workspace first;
- ``<!-- not run: why -->`` (``python``, ``sql``): an exemption, with its reason.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

DOCS = ROOT / "docs"
#: the README first, then every page of docs/
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

_MARK = re.compile(r"^<!--\s*(.*?)\s*-->$")
_FENCE = "```"


def name(page: Path) -> str:
    """A page's path relative to the repository (its name in test ids and messages)."""
    return page.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # 1-based line of the opening fence
    lang: str  # "" for a figure (a fence with no language)
    code: str
    marks: tuple[str, ...]  # the HTML comments right above the fence, top to bottom

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    def mark(self, key: str) -> str | None:
        """The value of mark ``key`` (``""`` for a bare ``<!-- run -->``), or None without that mark."""
        for m in self.marks:
            head, _, value = m.partition(":")
            if head.strip() == key:
                return value.strip()
        return None

    @property
    def setup(self) -> list[list[str]]:
        """The ``unitize …`` commands of every ``setup:`` mark, split into words."""
        return [shlex.split(m.partition(":")[2]) for m in self.marks if m.partition(":")[0].strip() == "setup"]


def read(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def blocks(page: Path) -> list[Block]:
    """Every fenced code block of a page, in order."""
    lines = read(page).splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith(_FENCE):
            i += 1
            continue
        lang = lines[i][len(_FENCE):].strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(_FENCE)), None)
        assert end is not None, f"{name(page)}:{i + 1}: a code block is never closed"
        marks: list[str] = []
        k = i - 1
        while k >= 0 and (m := _MARK.match(lines[k].strip())):
            marks.insert(0, m.group(1))
            k -= 1
        out.append(Block(name(page), i + 1, lang, "\n".join(lines[i + 1:end]) + "\n", tuple(marks)))
        i = end + 1
    return out


def all_blocks(lang: str | None = None) -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if lang is None or b.lang == lang]


def prose(page: Path) -> str:
    """A page without its code blocks (for links, names and paths written in the text)."""
    out, fenced = [], False
    for line in read(page).splitlines():
        if line.startswith(_FENCE):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return "\n".join(out)


def headings(page: Path) -> list[tuple[int, str]]:
    """(level, text) of every heading outside code blocks."""
    return [(len(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^(#{1,6}) (.+)$", prose(page), re.M)]


def slug(heading: str) -> str:
    """The anchor a heading gets where Markdown is rendered (GitHub's rule: lower case, punctuation dropped, spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, text in headings(page):
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def section(page: Path, title: str) -> str:
    """The text from the heading ``title`` (without its #s) to the next heading of the same or a higher level."""
    lines = read(page).splitlines(keepends=True)
    fenced, start, level = False, None, 0
    for i, line in enumerate(lines):
        if line.startswith(_FENCE):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^(#{1,6}) (.+)$", line)
        if m and start is None and m.group(2).strip() == title:
            start, level = i, len(m.group(1))
        elif m and start is not None and len(m.group(1)) <= level:
            return "".join(lines[start:i])
    assert start is not None, f"{name(page)} has no heading {title!r}"
    return "".join(lines[start:])


def table(text: str) -> list[list[str]]:
    """The rows of the first Markdown table in ``text`` (header and rule left out), cells split on unescaped ``|``."""
    rows, started = [], False
    for line in text.splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
        elif started:
            break
    return [r for r in rows[2:]]


def names(cell: str) -> list[str]:
    """The names a table cell shows in backticks (``\\|`` already unescaped)."""
    return re.findall(r"`([^`]+)`", cell)


def links(page: Path) -> list[str]:
    """The targets of every Markdown link and image of a page's text."""
    return re.findall(r"\]\(([^)\s]+)\)", prose(page))


def command_lines(block: Block) -> list[str]:
    """Every ``unitize …`` command of a shell block (continuation lines joined, comments cut)."""
    out = []
    for line in block.code.replace("\\\n", " ").splitlines():
        line = line.strip().removeprefix("$ ")
        if line.startswith("unitize "):
            out.append(re.split(r"\s+#\s", line, maxsplit=1)[0])
    return out
