"""File handling shared by adapters: relative names, raw-text lookup and decoding.

Raw texts are decoded here with the offset conventions of the tool that made
the annotations (the format's :class:`~unitize.model.text.TextConventions`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..model import Corpus, Document, InputFile
from ..model.findings import finding
from ..model.text import DecodeError, TextConventions
from . import AdapterError


def relative(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` in POSIX form (``..`` where needed)."""
    return Path(os.path.relpath(path, base)).as_posix()


def printable(name: str) -> str | None:
    """``None`` when a file name is valid UTF-8, else a printable form of it (bytes escaped)."""
    try:
        name.encode("utf-8")
        return None
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def clean_name(name: str) -> str:
    """A name taken from a file name, with each byte that is not UTF-8 written as ``\\xNN``.

    File names are bytes; one that is not UTF-8 reaches Python with surrogate
    escapes, which no output (Arrow, JSON) can write. The mapping is deterministic
    and keeps names that differ in their bytes apart; it can only coincide with a
    UTF-8 name that itself spells such an escape (a backslash, ``x``, two hex digits).
    """
    return printable(name) or name


def shown_name(path: Path, base: Path, corpus: Corpus) -> str:
    """``path`` relative to ``base`` for reports and the manifest; a name that is not UTF-8 is
    given by :func:`clean_name` and reported (``filename-pattern``), and the file is still read."""
    name = relative(path, base)
    shown = printable(name)
    if shown is None:
        return name
    corpus.findings.append(
        finding(
            "filename-pattern",
            f"file name is not valid UTF-8; read as {shown}",
            "read; in names taken from it (annotator, document) each undecodable byte is written \\xNN; rename the file to UTF-8",
            file=shown,
        )
    )
    return shown


def files_under(root: Path, base: Path, corpus: Corpus, keep: Callable[[str], bool] | None = None, **where: str) -> list[Path]:
    """Every file under ``root`` (recursively; links to folders are not followed) whose name ``keep``
    accepts, sorted by their parts (as paths sort on POSIX).

    A folder that cannot be listed (no permission, gone meanwhile) is a ``file-unreadable``
    finding naming it (``where``: its annotator, say), and the walk goes on: ``Path.rglob`` and
    ``Path.glob`` skip such a folder without a word, and an annotator would vanish from the study.
    """

    def unreadable(exc: OSError) -> None:
        folder = Path(exc.filename) if exc.filename else root
        name = relative(folder, base)
        corpus.findings.append(
            finding(
                "file-unreadable",
                f"cannot read the folder: {exc.strerror or exc}",
                "the files in it were not read; check the folder and its permissions",
                file=(printable(name) or name) + "/",
                **where,
            )
        )

    found: list[Path] = []
    for folder, _, names in os.walk(root, onerror=unreadable):
        found += [Path(folder, n) for n in names if keep is None or keep(n)]
    return sorted(found, key=lambda path: path.parts)


def input_files(path: Path, base: Path, corpus: Corpus, keep: Callable[[str], bool], what: str) -> list[Path]:
    """The files an input names: ``path`` itself when it is a file, else every file under the folder ``path``
    whose name ``keep`` accepts (:func:`files_under`: a folder that cannot be listed is a finding);
    an :class:`~unitize.adapters.AdapterError` "``what`` not found" when it is neither."""
    if path.is_dir():
        return [p for p in files_under(path, base, corpus, keep) if p.is_file()]
    if path.is_file():
        return [path]
    raise AdapterError(f"{what} not found: {path}")


def doc_id_of(path: Path, suffixes: tuple[str, ...]) -> str:
    """The document id a file name gives: its name without one of ``suffixes``."""
    name = path.name
    for suffix in suffixes:
        if suffix and name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def index_texts(
    texts: Path,
    base: Path,
    corpus: Corpus,
    *,
    suffixes: tuple[str, ...] = (".txt",),
    any_name: bool = False,
) -> dict[str, Path]:
    """Document id -> raw text path, for every text file under ``texts`` (recursively).

    The id is the file name without its suffix. With ``any_name`` every regular
    file is a candidate (PDTB and CoNLL raw files have no extension); otherwise
    only files ending in one of ``suffixes``. Two files giving one id: the first
    in path order is used and the other reported.
    """
    index: dict[str, Path] = {}
    candidates = files_under(texts, base, corpus, None if any_name else lambda name: name.endswith(suffixes))
    for path in candidates:
        if not path.is_file() or (any_name and path.name.startswith(".")):
            continue
        shown = printable(relative(path, base))
        if shown is not None:
            corpus.findings.append(
                finding("filename-pattern", "raw text file name is not valid UTF-8", "file ignored; rename it", file=shown)
            )
            continue
        doc = doc_id_of(path, suffixes)
        if doc in index:
            corpus.findings.append(
                finding(
                    "duplicate-text",
                    f"raw texts {relative(index[doc], base)} and {relative(path, base)} both name document {doc}",
                    f"{relative(index[doc], base)} used",
                    file=relative(path, base),
                    doc=doc,
                )
            )
            continue
        index[doc] = path
    return index


def read_texts(
    docs: Iterable[str],
    index: dict[str, Path],
    base: Path,
    corpus: Corpus,
    conventions: TextConventions,
    *,
    encoding: str | None = None,
    fallback: str | None = None,
) -> None:
    """Decode the raw text of every document in ``docs`` into ``corpus.documents``, as ``conventions``
    say (in ``encoding`` when given, else theirs; then ``fallback``).

    A document whose text is not found, unreadable or undecodable gets
    ``text=None`` (validation then reports its annotations); the latter two are
    reported here.
    """
    for doc in sorted(docs):
        path = index.get(doc)
        corpus.documents[doc] = Document(doc_id=doc, text=None) if path is None else \
            _read_text(doc, path, relative(path, base), corpus, conventions, encoding, fallback)


def _read_text(doc: str, path: Path, name: str, corpus: Corpus, conventions: TextConventions, encoding: str | None,
               fallback: str | None) -> Document:
    """One document's raw text decoded (``text=None``, and a finding, when it cannot be read or decoded)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        corpus.findings.append(finding("file-unreadable", f"cannot read the raw text: {exc.strerror or exc}",
                                       "its annotations are left out; check the file and its permissions", file=name, doc=doc))
        return Document(doc_id=doc, text=None, source=name)
    sha = hashlib.sha256(raw).hexdigest()
    corpus.inputs.append(InputFile(path=name, role="text", size=len(raw), sha256=sha))
    try:
        decoded = conventions.decode(raw, encoding=encoding, fallback=fallback)
    except DecodeError as exc:
        corpus.findings.append(finding("encoding-error", f"raw text {exc}",
                                       "its annotations are left out; set [input] encoding_fallback (e.g. windows-1254)", file=name, doc=doc))
        return Document(doc_id=doc, text=None, source=name, size=len(raw), sha256=sha)
    if decoded.fallback_used:
        corpus.findings.append(finding("encoding-fallback", f"raw text is not valid {encoding or conventions.encoding}; decoded as {decoded.encoding}",
                                       "used the fallback decoding", file=name, doc=doc))
    return Document(doc_id=doc, text=decoded.text, source=name, encoding=decoded.encoding, newline=decoded.newline, bom=decoded.bom,
                    size=len(raw), sha256=sha)
