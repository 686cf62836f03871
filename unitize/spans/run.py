"""The span kind of run: a corpus of text spans → a validated :class:`~unitize.spans.matrices.Unitized`.

Applies the format's defaults, runs the validation (RAT's rules), selects the
live fragments of the chosen layers (:mod:`unitize.spans.fragments`), resolves them into
segments for every unit type (:mod:`unitize.units.segments`) and keeps the record
accounting: every input record ends in a segment or in the report.

One route for every corpus: a header (documents, traits) and batches of whole groups
(:func:`_batches`). A streamed corpus (:class:`~unitize.model.SpanStream`) has a batch per
group range, each read and resolved in a forked process; a corpus read whole is the one
batch of itself, resolved here; the parts are joined into one result (:meth:`_Run.combined`),
the same, byte for byte, however the corpus was cut.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, MutableMapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import layouts
from ..config import ASSIGNMENT_AUTO, ASSIGNMENT_PER_DOCUMENT, CROWD_ABOVE, Settings
from ..errors import RunError
from ..model import Corpus, Document, Finding, InputFile, SpanStream, Submission, Universe
from ..model.documents import held_once, stored_id
from ..model.findings import finding
from ..model.report_rows import Findings, Packed
from ..model.traits import FormatTraits
from ..runtime.executors import Executor, cores, forked_pool, forks
from ..runtime.memory import give_back
from ..runtime.progress import Progress, Sized, no_progress
from ..runtime.spool import scratch_prefix
from ..units.joined import joined
from ..units.relations import relation_counts
from ..units.segments import UnitResult, resolve_segments
from ..units.spaces import build_spaces
from ..units.unitizers import UnitSpace
from ..validate import Validation, validate
from . import spill
from .fragments import MAX_LABELS, UNLABELLED, Counts, Fragments, accounting
from .matrices import Unitized

#: column names of the wide unit matrices an annotator may not take
RESERVED = {"group", "doc_id", "layer", "unit", "begin", "end"}


def _configured_annotators(settings: Settings) -> list[str] | None:
    """The annotators the study names (a list, or the keys of an annotator -> directory table)."""
    named = settings.input.get("annotators")
    return list(named) if named else None


def unitize_spans(corpus: Corpus, settings: Settings, progress: Progress = no_progress, executor: Executor | None = None) -> Unitized:
    """Validate and unitize a span corpus: segments for every unit type asked for, matrices on demand.

    ``executor`` (:mod:`unitize.runtime.executors`) tokenizes the documents, a chunk per task. A streamed
    corpus (:class:`~unitize.model.SpanStream`) is validated and resolved a batch of whole groups at
    a time, each batch's spans let go before the next is read; the result is the one a corpus
    holding every span gives.
    """
    settings = _format_defaults(settings, corpus)
    header, stream = _batches(corpus)
    give_back()  # what reading freed (a span table's columns, its rows' temporaries), before the spaces are built
    annotators = list(_configured_annotators(settings) or stream.annotators)
    clash = RESERVED & set(annotators)
    if clash:
        raise RunError(f"annotator name(s) {', '.join(sorted(clash))} clash with unit-matrix column names")
    spaces = build_spaces(header, settings.units, settings.tokenizer, progress, executor)
    # the labels matrices' marks: for a labels mode, or a corpus read whole (its result may be asked for any matrix)
    label_marks = "labels" in settings.modes or corpus.stream is None
    run = _Run(settings, annotators, sorted(set(settings.layers)), spaces, per_document(settings, header, annotators), label_marks)
    parts = _parts(run, header, stream, progress)
    _check_layers(settings, header, set().union(*(p.layers_found for p in parts)))
    return run.combined(header, parts)


def _batches(corpus: Corpus) -> tuple[Corpus, SpanStream]:
    """A corpus as its header (documents, traits, what listing the files found) and its batches of whole groups.

    A streamed corpus is both already; a corpus read whole is the one batch of itself, under a header that
    keeps its spans (for :attr:`Unitized.corpus`) but leaves its submissions, inputs and findings to the batch."""
    if corpus.stream is not None:
        return corpus, corpus.stream
    header = replace(corpus, submissions=[], inputs=[], findings=[])
    return header, SpanStream(corpus.annotators, [partial(_itself, corpus)])


def _itself(corpus: Corpus) -> Corpus:
    return corpus


def _parts(run: _Run, header: Corpus, stream: SpanStream, progress: Progress) -> list[_Part]:
    """The parts of a corpus, a batch each: the one place that decides where a batch is resolved. One batch
    (a corpus read whole) is resolved here; with several, each is read and resolved in a process of its own
    (forked, up to one per core), which leaves its segments tables in files that this process maps back: it
    never holds a batch's spans, nor the segments in its own memory."""
    work = partial(_batch_part, run, header.documents, header.traits)
    workers = min(stream.workers or cores(), cores(), len(stream.batches))
    if len(stream.batches) < 2 or not forks():  # two batches and one worker: forked too, this process stays small
        reading = progress if header.stream is not None else no_progress  # a corpus read whole was read by its adapter
        return [work(read) for read in reading(Sized(stream.handed(), len(stream.batches)), "reading annotations")]
    docs = run.doc_dictionary  # made before the processes fork: they share it
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("segments")) as folder:
        pool = forked_pool(workers, _hold, (partial(_spilled_part, work, Path(folder)),))  # the run's context inherited, not pickled
        assert pool is not None
        with pool:
            try:
                count = len(stream.batches)
                parts = list(progress(Sized(pool.map(_held, enumerate(stream.handed())), count), "reading annotations"))
            except BrokenProcessPool:
                raise RunError(f"a process reading a batch of groups ended abruptly (killed, or out of memory?); "
                               f"[input] workers = 1 reads one batch at a time ({workers} did)") from None
        for k, part in enumerate(parts):
            for unit, result in part.results.items():
                result.segments, mapped = spill.read_back(Path(folder), k, unit, docs)
                result.mapped.append(mapped)
    give_back()  # the batches' rows, let go as their processes took them, before the parts are joined
    return parts  # the files are gone; their mappings last as long as the tables


