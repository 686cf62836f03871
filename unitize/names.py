"""Names are data: the one way a name from an input becomes part of a file's path.

A document id, an annotator, a group or a layer comes from an input file and may be anything:
``../../etc/passwd``, ``/abs``, a NUL, a newline, 300 characters, ``CON``. :func:`file_name`
keeps a readable name as it is and percent-encodes what a file system would take as
something else (separators, ``%``, control characters, a leading ``.``, a trailing ``.`` or
space, a reserved device name), so :func:`original` gives the name back; a name too long for
one path component keeps a readable head and ends in ``~`` and a hash of the whole name.
:class:`FileNames` hands out the names of one destination, telling apart names that a
case-insensitive file system would mix up, and keeps every name it changed (the manifest
and the written study file map them back). :func:`inside` is the last check before a file is
opened: the path stays inside its destination.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from .model import Corpus

#: a name's share of one path component, in UTF-8 bytes (file systems allow 255; a suffix and a
#: writer's own parts, such as DATT's ``<doc>_<annotator>_<group>.xml``, need the rest)
MAX_BYTES = 120
#: the length of the hash that ends a shortened name
_HASH = 12
_UNSAFE = frozenset('/\\<>:"|?*%')
#: names Windows gives to devices, with or without an extension
_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))]
)
#: what :func:`file_name` makes of the empty name (``%`` alone is never the encoding of anything else)
_EMPTY = "%"


def _encoded(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def _plain(char: str) -> bool:
    """Whether ``char`` may stand as itself in a file name: not a separator, reserved or control character."""
    return char not in _UNSAFE and unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def digest(name: str, size: int = _HASH) -> str:
    """A short, stable hash of ``name`` (hex)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def file_name(name: str, limit: int = MAX_BYTES) -> str:
    """``name`` as one path component: itself when safe, else reversibly encoded (see the module); at most
    ``limit`` UTF-8 bytes (a longer one is cut and ends in ``~`` and a hash of the whole name)."""
    if not name:
        return _EMPTY
    parts = [c if _plain(c) else _encoded(c) for c in name]
    if name[0] in ". ":
        parts[0] = _encoded(name[0])
    if name[-1] in ". " and len(name) > 1:
        parts[-1] = _encoded(name[-1])
    if name.split(".")[0].upper().rstrip(" ") in _RESERVED:
        parts[0] = _encoded(name[0])
    encoded = "".join(parts)
    if len(encoded.encode("utf-8")) <= limit:
        return encoded
    room, head = limit - _HASH - 1, []
    for part in parts:
        room -= len(part.encode("utf-8"))
        if room < 0:
            break
        head.append(part)
    return "".join(head) + "~" + digest(name)


def file_path(name: str, limit: int = MAX_BYTES) -> str:
    """A name that may name sub-folders (``a/b``, as brat's documents do) as a relative path: each part by
    :func:`file_name`; a name with an empty, ``.`` or ``..`` part (``/abs``, ``a//b``, ``../x``) as one encoded component."""
    parts = name.split("/")
    if len(parts) == 1 or not all(part not in ("", ".", "..") for part in parts):
        return file_name(name, limit)
    return "/".join(file_name(part, limit) for part in parts)


def original(component: str) -> str:
    """The name :func:`file_name` encoded as ``component`` (a shortened name has no way back but the mapping
    :class:`FileNames` keeps)."""
    if component == _EMPTY:
        return ""
    return unquote(component, errors="surrogatepass")


