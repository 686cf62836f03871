"""The span kind of run: a corpus of text spans → a validated :class:`~unitize.matrices.Unitized`.

Applies the format's defaults, runs the validation (RAT's rules), selects the
live fragments of the chosen layers, resolves them into segments for every
unit type (:mod:`unitize.segments`) and keeps the record accounting: every
input record ends in a segment or in the report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import layouts
from .config import ASSIGNMENT_AUTO, ASSIGNMENT_PER_DOCUMENT, CROWD_ABOVE, Settings
from .errors import RunError
from .executors import Executor
from .findings import QUOTE_CODES, QUOTE_OUTCOME, finding, sort_key, span_finding
from .matrices import Unitized
from .model import Corpus, Finding, InputFile, Span, Submission
from .progress import Progress, Sized, no_progress
from .segments import FragmentNames, UnitResult, joined, resolve_segments
from .spaces import build_spaces
from .unitizers import UnitSpace, fragments_to_segments
from .validate import Validation, validate

#: column names of the wide unit matrices an annotator may not take
RESERVED = {"group", "doc_id", "layer", "unit", "begin", "end"}
#: labels mode: the label of a span that has none
UNLABELLED = "*"
#: labels mode codes labels as bits of a uint64
MAX_LABELS = 64


def _configured_annotators(settings: Settings) -> list[str] | None:
    """The annotators the study names (a list, or the keys of an annotator -> directory table)."""
    named = settings.input.get("annotators")
    return list(named) if named else None


def unitize_spans(corpus: Corpus, settings: Settings, progress: Progress = no_progress, executor: Executor | None = None) -> Unitized:
    """Validate and unitize a span corpus: segments for every unit type asked for, matrices on demand.

    ``executor`` (:mod:`unitize.executors`) tokenizes the documents, a chunk per task. A streamed
    corpus (:class:`~unitize.model.SpanStream`) is validated and resolved a batch of whole groups at
    a time, each batch's spans let go before the next is read; the result is the one a corpus
    holding every span gives.
    """
    corpus = _layers_from_label(corpus, settings)
    settings = _format_defaults(settings, corpus)
    stream = corpus.stream
    annotators = list(_configured_annotators(settings) or (stream.annotators if stream is not None else corpus.annotators))
    clash = RESERVED & set(annotators)
    if clash:
        raise RunError(f"annotator name(s) {', '.join(sorted(clash))} clash with unit-matrix column names")
    if stream is None:
        _check_layers(settings, corpus, {s.layer for s in corpus.spans})
    spaces = build_spaces(corpus, settings.units, settings.tokenizer, progress, executor)
    run = _Run(settings, annotators, sorted(set(settings.layers)), spaces, per_document(settings, corpus, annotators))
    if stream is None:
        return run.combined(corpus, [run.part(corpus)])
    batches = (_layers_from_label(replace(batch, documents=corpus.documents, traits=corpus.traits), settings) for batch in stream.batches())
    parts = [run.part(batch) for batch in progress(Sized(batches, stream.size), "reading annotations")]
    _check_layers(settings, corpus, set().union(*(p.layers_found for p in parts)))
    return run.combined(corpus, parts)


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
    findings: list[Finding]
    universe: dict[str, dict[str, frozenset[str]]]
    expected: dict[str, list[str]]
    present: dict[str, dict[str, list[int]]]
    results: dict[str, UnitResult]
    counts: _Counts


@dataclass
class _Run:
    """A span run's fixed context: the settings with the format's defaults, the study's annotators, the
    selected layers, the unit spaces of every document and the validation's assignment rule."""

    settings: Settings
    annotators: list[str]
    layers: list[str]
    spaces: dict[str, UnitSpace]
    per_document: bool

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
        live = _Fragments(corpus, settings, validation, self.layers, self.annotators)
        findings = list(validation.findings) + live.dropped_findings()
        results: dict[str, UnitResult] = {}
        for unit in settings.units:
            results[unit] = resolve_segments(unit, self.spaces[unit], corpus, live.frag, live.segs, live.names)
            findings.extend(results[unit].findings)
        return _Part(
            groups=live.names["groups"], labels=live.names["labels"], layers_found={s.layer for s in corpus.spans},
            read_findings=corpus.findings, submissions=corpus.submissions, inputs=corpus.inputs, findings=findings,
            universe=validation.universe, expected=validation.annotators,
            present=_present(corpus, validation, {a: i for i, a in enumerate(self.annotators)}),
            results=results, counts=live.counts(results),
        )

    def combined(self, corpus: Corpus, parts: list[_Part]) -> Unitized:
        """The run's result from its parts (one part: a corpus read whole)."""
        settings, spaces, annotators = self.settings, self.spaces, self.annotators
        streamed = corpus.stream is not None  # the corpus is the header: files, texts and listing findings only
        findings = list(corpus.findings) if streamed else []  # a part's findings hold its own corpus's
        if streamed:
            corpus = replace(
                corpus,
                submissions=[s for p in parts for s in p.submissions],
                findings=corpus.findings + [f for p in parts for f in p.read_findings],
                inputs=corpus.inputs + [i for p in parts for i in p.inputs],
                stream=None,
            )
        groups = [g for p in parts for g in p.groups]
        if groups != sorted(set(groups)):
            raise RuntimeError("a streaming reader's batches must hold disjoint groups in ascending order")
        labels = sorted(set().union(*(p.labels for p in parts)))
        if "labels" in settings.modes and len(labels) > MAX_LABELS:
            raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(self.layers)} have {len(labels)}")
        universe: dict[str, dict[str, frozenset[str]]] = {}
        expected: dict[str, list[str]] = {}
        present: dict[str, dict[str, list[int]]] = {}
        for p in parts:
            universe.update(p.universe)
            expected.update(p.expected)
            present.update(p.present)
            findings += p.findings
        validation = Validation(findings=findings, universe=universe, annotators=expected)
        layout = layouts.choose(settings.layout, annotators=len(annotators), dense_rows=_dense_rows(spaces, validation, settings))
        layouts.refuse_too_wide(layout, _group_cells(spaces, validation, len(annotators)), len(annotators))
        results = {}
        for unit in settings.units:  # each part's result let go once joined: one unit type held twice at most
            results[unit] = joined(unit, [p.results.pop(unit) for p in parts], [len(p.groups) for p in parts],
                                   [p.labels for p in parts], labels)
        findings = findings + _labels_ignored(settings, corpus, labels)
        findings.sort(key=sort_key)
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
            accounting=_accounting(corpus, [p.counts for p in parts], results),
            layout=layout,
            labels=labels,
            present=present,
        )


