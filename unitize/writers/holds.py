"""Which records a target format can hold: the :class:`~unitize.model.traits.WriterTraits` applied to a corpus.

Every writer first asks :func:`holdable` for the span records it can write. An *element*
is what one record holds in one layer (its fragments); an element the target cannot
hold — a layer it has no place for, a second layer of a one-layer format, several
fragments, zero length, no label, a label it cannot spell, an overlap with an element
kept before it — is left out whole and named in a ``not-convertible`` finding of its
own (one per record, counted in the manifest). Nothing is dropped silently.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model import Corpus, Finding, Span
from ..model.findings import finding
from ..model.text import natural_key
from ..model.traits import WriterTraits

#: the one group of formats without groups (span tools; discourse formats read with ``group_by = "none"``)
ONE_GROUP = "all"
#: element key: (annotator, doc, group, record, layer)
Key = tuple[str, str, str, str, str]


def element_key(span: Span) -> Key:
    """The element a span record is a fragment of."""
    return (span.annotator, span.doc_id, span.group, span.record, span.layer)


def elements(spans: Iterable[Span]) -> dict[Key, list[Span]]:
    """Span records grouped into elements (fragments in fragment order), elements in reading order."""
    out: dict[Key, list[Span]] = defaultdict(list)
    for span in spans:
        out[element_key(span)].append(span)
    return {key: sorted(frags, key=lambda s: s.fragment) if len(frags) > 1 else frags for key, frags in out.items()}


def not_held(name: str, spans: list[Span], why: str, action: str = "not written") -> Finding:
    """The ``not-convertible`` finding of one element (``spans``: its fragments) the format ``name`` cannot hold."""
    first = spans[0]
    where = f"line {first.line}" if first.line is not None else f"record {first.record}"
    return finding(
        "not-convertible",
        f"{first.layer} {first.record!r} ({where}): {why}; {name} cannot hold it",
        action,
        file=first.source or None,
        record=first.record,
        doc=first.doc_id,
        group=first.group,
        annotator=first.annotator,
        layer=first.layer,
    )


@dataclass
class Held:
    """The span records a target can hold, and a finding for every element it cannot."""

    spans: list[Span] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: the one layer written by a one-layer format (``None``: every layer)
    layer: str | None = None
    #: ``spans`` as elements (:func:`elements`), in reading order
    elements: dict[Key, list[Span]] = field(default_factory=dict)


def chosen_layer(spans: list[Span], preferred: Iterable[str] = ()) -> str | None:
    """The layer a one-layer format keeps: the first of ``preferred`` (the study's layers) that has spans,
    else the layer with the most elements (ties: the first by name)."""
    counts = Counter(layer for (*_, layer) in elements(spans))
    for layer in preferred:
        if counts.get(layer):
            return layer
    return min(counts, key=lambda layer: (-counts[layer], layer)) if counts else None


def _why(frags: list[Span], traits: WriterTraits, layer: str | None, label: re.Pattern[str] | None) -> str | None:
    """Why an element cannot be held (ignoring overlaps), or ``None``."""
    first = frags[0]
    if traits.layers and first.layer not in traits.layers:
        return f"the layer {first.layer} has no place in the format (it holds {', '.join(traits.layers)})"
    if layer is not None and first.layer != layer:
        return f"the format holds one layer, and {layer} was written"
    if len(frags) > 1 and not traits.discontinuous:
        return f"it is discontinuous ({len(frags)} fragments)"
    if not traits.empty and any(s.begin == s.end for s in frags):
        return "it has zero length"
    if first.label is None and not traits.unlabelled:
        return "it has no label"
    if first.label is not None and label is not None and not label.fullmatch(first.label):
        return f"its label {first.label!r} cannot be written in the format"
    return None


def holdable(corpus: Corpus, traits: WriterTraits, name: str, *, preferred_layers: Iterable[str] = ()) -> Held:
    """The span records of ``corpus`` that ``traits`` can hold (see the module docstring), in reading order."""
    valid = [s for s in corpus.spans if s.valid]
    held = Held(layer=chosen_layer(valid, preferred_layers) if traits.one_layer else None)
    label = re.compile(traits.label) if traits.label is not None else None
    kept: dict[Key, list[Span]] = {}
    for key, frags in elements(valid).items():
        why = _why(frags, traits, held.layer, label)
        if why is None:
            kept[key] = frags
        else:
            held.findings.append(not_held(name, frags, why))
    if not traits.overlap:
        kept = _without_overlaps(kept, name, held.findings)
    held.elements = kept
    held.spans = [s for frags in kept.values() for s in frags]
    if not traits.groups:
        held.findings += _groups_lost(corpus, name)
    return held


def _groups_lost(corpus: Corpus, name: str) -> list[Finding]:
    """A finding per submission in a group other than the one group: the format has no place for groups."""
    out = []
    for sub in sorted({(s.annotator, s.doc_id, s.group, s.source) for s in corpus.submissions if s.group != ONE_GROUP}):
        annotator, doc, group, source = sub
        out.append(
            finding(
                "not-convertible",
                f"the group {group!r} (the sampling unit) of {annotator}'s {doc} has no place in {name}",
                "its records are written without it; a study reading them back has one group",
                file=source or None,
                doc=doc,
                group=group,
                annotator=annotator,
            )
        )
    return out


def _without_overlaps(kept: dict[Key, list[Span]], name: str, findings: list[Finding]) -> dict[Key, list[Span]]:
    """Per (annotator, document, group, layer), the elements in text order that overlap none kept before them."""
    lanes: dict[tuple[str, str, str, str], list[Key]] = defaultdict(list)
    for key in kept:
        lanes[(key[0], key[1], key[2], key[4])].append(key)
    out: dict[Key, list[Span]] = {}
    for keys in lanes.values():
        end = -1
        last: Key | None = None
        for key in sorted(keys, key=lambda k: (kept[k][0].begin, -kept[k][-1].end, natural_key(k[3]))):
            b, e = kept[key][0].begin, max(s.end for s in kept[key])
            if b < end and last is not None:
                findings.append(not_held(name, kept[key], f"it overlaps {last[4]} {last[3]!r} of the same annotator"))
                continue
            out[key] = kept[key]
            end, last = max(end, e), key
    return {key: out[key] for key in kept if key in out}