#: in a forked batch process: the work on a batch (:func:`_spilled_part` with the run's context), set when the process starts
_WORK: Callable[[tuple[int, Callable[[], Corpus]]], _Part] | None = None


def _hold(work: Callable[[tuple[int, Callable[[], Corpus]]], _Part]) -> None:
    global _WORK
    _WORK = work


def _held(batch: tuple[int, Callable[[], Corpus]]) -> _Part:
    """A batch's part by the work the process holds (only the batch itself is pickled to it)."""
    assert _WORK is not None, "a batch process holds its work from its start"
    return _WORK(batch)


def _spilled_part(work: Callable[[Callable[[], Corpus]], _Part], folder: Path, batch: tuple[int, Callable[[], Corpus]]) -> _Part:
    """Batch ``k``'s part, its segments tables written to ``folder`` (uncompressed Arrow IPC, to be
    memory-mapped) instead of sent back, its submissions not sent (counted: a streamed run's corpus holds
    neither its spans nor its submissions)."""
    k, read = batch
    part = work(read)
    part.submissions = []
    for unit, result in part.results.items():
        spill.write(folder, k, unit, result.segments)
        result.segments = result.segments.schema.empty_table()
    return part


def _batch_part(run: _Run, documents: MutableMapping[str, Document], traits: FormatTraits, read: Callable[[], Corpus]) -> _Part:
    """One batch of a streamed corpus, read and resolved (with the header's documents and traits)."""
    batch = read()
    named = itertools.chain((s.doc_id for s in batch.submissions), (s.doc_id for s in batch.spans))
    batch = replace(batch, documents=held_once(documents, named), traits=traits)
    return run.part(_layers_from_label(batch, run.settings))