def _layers_from_label(corpus: Corpus, settings: Settings) -> Corpus:
    """The corpus with each span's label as its layer (``layers_from = "label"``; unlabelled spans keep theirs)."""
    if settings.layers_from != "label":
        return corpus
    return replace(corpus, spans=[replace(s, layer=s.label if s.label is not None else s.layer) for s in corpus.spans])


def _dense_rows(spaces: dict[str, UnitSpace], validation: Validation, settings: Settings) -> int:
    """Rows of the largest setting's dense matrix (every unit of every group's documents, per layer)."""
    per_layer = 1 if set(settings.modes) == {"combined"} else len(set(settings.layers))
    most = 0
    for space in spaces.values():
        units = dict(zip(space.doc_ids, space.n_units.tolist()))
        most = max(most, sum(units.get(d, 0) for docs in validation.universe.values() for d in docs) * per_layer)
    return most


def _group_cells(spaces: dict[str, UnitSpace], validation: Validation, n_annotators: int) -> dict[tuple[str, str], int]:
    """Cells (units × annotators) of each (unit type, group)'s dense matrix."""
    out = {}
    for unit, space in spaces.items():
        units = dict(zip(space.doc_ids, space.n_units.tolist()))
        for group, docs in validation.universe.items():
            out[(unit, group)] = sum(units.get(d, 0) for d in docs) * n_annotators
    return out


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


