"""The live fragments of a span corpus, and where every record went.

A fragment is live when the validation kept it, its layer is selected and its annotator is
one of the study's; :class:`Fragments` holds them as parallel NumPy arrays, joined into
segments (``discontinuous``), and counts every other fragment of the selected layers by
reason. :func:`accounting` adds up the :class:`Counts` of a run's parts into the manifest's
record accounting. No I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import Settings
from ..errors import RunError
from ..model import Corpus, Finding, Span
from ..model.findings import QUOTE_CODES, QUOTE_OUTCOME, span_finding
from ..units.segments import FragmentNames, UnitResult
from ..units.unitizers import fragments_to_segments
from ..validate import Validation

#: labels mode: the label of a span that has none
UNLABELLED = "*"
#: labels mode codes labels as bits of a uint64
MAX_LABELS = 64


def label_of(span: Span) -> str:
    """A span's label as the labels mode names it (:data:`UNLABELLED` for none)."""
    return span.label if span.label is not None else UNLABELLED


class Fragments:
    """The live fragments of the selected layers as parallel arrays, joined into segments.

    A fragment is live when the validation kept it and its annotator is one of the
    study's; every other fragment of the selected layers is counted by reason.
    ``d_index`` gives each document with a text its index in the unit spaces.
    """

    def __init__(self, corpus: Corpus, settings: Settings, validation: Validation, layers: list[str], annotators: list[str],
                 d_index: dict[str, int]):
        self.corpus = corpus
        groups = corpus.groups
        g_index = {g: i for i, g in enumerate(groups)}
        l_index = {layer: i for i, layer in enumerate(layers)}
        a_index = {a: i for i, a in enumerate(annotators)}
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

        label_names = sorted({label_of(spans[i]) for i in live})
        if "labels" in settings.modes and len(label_names) > MAX_LABELS:
            raise RunError(f"mode 'labels' codes at most {MAX_LABELS} labels; layers {', '.join(layers)} have {len(label_names)}")
        lab_index = {name: i for i, name in enumerate(label_names)}
        self.names: FragmentNames = {"groups": groups, "layers": layers, "annotators": annotators, "labels": label_names}
        self.frag = {
            "span": np.array(live, dtype=np.int64),
            "label": np.array([lab_index[label_of(spans[i])] for i in live], dtype=np.int64),
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

    def counts(self, results: dict[str, UnitResult]) -> Counts:
        """Where this corpus's records went, to be added up over the parts of a run."""
        return Counts(
            files=len(self.corpus.submissions),
            read=len(self.corpus.spans),
            selected=self.selected,
            excluded=self.excluded,
            not_selected_annotator=self.not_selected_annotator,
            by_unit={unit: (res.in_segments, res.excluded, res.segments.num_rows) for unit, res in results.items()},
        )


@dataclass
class Counts:
    """One part's record counts: files (submissions) read, records read, in the selected layers, left out by reason,
    and per unit type (records in segments, left out by reason, segments)."""

    files: int
    read: int
    selected: int
    excluded: Counter
    not_selected_annotator: int
    by_unit: dict[str, tuple[int, Counter, int]]


def accounting(corpus: Corpus, parts: list[Counts], results: dict[str, UnitResult]) -> dict[str, Any]:
    """The manifest's record accounting: files read, and per unit type where every record went."""
    read = sum(p.read for p in parts)
    selected = sum(p.selected for p in parts)
    accounting: dict[str, Any] = {
        "files": {
            "read": sum(p.files for p in parts),
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
