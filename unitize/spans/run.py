"""The span kind of run: a corpus of text spans → a validated :class:`~unitize.spans.matrices.Unitized`.

Applies the format's defaults, runs the validation (RAT's rules), selects the
live fragments of the chosen layers (:mod:`unitize.spans.fragments`), resolves them into
segments for every unit type (:mod:`unitize.units.segments`), a batch at a time
(:mod:`unitize.spans.batch`), and keeps the record accounting: every input record ends in a
segment or in the report.

One route for every corpus: a header (documents, traits) and batches of whole groups
(:func:`_batches`). A streamed corpus (:class:`~unitize.model.SpanStream`) has a batch per
group range, each read and resolved in a forked process; a corpus read whole is the one
batch of itself, resolved here; the parts are joined into one result (:func:`unitize.spans.join.combined`),
the same, byte for byte, however the corpus was cut.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, MutableMapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..config import ASSIGNMENT_AUTO, ASSIGNMENT_PER_DOCUMENT, CROWD_ABOVE, Settings
from ..errors import RunError
from ..model import Corpus, Document, SpanStream
from ..model.documents import held_once
from ..model.report_rows import RunSpool
from ..model.traits import FormatTraits
from ..runtime.executors import Executor, cores, forked_pool, forks
from ..runtime.mapped import let_go_all
from ..runtime.memory import give_back
from ..runtime.progress import Progress, Sized, no_progress
from ..runtime.spool import scratch_prefix
from ..units.spaces import build_spaces
from . import spill
from .batch import Part, RunContext
from .join import combined, settled
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
    give_back()  # the texts' pages tokenizing read, before the batch processes fork
    # the labels matrices' marks: for a labels mode, or a corpus read whole (its result may be asked for any matrix)
    label_marks = "labels" in settings.modes or corpus.stream is None
    run = RunContext(settings, annotators, sorted(set(settings.layers)), spaces, per_document(settings, header, annotators), label_marks)
    parts = _parts(run, header, stream, progress)
    _check_layers(settings, header, set().union(*(p.layers_found for p in parts)))
    return combined(run, header, parts)


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


def _parts(run: RunContext, header: Corpus, stream: SpanStream, progress: Progress) -> list[Part]:
    """The parts of a corpus, a batch each: the one place that decides where a batch is resolved. One batch
    (a corpus read whole) is resolved here; with several, each is read and resolved in a process of its own
    (forked, up to one per core), which leaves its segments tables in files that this process maps back: it
    never holds a batch's spans, nor the segments in its own memory."""
    work = partial(_batch_part, run, header.documents, header.traits)
    workers = min(stream.workers or cores(), cores(), len(stream.batches))
    if len(stream.batches) < 2 or not forks():  # two batches and one worker: forked too, this process stays small
        reading = progress if header.stream is not None else no_progress  # a corpus read whole was read by its adapter
        return [settled(work(read), header.documents) for read in reading(Sized(stream.handed(), len(stream.batches)), "reading annotations")]
    docs = run.doc_dictionary  # made before the processes fork: they share it
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("segments")) as folder:
        pool = forked_pool(workers, _hold, (partial(_spilled_part, work, Path(folder)),))  # the run's context inherited, not pickled
        assert pool is not None
        with pool:
            try:
                count, parts, findings = len(stream.batches), [], RunSpool()
                for part in progress(Sized(pool.map(_held, enumerate(stream.handed())), count), "reading annotations"):
                    findings.add(part.findings)  # to a scratch file as they come, not all held until the report
                    parts.append(settled(part, header.documents))
                    let_go_all()  # the pages of the mapped batches read to send them (250 MB over a 2 M text run)
                findings.done()
            except BrokenProcessPool:
                raise RunError(f"a process reading a batch of groups ended abruptly (killed, or out of memory?); "
                               f"[input] workers = 1 reads one batch at a time ({workers} did)") from None
        for k, part in enumerate(parts):
            for unit, result in part.results.items():
                result.segments, mapped = spill.read_back(Path(folder), k, unit, docs)
                # the marks' mappings live as long as the arrays (till the join copies them), not as long as the result
                result.marks = spill.read_marks(Path(folder), k, unit, result.marks)
                result.mapped.append(mapped)
    give_back()  # the batches' rows, let go as their processes took them, before the parts are joined
    return parts  # the files are gone; their mappings last as long as the tables


#: in a forked batch process: the work on a batch (:func:`_spilled_part` with the run's context), set when the process starts
_WORK: Callable[[tuple[int, Callable[[], Corpus]]], Part] | None = None


def _hold(work: Callable[[tuple[int, Callable[[], Corpus]]], Part]) -> None:
    global _WORK
    _WORK = work


def _held(batch: tuple[int, Callable[[], Corpus]]) -> Part:
    """A batch's part by the work the process holds (only the batch itself is pickled to it)."""
    assert _WORK is not None, "a batch process holds its work from its start"
    return _WORK(batch)


def _spilled_part(work: Callable[[Callable[[], Corpus]], Part], folder: Path, batch: tuple[int, Callable[[], Corpus]]) -> Part:
    """Batch ``k``'s part, its segments tables written to ``folder`` (uncompressed Arrow IPC, to be
    memory-mapped) instead of sent back, its submissions not sent (counted: a streamed run's corpus holds
    neither its spans nor its submissions)."""
    k, read = batch
    part = work(read)
    part.submissions = []
    for unit, result in part.results.items():
        spill.write(folder, k, unit, result.segments)
        result.segments = result.segments.schema.empty_table()
        result.marks = spill.write_marks(folder, k, unit, result.marks)
    # the pages of the run's mapped arrays this batch read (the token extents its words were found in, its texts): a
    # process holds them until let go, and over its batches it read them all (770 MB at 2 M texts), each batch's
    # memory freed with them
    give_back()
    return part


def _batch_part(run: RunContext, documents: MutableMapping[str, Document], traits: FormatTraits, read: Callable[[], Corpus]) -> Part:
    """One batch of a streamed corpus, read and resolved (with the header's documents and traits)."""
    batch = read()
    named = itertools.chain((s.doc_id for s in batch.submissions), (s.doc_id for s in batch.spans))
    batch = replace(batch, documents=held_once(documents, named), traits=traits)
    return run.part(_layers_from_label(batch, run.settings))


def _layers_from_label(corpus: Corpus, settings: Settings) -> Corpus:
    """The corpus with each span's label as its layer (``layers_from = "label"``; unlabelled spans keep theirs)."""
    if settings.layers_from != "label":
        return corpus
    return replace(corpus, spans=[replace(s, layer=s.label if s.label is not None else s.layer) for s in corpus.spans])


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
