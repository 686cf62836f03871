"""The span kind of run: a corpus of text spans → a validated :class:`~unitize.matrices.Unitized`.

Applies the format's defaults, runs the validation (RAT's rules), selects the
live fragments of the chosen layers, resolves them into segments for every
unit type (:mod:`unitize.segments`) and keeps the record accounting: every
input record ends in a segment or in the report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from . import layouts
from .config import ASSIGNMENT_AUTO, ASSIGNMENT_PER_DOCUMENT, CROWD_ABOVE, Settings
from .errors import RunError
from .executors import Executor
from .findings import QUOTE_CODES, QUOTE_OUTCOME, finding, sort_key, span_finding
from .matrices import Unitized
from .model import Corpus, Finding, Span
from .progress import Progress, no_progress
from .segments import FragmentNames, UnitResult, resolve_segments
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

    ``executor`` (:mod:`unitize.executors`) tokenizes the documents, a chunk per task.
    """
    if settings.layers_from == "label":
        corpus = replace(corpus, spans=[replace(s, layer=s.label if s.label is not None else s.layer) for s in corpus.spans])
    settings = _format_defaults(settings, corpus)
    annotators = list(_configured_annotators(settings) or corpus.annotators)
    clash = RESERVED & set(annotators)
    if clash:
        raise RunError(f"annotator name(s) {', '.join(sorted(clash))} clash with unit-matrix column names")
    validation = validate(
        corpus,
        annotators=_configured_annotators(settings),
        keep_missing=settings.keep_missing,
        keep_mismatched=settings.keep_mismatched,
        boundaries=corpus.traits.check_boundaries,
        per_document=per_document(settings, corpus, annotators),
        count_rule=corpus.traits.count_rule,
    )
    _check_layers(settings, corpus)
    spaces = build_spaces(corpus, settings.units, settings.tokenizer, progress, executor)
    layout = layouts.choose(settings.layout, annotators=len(annotators), dense_rows=_dense_rows(spaces, validation, settings))
    layouts.refuse_too_wide(layout, _group_cells(spaces, validation, len(annotators)), len(annotators))
    layers = sorted(set(settings.layers))
    live = _Fragments(corpus, settings, validation, layers, annotators)
    findings = list(validation.findings) + live.dropped_findings() + _labels_ignored(settings, corpus, live.names["labels"])
    results: dict[str, UnitResult] = {}
    for unit in settings.units:
        results[unit] = resolve_segments(unit, spaces[unit], corpus, live.frag, live.segs, live.names)
        findings.extend(results[unit].findings)
    findings.sort(key=sort_key)
    return Unitized(
        settings=settings,
        corpus=corpus,
        validation=validation,
        groups=live.names["groups"],
        layers=layers,
        annotators=annotators,
        spaces=spaces,
        results=results,
        findings=findings,
        accounting=live.accounting(results),
        layout=layout,
        labels=live.names["labels"],
        present=_present(corpus, validation, {a: i for i, a in enumerate(annotators)}),
    )


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


def _check_layers(settings: Settings, corpus: Corpus) -> None:
    """Every layer asked for occurs in the corpus or is one of its format's layers.

    A corpus with no span at all says nothing about its layers: the findings say why
    (and a conversion that keeps nothing fails with them).
    """
    if not corpus.spans:
        return
    known = set(corpus.traits.layers) | {s.layer for s in corpus.spans}
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

    def accounting(self, results: dict[str, UnitResult]) -> dict[str, Any]:
        """The manifest's record accounting: files read, and per unit type where every record went."""
        corpus = self.corpus
        accounting: dict[str, Any] = {
            "files": {
                "read": len(corpus.submissions),
                "unreadable": sum(1 for f in corpus.findings if f.code == "file-unreadable"),
                "not_matching_pattern": sum(1 for f in corpus.findings if f.code == "filename-pattern"),
                "duplicates_skipped": sum(1 for f in corpus.findings if f.code == "duplicate-file"),
                "skipped_by_selection": corpus.skipped_by_selection,
            },
            "records": {
                "read": len(corpus.spans),
                "in_selected_layers": self.selected,
                "in_other_layers": len(corpus.spans) - self.selected,
            },
            "by_unit": {},
        }
        located = Counter(f.code for f in corpus.findings if f.code in QUOTE_OUTCOME)
        if located:  # quotes located in the text (format quotes): every quote by its outcome
            accounting["quotes"] = {QUOTE_OUTCOME[code]: located[code] for code in QUOTE_CODES.values() if code in located}
        for unit, res in results.items():
            excluded = self.excluded + res.excluded
            if self.not_selected_annotator:
                excluded["annotator-not-selected"] = self.not_selected_annotator
            accounting["by_unit"][unit] = {
                "records": self.selected,
                "in_segments": res.in_segments,
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
