"""Each group's segments and relation counts, as ``unitize agree`` hands them to the group's cells."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import metrics as registry
from ..dataset import OutputData, Setting
from ..metrics import Metric
from ..units import relations
from ..units.relations import Counts
from .spans import Segments

#: the segments' columns the segment metrics place on the continuum (a group's rows, read apart: no ``group``)
SPAN_COLUMNS = ("layer", "annotator", "doc_id", "label", "unit_begin", "unit_end")


def asks_segments(metrics: Sequence[Metric]) -> bool:
    """Whether a span metric is among ``metrics`` (they place the segments on the continuum)."""
    return any(m.family is not registry.Family.CODING for m in metrics)


class GroupSegments:
    """Each group's :class:`Segments` of a setting, read with the group: only when a span metric asks for them.

    Discourse data (``relations``: the format's records are relations,
    :attr:`~unitize.model.traits.FormatTraits.relations`) has its relations counted per group. ``unitize convert``
    keeps the counts in the segments file's metadata; an output written before has them counted from each
    group's records, once per unit type for the run (``shared``: a later setting of the same unit reads no
    records)."""

    def __init__(self, data: OutputData, setting: Setting, metrics: Sequence[Metric], shared: dict[str, dict[Any, Any]]):
        unit = setting.unit or ""
        self.kept = shared.setdefault(unit, {})  # spanboot's, across cells
        self.held = shared.setdefault(f"{unit}:group", {})  # a group's placed segments, across the unit's settings
        self.relations = data.traits.relations and setting.kind == "units" and bool(unit)
        self.labelled = setting.value == "label"  # other values name a segment after its layer: its label is not read
        columns = SPAN_COLUMNS if self.labelled else tuple(c for c in SPAN_COLUMNS if c != "label")
        self.spans = data.segment_file(unit, columns) if asks_segments(metrics) and setting.kind == "units" and unit else None
        self.counted: dict[str, Counts] = shared.setdefault(f"{unit}:relations", {})
        self.records = data.segment_file(unit, relations.COLUMNS) if self.relations else None  # its footer read, no rows
        self.stored = relations.from_metadata(self.records.schema) if self.records is not None else None

    def of(self, group: str) -> Segments | None:
        """The group's segments (and, for discourse data, its relation counts); None when its cells need neither."""
        counts = self._counts(group) if self.records is not None else None  # discourse data with a segments file
        if self.spans is None and counts is None:
            return None
        spans = self.spans
        # read when a span metric asks
        return Segments((lambda: spans.group(group)) if spans is not None else None, self.kept, counts, group, self.held, self.labelled)

    def _counts(self, group: str) -> Counts:
        if self.stored is not None:
            return self.stored.get(group, {})
        if group not in self.counted:  # an output written before convert counted them: from the group's records
            assert self.records is not None, "relations are counted where a segments file is"
            self.counted[group] = relations.relation_counts(self.records.group(group)).get(group, {})
        return self.counted[group]