def _label(span: Span) -> str:
    """A span's label as the labels mode names it (:data:`UNLABELLED` for none)."""
    return span.label if span.label is not None else UNLABELLED


class _Fragments:
    """The live fragments of the selected layers as parallel arrays, joined into segments.

    A fragment is live when the validation kept it and its annotator is one of the
    study's; every other fragment of the selected layers is counted by reason.
    """

    def __init__(self, corpus: Corpus, settings: Settings, validation: Validation, layers: list[str], annotators: list[str]):
        self.corpus = corpus
        groups = corpus.groups
        g_index = {g: i for i, g in enumerate(groups)}
        l_index = {layer: i for i, layer in enumerate(layers)}
        a_index = {a: i for i, a in enumerate(annotators)}
        doc_ids = sorted(d for d, doc in corpus.documents.items() if doc.text is not None)
        d_index = {d: i for i, d in enumerate(doc_ids)}
        spans = corpus.spans
        selected = [i for i, s in enumerate(spans) if s.layer in l_index]
        fate = validation.fate
        # an element is a record's fragments in one layer of one annotator's document: record ids repeat across the
        # documents and annotators of one file (a DocBin, a data set, a Label Studio export)
        element_ids: dict[tuple[str, str, str, str, str], int] = {}
        element_of = {
            i: element_ids.setdefault((spans[i].source, spans[i].annotator, spans[i].doc_id, spans[i].record, spans[i].layer), len(element_ids))
            for i in selected
        }
        # fragments per element over every parsed fragment, valid or not: an element with a bad
        # fragment is still discontinuous
        self.fragments_of = Counter(element_of.values())
        self.selected = len(selected)
        self.excluded: Counter = Counter(fate[i] for i in selected if fate[i] is not None)
        live = [i for i in selected if fate[i] is None and spans[i].annotator in a_index]
        self.not_selected_annotator = sum(1 for i in selected if fate[i] is None and spans[i].annotator not in a_index)

        label_names = sorted({_label(spans[i]) for i in live})
        if "labels" in settings.modes and len(label_names) > MAX_LABELS:
            raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(layers)} have {len(label_names)}")
        lab_index = {name: i for i, name in enumerate(label_names)}
        self.names: FragmentNames = {"groups": groups, "layers": layers, "annotators": annotators, "labels": label_names}
        self.frag = {
            "span": np.array(live, dtype=np.int64),
            "label": np.array([lab_index[_label(spans[i])] for i in live], dtype=np.int64),
            "labelled": np.array([spans[i].label is not None for i in live], dtype=bool),
            "group": np.array([g_index[spans[i].group] for i in live], dtype=np.int64),
            "layer": np.array([l_index[spans[i].layer] for i in live], dtype=np.int64),
            "annotator": np.array([a_index[spans[i].annotator] for i in live], dtype=np.int64),
            "doc": np.array([d_index[spans[i].doc_id] for i in live], dtype=np.int64),
            "element": np.array([element_of[i] for i in live], dtype=np.int64),
            "begin": np.array([spans[i].begin for i in live], dtype=np.int64),
            "end": np.array([spans[i].end for i in live], dtype=np.int64),
        }
        self.segs = fragments_to_segments(
            self.frag["element"],
            self.frag["begin"],
            self.frag["end"],
            settings.discontinuous,
            element_size=np.array([self.fragments_of[element_of[i]] for i in live], dtype=np.int64),
        )

    def dropped_findings(self) -> list[Finding]:
        """One ``discontinuous-dropped`` finding per element left out (``discontinuous = "drop"``)."""
        dropped = np.flatnonzero(self.segs.fragment_segment < 0)
        findings: list[Finding] = []
        if not dropped.size:
            return findings
        self.excluded["discontinuous-dropped"] += int(dropped.size)
        reported: set[int] = set()
        for f in dropped.tolist():
            element = int(self.frag["element"][f])
            if element in reported:
                continue
            reported.add(element)
            span = self.corpus.spans[self.frag["span"][f]]
            findings.append(
                span_finding(
                    "discontinuous-dropped",
                    span,
                    f"{span.layer} has {self.fragments_of[element]} fragments",
                    "element left out (discontinuous = \"drop\"); use \"extend\" or \"keep\" to include it",
                )
            )
        return findings

    def counts(self, results: dict[str, UnitResult]) -> _Counts:
        """Where this corpus's records went, to be added up over the parts of a run."""
        return _Counts(
            read=len(self.corpus.spans),
            selected=self.selected,
            excluded=self.excluded,
            not_selected_annotator=self.not_selected_annotator,
            by_unit={unit: (res.in_segments, res.excluded, res.segments.num_rows) for unit, res in results.items()},
        )


