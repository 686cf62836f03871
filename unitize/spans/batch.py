"""One batch of a span run: the run's fixed context (:class:`RunContext`) validates and resolves a corpus — a whole
one, or a streamed corpus's batch of whole groups — into a :class:`Part`: its names, validation outcome, segments,
packed findings and counts, never its spans. :mod:`unitize.spans.join` makes the run's result of the parts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa

from ..config import Settings
from ..model import Corpus, Finding, InputFile, Submission, Universe
from ..model.assigned import assigned
from ..model.codes import position
from ..model.report_rows import Packed
from ..units.relations import relation_counts
from ..units.segments import UnitResult, resolve_segments
from ..units.unitizers import UnitSpace
from ..validate import validate
from .fragments import Counts, Fragments


@dataclass
class Part:
    """What one batch of whole groups gives the run: its names, validation outcome, segments and counts
    (never its spans). Group and label indices in its marks are the batch's own."""

    groups: list[str]
    labels: list[str]
    layers_found: set[str]
    read_findings: list[Finding]
    submissions: list[Submission]
    inputs: list[InputFile]
    findings: Packed  # packed where they were made: a crowd batch's hundreds of thousands of info rows
    universe: Universe
    expected: dict[str, list[str]]
    results: dict[str, UnitResult]
    counts: Counts




@dataclass
class RunContext:
    """A span run's fixed context: the settings with the format's defaults, the study's annotators, the
    selected layers, the unit spaces of every document, the validation's assignment rule and whether the
    labels matrices' marks are made."""

    settings: Settings
    annotators: list[str]
    layers: list[str]
    spaces: dict[str, UnitSpace]
    per_document: bool
    label_marks: bool = True

    @cached_property
    def doc_dictionary(self) -> pa.Array:
        """The documents with a text, in the unit spaces' order, as the segments tables' ``doc_id`` dictionary (one
        array for every batch)."""
        return pa.array(next(iter(self.spaces.values())).doc_ids, pa.string())

    def doc_index(self, docs: Iterable[str]) -> dict[str, int]:
        """Each of ``docs`` that has a text: its index in the unit spaces, found by bisection in their ids (sorted) — a
        batch's documents, not a dict of every document of the run in each batch process (2 M at the 10x crowd run)."""
        ids = next(iter(self.spaces.values())).doc_ids
        return {doc: i for doc in set(docs) if (i := position(ids, doc)) is not None}

    def part(self, corpus: Corpus) -> Part:
        """Validate and resolve one corpus (a whole one, or a batch of whole groups)."""
        settings = self.settings
        validation = validate(
            corpus,
            annotators=self.annotators,
            keep_missing=settings.keep_missing,
            keep_mismatched=settings.keep_mismatched,
            boundaries=corpus.traits.check_boundaries,
            per_document=self.per_document,
            count_rule=corpus.traits.count_rule,
        )
        live = Fragments(corpus, settings, validation, self.layers, self.annotators, self.doc_index(s.doc_id for s in corpus.spans))
        findings = list(validation.findings) + live.dropped_findings()
        results: dict[str, UnitResult] = {}
        for unit in settings.units:
            results[unit] = resolve_segments(unit, self.spaces[unit], corpus, live.frag, live.segs, live.names, self.doc_dictionary,
                                             labelled=self.label_marks)
            if corpus.traits.relations:  # counted here, a batch's groups at a time (they are whole)
                results[unit].relations = relation_counts(results[unit].segments)
            findings.extend(results[unit].findings)
            results[unit].findings = []  # they are the part's findings, packed below
        return Part(
            groups=live.names["groups"], labels=live.names["labels"], layers_found={s.layer for s in corpus.spans},
            read_findings=corpus.findings, submissions=corpus.submissions, inputs=corpus.inputs, findings=Packed.of(findings),
            universe={group: assigned(docs.items()) for group, docs in validation.universe.items()},  # columns: sent back small
            expected=validation.annotators,
            results=results, counts=live.counts(results),
        )
