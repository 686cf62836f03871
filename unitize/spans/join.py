"""A span run's result joined from its parts (:mod:`unitize.spans.batch`): the header's files and texts, then each
part's findings, universe and segments, the same, byte for byte, however the corpus was cut into batches; the groups
in order, the layout chosen from the units of each group's documents, the labels coded across the parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc

from .. import layouts
from ..config import Settings
from ..errors import RunError
from ..model import Corpus, Document, Finding, Universe
from ..model.assigned import Assigned, Piece, joined_universe
from ..model.documents import stored_id
from ..model.findings import finding
from ..model.report_rows import Findings, Packed
from ..units.joined import joined
from ..units.unitizers import UnitSpace
from ..validate import Validation
from .batch import Part, RunContext
from .fragments import MAX_LABELS, UNLABELLED, accounting
from .matrices import Unitized


def combined(run: RunContext, header: Corpus, parts: list[Part]) -> Unitized:
    """The run's result from its parts: the header's files, texts and listing findings, then each part's."""
    settings, spaces, annotators = run.settings, run.spaces, run.annotators
    runs = [Packed.of(header.findings)]  # a part's findings hold its own batch's
    corpus = replace(
        header,
        submissions=[s for p in parts for s in p.submissions],
        findings=header.findings + [f for p in parts for f in p.read_findings],
        inputs=header.inputs + [i for p in parts for i in p.inputs],
        stream=None,
    )
    groups = run_groups(parts)
    labels = sorted(set().union(*(p.labels for p in parts)))
    if "labels" in settings.modes and len(labels) > MAX_LABELS:
        raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(run.layers)} have {len(labels)}")
    pieces: dict[str, list[Piece]] = {}
    expected: dict[str, list[str]] = {}
    for p in parts:  # a group over several batches: its documents added up (each id the header's string: settled)
        for group, docs in p.universe.items():
            pieces.setdefault(group, []).append(docs)
        p.universe = {}
        expected.update(p.expected)
        runs.append(p.findings)
    # a crowd study's group under a per-document assignment held as columns (model.assigned), not an entry per text
    universe: Universe = {group: joined_universe(pieces.pop(group)) for group in list(pieces)}
    validation = Validation(findings=[], universe=universe, annotators=expected)  # its findings: the result's
    units = group_units(spaces, validation, run.doc_dictionary)
    layout = layouts.choose(settings.layout, annotators=len(annotators), dense_rows=dense_rows(units, settings))
    layouts.refuse_too_wide(layout, {key: n * len(annotators) for key, n in units.items()}, len(annotators))
    results = {}
    for unit in settings.units:  # each part's result let go once joined: one unit type held twice at most
        results[unit] = joined(unit, [p.results.pop(unit) for p in parts], [p.groups for p in parts], groups,
                               run.layers, [p.labels for p in parts], labels)
        results[unit].let_go()  # the mapped pages joining read: not needed again until the segments are written
    findings = Findings([*runs, Packed.of(labels_ignored(settings, corpus, labels))]).mapped()
    return Unitized(
        settings=settings,
        corpus=corpus,
        validation=validation,
        groups=groups,
        layers=run.layers,
        annotators=annotators,
        spaces=spaces,
        results=results,
        findings=findings,
        accounting=accounting(corpus, [p.counts for p in parts], results),
        layout=layout,
        labels=labels,
    )


def settled(part: Part, documents: Mapping[str, Document]) -> Part:
    """``part`` with each document of its unit universe named by the id object ``documents`` holds it under (one string
    for every batch's copy): the copies a batch process sent back (2 M at the 10x crowd run, 130 MB) let go as each
    part comes in, not once every part is joined."""
    stored = partial(stored_id, documents)
    part.universe = {group: docs.with_ids(stored) if isinstance(docs, Assigned) else {stored(d): m for d, m in docs.items()}
                     for group, docs in part.universe.items()}
    return part


def run_groups(parts: list[Part]) -> list[str]:
    """The run's groups, from its parts': in ascending order over the parts, a group going on from one part into
    the next only with later documents (a crowd study, one group, read a batch of documents at a time)."""
    groups: list[str] = []
    last_doc: dict[str, str] = {}
    for p in parts:
        for g in p.groups:
            docs = p.universe.get(g, {})
            if groups and g == groups[-1] and p.groups[0] == g:
                if docs and g in last_doc and min(docs) <= last_doc[g]:
                    raise RuntimeError("a streaming reader's batches of one group must hold its documents in ascending order")
            elif groups and g <= groups[-1]:
                raise RuntimeError("a streaming reader's batches must hold their groups in ascending order")
            else:
                groups.append(g)
            if docs:
                last_doc[g] = max(docs)
    return groups


def group_units(spaces: dict[str, UnitSpace], validation: Validation, ids: pa.Array) -> dict[tuple[str, str], int]:
    """Units of each (unit type, group)'s documents (a group's dense matrix has these rows per layer). ``ids``: the
    documents of the unit spaces (every space has them, in one order), where a group's are found by Arrow (a crowd
    study's group has millions); a document of the universe without a text has no units."""
    out = {}
    for group, docs in validation.universe.items():
        at = pc.drop_null(pc.index_in(pa.array(list(docs), pa.string()), value_set=ids)).to_numpy(zero_copy_only=False)
        for unit, space in spaces.items():
            out[(unit, group)] = int(space.n_units[at].sum())
    return out


def dense_rows(units: dict[tuple[str, str], int], settings: Settings) -> int:
    """Rows of the largest setting's dense matrix (every unit of every group's documents, per layer)."""
    per_layer = 1 if set(settings.modes) == {"combined"} else len(set(settings.layers))
    totals: dict[str, int] = {}
    for (unit, _), n in units.items():
        totals[unit] = totals.get(unit, 0) + n
    return max(totals.values(), default=0) * per_layer


def labels_ignored(settings: Settings, corpus: Corpus, labels: list[str]) -> list[Finding]:
    """``labels-ignored`` when a span tool's spans (layers found in the data, not a discourse scheme's
    arguments, whose labels are senses) carry two labels or more and no setting is a label matrix."""
    named = [label for label in labels if label != UNLABELLED]
    if len(named) < 2 or "labels" in settings.modes or settings.layers_from == "label" or corpus.traits.default_layers != "found":
        return []
    shown = ", ".join(named[:6]) + (f", … ({len(named) - 6} more)" if len(named) > 6 else "")
    return [finding("labels-ignored", f"the spans carry {len(named)} labels ({shown}) but no setting has the labels mode: "
                    "agreement on these matrices counts two spans of different labels over the same units as agreement",
                    "add \"labels\" to [unitize] modes (or --modes separate,labels) for label matrices")]