@dataclass
class _Part:
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
class _Run:
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

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """Each document with a text: its index in the unit spaces (their ids sorted), made once for every batch."""
        return {d: i for i, d in enumerate(next(iter(self.spaces.values())).doc_ids)}

    def part(self, corpus: Corpus) -> _Part:
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
        live = Fragments(corpus, settings, validation, self.layers, self.annotators, self.doc_index)
        findings = list(validation.findings) + live.dropped_findings()
        results: dict[str, UnitResult] = {}
        for unit in settings.units:
            results[unit] = resolve_segments(unit, self.spaces[unit], corpus, live.frag, live.segs, live.names, self.doc_dictionary,
                                             labelled=self.label_marks)
            if corpus.traits.relations:  # counted here, a batch's groups at a time (they are whole)
                results[unit].relations = relation_counts(results[unit].segments)
            findings.extend(results[unit].findings)
            results[unit].findings = []  # they are the part's findings, packed below
        return _Part(
            groups=live.names["groups"], labels=live.names["labels"], layers_found={s.layer for s in corpus.spans},
            read_findings=corpus.findings, submissions=corpus.submissions, inputs=corpus.inputs, findings=Packed.of(findings),
            universe=validation.universe, expected=validation.annotators,
            results=results, counts=live.counts(results),
        )

    def combined(self, header: Corpus, parts: list[_Part]) -> Unitized:
        """The run's result from its parts: the header's files, texts and listing findings, then each part's."""
        settings, spaces, annotators = self.settings, self.spaces, self.annotators
        runs = [Packed.of(header.findings)]  # a part's findings hold its own batch's
        corpus = replace(
            header,
            submissions=[s for p in parts for s in p.submissions],
            findings=header.findings + [f for p in parts for f in p.read_findings],
            inputs=header.inputs + [i for p in parts for i in p.inputs],
            stream=None,
        )
        groups = _run_groups(parts)
        labels = sorted(set().union(*(p.labels for p in parts)))
        if "labels" in settings.modes and len(labels) > MAX_LABELS:
            raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(self.layers)} have {len(labels)}")
        universe: Universe = {}
        expected: dict[str, list[str]] = {}
        ids = header.documents
        for p in parts:  # a group over several batches: its documents added up, each id the header's string (not a copy per batch)
            for group, docs in p.universe.items():
                held = universe.setdefault(group, {})
                for doc, missing in docs.items():
                    held[stored_id(ids, doc)] = missing
            p.universe = {}  # its ids were copies (unpickled): let go now, not once every part is joined
            expected.update(p.expected)
            runs.append(p.findings)
        validation = Validation(findings=[], universe=universe, annotators=expected)  # its findings: the result's
        units = _group_units(spaces, validation, self.doc_dictionary)
        layout = layouts.choose(settings.layout, annotators=len(annotators), dense_rows=_dense_rows(units, settings))
        layouts.refuse_too_wide(layout, {key: n * len(annotators) for key, n in units.items()}, len(annotators))
        results = {}
        for unit in settings.units:  # each part's result let go once joined: one unit type held twice at most
            results[unit] = joined(unit, [p.results.pop(unit) for p in parts], [p.groups for p in parts], groups,
                                   self.layers, [p.labels for p in parts], labels)
            results[unit].let_go()  # the mapped pages joining read: not needed again until the segments are written
        findings = Findings([*runs, Packed.of(_labels_ignored(settings, corpus, labels))])
        return Unitized(
            settings=settings,
            corpus=corpus,
            validation=validation,
            groups=groups,
            layers=self.layers,
            annotators=annotators,
            spaces=spaces,
            results=results,
            findings=findings,
            accounting=accounting(corpus, [p.counts for p in parts], results),
            layout=layout,
            labels=labels,
        )


def _run_groups(parts: list[_Part]) -> list[str]:
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


def _layers_from_label(corpus: Corpus, settings: Settings) -> Corpus:
    """The corpus with each span's label as its layer (``layers_from = "label"``; unlabelled spans keep theirs)."""
    if settings.layers_from != "label":
        return corpus
    return replace(corpus, spans=[replace(s, layer=s.label if s.label is not None else s.layer) for s in corpus.spans])


def _group_units(spaces: dict[str, UnitSpace], validation: Validation, ids: pa.Array) -> dict[tuple[str, str], int]:
    """Units of each (unit type, group)'s documents (a group's dense matrix has these rows per layer). ``ids``: the
    documents of the unit spaces (every space has them, in one order), where a group's are found by Arrow (a crowd
    study's group has millions); a document of the universe without a text has no units."""
    out = {}
    for group, docs in validation.universe.items():
        at = pc.drop_null(pc.index_in(pa.array(list(docs), pa.string()), value_set=ids)).to_numpy(zero_copy_only=False)
        for unit, space in spaces.items():
            out[(unit, group)] = int(space.n_units[at].sum())
    return out