class FileNames:
    """The file names of one destination, by kind of name (``documents``, ``annotators``, ``groups``, …).

    Each name gets :func:`file_path`'s form; two names whose forms differ only in case (a case-insensitive
    file system would take them for one file) are told apart by a hash. :attr:`changed` maps, per kind,
    every form that differs from its name back to the name."""

    def __init__(self, limit: int = MAX_BYTES):
        self.limit = limit
        self._given: dict[tuple[str, str], str] = {}
        self._owner: dict[tuple[str, str], str] = {}
        self.changed: dict[str, dict[str, str]] = {}

    def __call__(self, kind: str, name: str, *, nested: bool = False, limit: int | None = None) -> str:
        """The path form of ``name``, a name of ``kind`` (``nested``: it may name sub-folders; ``limit``: bytes
        of each component, when not the destination's)."""
        key = (kind, name)
        if key in self._given:
            return self._given[key]
        bound = limit or self.limit
        form = file_path(name, bound) if nested else file_name(name, bound)
        if self._owner.setdefault((kind, form.casefold()), name) != name:
            form = f"{form}~{digest(kind + chr(0) + name)}"
            self._owner[(kind, form.casefold())] = name
        self._given[key] = form
        if form != name:
            self.changed.setdefault(kind, {})[form] = name
        return form


class PathEscape(ValueError):
    """A relative path that would leave its destination."""


def inside(root: Path, relative: str) -> Path:
    """``root / relative``, checked: ``relative`` is relative, names no ``..``, NUL or over-long component, and
    the joined path, symbolic links followed, lies inside ``root``."""
    pure = PurePosixPath(relative)
    if (
        not relative
        or "\0" in relative
        or "\\" in relative
        or pure.is_absolute()
        or any(part in ("", ".", "..") for part in relative.split("/"))
        or any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in pure.parts)
    ):
        raise PathEscape(f"{relative!r} is not a plain relative path of files and folders")
    path = root / relative
    if not path.resolve().is_relative_to(root.resolve()):
        raise PathEscape(f"{relative!r} leads outside {root}")
    return path


#: the kinds of name a study file's ``[input.names]`` maps back
KINDS = ("documents", "annotators", "groups")


def file_names(table: object) -> dict[str, dict[str, str]]:
    """A study's ``[input.names]`` checked: per kind of :data:`KINDS`, file form -> the name it stands for."""
    if table is None:
        return {}
    if not isinstance(table, dict) or not set(table) <= set(KINDS):
        raise ValueError(f"[input.names] must hold tables named {', '.join(KINDS)}")
    for kind, forms in table.items():
        if not isinstance(forms, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in forms.items()):
            raise ValueError(f"[input.names.{kind}] must map file names to names (strings)")
    return {kind: dict(forms) for kind, forms in table.items() if forms}


def named(corpus: Corpus, names: dict[str, dict[str, str]]) -> Corpus:
    """``corpus`` with the names its files stood for (``names``: :func:`file_names`), for the documents,
    annotators and groups of its spans, submissions, findings and documents (a streamed corpus's batches too)."""
    if not names:
        return corpus
    docs, annotators, groups = (names.get(kind, {}) for kind in KINDS)
    for span in corpus.spans:
        span.doc_id = docs.get(span.doc_id, span.doc_id)
        span.annotator = annotators.get(span.annotator, span.annotator)
        span.group = groups.get(span.group, span.group)
    for f in corpus.findings:
        f.doc = docs.get(f.doc, f.doc) if f.doc else f.doc
        f.annotator = annotators.get(f.annotator, f.annotator) if f.annotator else f.annotator
        f.group = groups.get(f.group, f.group) if f.group else f.group
    for item in corpus.items if isinstance(corpus.items, list) else ():
        item.annotator = annotators.get(item.annotator, item.annotator)
    stream = corpus.stream
    if stream is not None:
        stream = replace(stream, annotators=[annotators.get(a, a) for a in stream.annotators],
                         batches=[functools.partial(_named_batch, batch, names) for batch in stream.batches])
    return replace(
        corpus,
        documents={docs.get(k, k): replace(d, doc_id=docs.get(k, k)) for k, d in corpus.documents.items()},
        submissions=[
            replace(s, doc_id=docs.get(s.doc_id, s.doc_id), annotator=annotators.get(s.annotator, s.annotator), group=groups.get(s.group, s.group))
            for s in corpus.submissions
        ],
        not_selected={annotators.get(a, a) for a in corpus.not_selected},
        stream=stream,
    )


def _named_batch(batch: Callable[[], Corpus], names: dict[str, dict[str, str]]) -> Corpus:
    return named(batch(), names)
