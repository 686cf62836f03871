"""Groups of discourse relations: the sampling unit agreement is measured over (DESIGN.md §2).

A relation's group is its connective (the lower-cased text of its connective
span, invisible characters dropped), its type, its sense cut to some levels, or
:data:`ALL`; :func:`submissions` gives every (annotator, document) file a
submission in each group of its document, so an annotator with the document but
no relation of a group has 0 relations there, and one without the file is missing.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from ..model import Corpus, Submission
from . import AdapterError

GROUP_BY = ("connective", "type", "sense", "none")
#: the one group of ``group_by = "none"``
ALL = "all"
#: characters dropped from group names taken from text: the BOM (zero-width no-break
#: space), zero-width space, non-joiner and joiner, word joiner. Invisible, yet they
#: would make ``\ufeffkai`` a group beside ``kai``.
INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"))
_SENSE_SEPARATOR = re.compile(r"\s*[.:]\s*")


def sense_prefix(sense: str, level: int | None) -> str:
    """The first ``level`` levels of a sense (``Contingency.Cause.Reason`` at 2 -> ``Contingency.Cause``)."""
    if level is None:
        return sense
    cuts = [m.start() for m in _SENSE_SEPARATOR.finditer(sense)]
    return sense if len(cuts) < level else sense[: cuts[level - 1]]


def check_grouping(group_by: str, sense_level: int | None) -> None:
    """Reject unknown ``group_by`` values and non-positive sense levels."""
    if group_by not in GROUP_BY:
        raise AdapterError(f"group_by must be one of {', '.join(GROUP_BY)}, not {group_by!r}")
    if sense_level is not None and (isinstance(sense_level, bool) or not isinstance(sense_level, int) or sense_level < 1):
        raise AdapterError(f"sense_level must be a positive integer, not {sense_level!r}")


def group_name(group_by: str, level: int | None, *, connective: str, type_: str | None, sense: str | None) -> str:
    """A relation's group: its connective, type, sense (first ``level`` levels), or :data:`ALL`."""
    if group_by == "connective":
        return connective
    if group_by == "type":
        return type_ or "(no type)"
    if group_by == "sense":
        return sense_prefix(sense, level) if sense else f"({type_ or 'no sense'})"
    return ALL


def submissions(
    files: dict[tuple[str, str], str], counts: Counter[tuple[str, str, str]], every_doc: bool
) -> list[Submission]:
    """One submission per (annotator, document) file and group of that document.

    A document's groups are the union over its annotators (plus :data:`ALL` for
    every document with ``every_doc``): an annotator who has the document but no
    relation of a group has 0 relations there; one without the document is missing.
    """
    doc_groups: dict[str, set[str]] = defaultdict(set)
    for _annotator, doc, group in counts:
        doc_groups[doc].add(group)
    if every_doc:
        for _, doc in files:
            doc_groups[doc].add(ALL)
    return [
        Submission(source, annotator, doc, group, counts.get((annotator, doc, group), 0))
        for (annotator, doc), source in sorted(files.items())
        for group in sorted(doc_groups[doc])
    ]


def regroup(corpus: Corpus, group_by: str, sense_level: int | None) -> None:
    """Give the spans of a corpus read one file per (document, annotator, connective) new groups.

    ``type`` and ``sense`` come from each relation's ``type`` attribute and
    label; ``none`` puts every relation of a document in :data:`ALL`. The
    submissions are rebuilt per (annotator, document, group) over the union of
    a document's groups, so an annotator with files for a document has 0
    relations in a group only others used, and is missing only where no file
    of that document exists.
    """
    check_grouping(group_by, sense_level)
    if group_by == "connective":
        return
    relations: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    for span in corpus.spans:
        span.group = group_name(
            group_by, sense_level, connective=span.group, type_=span.attrs.get("type"), sense=span.label
        )
        relations[(span.annotator, span.doc_id, span.group)].add((span.source, span.record))
    files: dict[tuple[str, str], str] = {}
    for sub in sorted(corpus.submissions, key=lambda s: s.source):
        files.setdefault((sub.annotator, sub.doc_id), sub.source)
    counts = Counter({key: len(records) for key, records in relations.items()})
    corpus.submissions = submissions(files, counts, every_doc=group_by == "none")