def _dense_rows(units: dict[tuple[str, str], int], settings: Settings) -> int:
    """Rows of the largest setting's dense matrix (every unit of every group's documents, per layer)."""
    per_layer = 1 if set(settings.modes) == {"combined"} else len(set(settings.layers))
    totals: dict[str, int] = {}
    for (unit, _), n in units.items():
        totals[unit] = totals.get(unit, 0) + n
    return max(totals.values(), default=0) * per_layer


def per_document(settings: Settings, corpus: Corpus, annotators: list[str]) -> bool:
    """Whether each document has its own annotators (``[unitize] assignment``): an annotator absent from a
    document was not assigned it, and is missing there without a finding, the document kept. ``auto``:
    when the input assigns documents (a roster) or the study has more than :data:`~unitize.config.CROWD_ABOVE`
    annotators (crowd data); else every annotator is expected on every document (RAT's rule)."""
    if settings.assignment != ASSIGNMENT_AUTO:
        return settings.assignment == ASSIGNMENT_PER_DOCUMENT
    return corpus.assigned or len(annotators) > CROWD_ABOVE


def _check_layers(settings: Settings, corpus: Corpus, found: set[str]) -> None:
    """Every layer asked for occurs in the corpus (``found``: its spans' layers) or is one of its format's layers.

    A corpus with no span at all says nothing about its layers: the findings say why
    (and a conversion that keeps nothing fails with them).
    """
    if not found:
        return
    known = set(corpus.traits.layers) | found
    unknown = [layer for layer in settings.layers if layer not in known]
    if unknown:
        aliases = corpus.traits.layer_aliases
        hints = [f"{u!r} is read as {aliases[u]!r}" for u in unknown if u in aliases]
        raise RunError(
            f"layer(s) {', '.join(map(repr, unknown))} do not occur in format {corpus.format!r}; "
            f"its layers are {', '.join(sorted(known))}" + (f" ({'; '.join(hints)})" if hints else "")
        )


def _labels_ignored(settings: Settings, corpus: Corpus, labels: list[str]) -> list[Finding]:
    """``labels-ignored`` when a span tool's spans (layers found in the data, not a discourse scheme's
    arguments, whose labels are senses) carry two labels or more and no setting is a label matrix."""
    named = [label for label in labels if label != UNLABELLED]
    if len(named) < 2 or "labels" in settings.modes or settings.layers_from == "label" or corpus.traits.default_layers != "found":
        return []
    shown = ", ".join(named[:6]) + (f", … ({len(named) - 6} more)" if len(named) > 6 else "")
    return [finding("labels-ignored", f"the spans carry {len(named)} labels ({shown}) but no setting has the labels mode: "
                    "agreement on these matrices counts two spans of different labels over the same units as agreement",
                    "add \"labels\" to [unitize] modes (or --modes separate,labels) for label matrices")]


def _format_defaults(settings: Settings, corpus: Corpus) -> Settings:
    """Settings with the format's own defaults where the user kept the built-in ones.

    A format's traits may declare ``default_layers = "found"`` (every layer — or label,
    with ``layers_from = "label"`` — that occurs) and a ``tokenizer`` (``"given"`` for
    formats that carry their tokens); they replace the built-in defaults ``Arg1, Arg2``
    and ``spacy:xx`` only when those were left unchanged.
    """
    traits = corpus.traits
    builtin = Settings.__dataclass_fields__
    changes: dict[str, Any] = {}
    if settings.layers == builtin["layers"].default and traits.default_layers == "found":
        by_label = settings.layers_from == "label"
        kinds = {(s.layer, s.label) for s in corpus.spans} or (corpus.stream.kinds if corpus.stream is not None else set())
        found = sorted({label if by_label and label is not None else layer for layer, label in kinds}) or list(traits.layers)
        if found:
            changes["layers"] = tuple(found)
    if settings.tokenizer == builtin["tokenizer"].default and traits.tokenizer is not None:
        changes["tokenizer"] = traits.tokenizer
    return replace(settings, **changes) if changes else settings