@dataclass
class _Counts:
    """One part's record counts: read, in the selected layers, left out by reason, and per unit type
    (records in segments, left out by reason, segments)."""

    read: int
    selected: int
    excluded: Counter
    not_selected_annotator: int
    by_unit: dict[str, tuple[int, Counter, int]]


def _accounting(corpus: Corpus, parts: list[_Counts], results: dict[str, UnitResult]) -> dict[str, Any]:
    """The manifest's record accounting: files read, and per unit type where every record went."""
    read = sum(p.read for p in parts)
    selected = sum(p.selected for p in parts)
    accounting: dict[str, Any] = {
        "files": {
            "read": len(corpus.submissions),
            "unreadable": sum(1 for f in corpus.findings if f.code == "file-unreadable"),
            "not_matching_pattern": sum(1 for f in corpus.findings if f.code == "filename-pattern"),
            "duplicates_skipped": sum(1 for f in corpus.findings if f.code == "duplicate-file"),
            "skipped_by_selection": corpus.skipped_by_selection,
        },
        "records": {"read": read, "in_selected_layers": selected, "in_other_layers": read - selected},
        "by_unit": {},
    }
    located = Counter(f.code for f in corpus.findings if f.code in QUOTE_OUTCOME)
    if located:  # quotes located in the text (format quotes): every quote by its outcome
        accounting["quotes"] = {QUOTE_OUTCOME[code]: located[code] for code in QUOTE_CODES.values() if code in located}
    not_selected = sum(p.not_selected_annotator for p in parts)
    for unit, res in results.items():
        excluded: Counter = Counter()
        for p in parts:
            excluded.update(p.excluded)
            excluded.update(p.by_unit[unit][1])
        excluded = +excluded
        if not_selected:
            excluded["annotator-not-selected"] = not_selected
        accounting["by_unit"][unit] = {
            "records": selected,
            "in_segments": sum(p.by_unit[unit][0] for p in parts),
            "excluded": dict(sorted(excluded.items())),
            "segments": res.segments.num_rows,
        }
    return accounting


def _present(corpus: Corpus, validation: Validation, a_index: dict[str, int]) -> dict[str, dict[str, list[int]]]:
    """Per group and document of the unit universe: the annotators with a submission, as sorted indices."""
    out: dict[str, dict[str, set[int]]] = {}
    for sub in corpus.submissions:
        if sub.annotator in a_index and sub.doc_id in validation.universe.get(sub.group, {}):
            out.setdefault(sub.group, {}).setdefault(sub.doc_id, set()).add(a_index[sub.annotator])
    return {g: {d: sorted(a) for d, a in docs.items()} for g, docs in out.items()}


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
        found = sorted({s.layer for s in corpus.spans}) or list(traits.layers)
        if found:
            changes["layers"] = tuple(found)
    if settings.tokenizer == builtin["tokenizer"].default and traits.tokenizer is not None:
        changes["tokenizer"] = traits.tokenizer
    return replace(settings, **changes) if changes else settings
