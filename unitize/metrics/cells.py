"""What a metric is measured on — one (setting, group, layer) cell — and the options of a measurement.

``unitize agree`` reads a cell from an output directory and hands the metrics a :class:`Cell`:
its sufficient statistics (:mod:`.stats`) for the coding metrics, and a :class:`SegmentCell` —
its segments placed on the continuum on demand — for the unitizing and span metrics. Nothing here
reads a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .bootstrap import Options
from .placed import Placed
from .stats import Stats
from .value import Value


@dataclass(frozen=True)
class GammaOptions:
    """pygamma-agreement's parameters: the dissimilarity's alpha and beta, the sampled continua, the seed."""

    alpha: float = 1.0
    beta: float = 1.0
    n_samples: int = 30
    fast: bool = True
    seed: int = 4577


@dataclass(frozen=True)
class MeasureOptions:
    """How the metrics are measured: intervals (``ci``), the breakdowns asked for, and ``pairs`` and ``among`` — pairs
    of annotators, each measured alone on every cell instead of the cell (as if the study had those two only)."""

    ci: Options | None = None
    by_label: bool = False
    by_doc: bool = False
    by_annotator: bool = False
    gamma: GammaOptions = field(default_factory=GammaOptions)
    pairs: tuple[tuple[str, str], ...] = ()
    among: tuple[str, ...] = ()  # and every pair of these annotators a cell has, in this order
    #: a metric with a row per pair measures ``pairs`` alone, not ``among``'s (the caller has those rows already)
    among_known: bool = False


T = TypeVar("T")


class Memo(Protocol):
    """``memo(key, build)``: what ``build()`` gives, built once per key (while one cell is measured)."""

    def __call__(self, key: tuple[Any, ...], build: Callable[[], T], /) -> T: ...


#: ``approach`` of :meth:`SegmentCell.placed` that means "the setting's own"
SETTING = "setting"


@dataclass
class SegmentCell:
    """A cell's segments as the segment metrics take them.

    ``place(name, approach)`` gives each layer's segments on the cell's continuum (one
    :class:`~.placed.Placed` per layer) — or the NaN saying why ``name`` cannot be measured there;
    ``approach`` ``"boundary"`` places each segment's first and last unit. ``memo(key, build)``
    keeps what the metrics of the cell derive from them (built once); ``shared`` lives across
    cells (alpha-U's bootstrap replicates of a layer, reused by the layers-together cell).
    """

    group: str
    layers: tuple[str, ...]
    approach: str | None
    labelled: bool  # segments are valued by their label (a labels setting), else one value per layer
    place: Callable[[str, str | None], list[Placed] | Value]
    memo: Memo
    shared: dict[Any, Any]
    #: the pairs of annotators a metric with a row per pair measures, when not every pair (its mean is then theirs)
    only: tuple[tuple[str, str], ...] | None = None
    #: ``layer_memo(key, build)``: what is derived from one layer's :class:`~.placed.Placed` (its ``key``), kept across
    #: the cells of a group (a layer alone, the layers together); None: built each time
    layer_memo: Memo | None = None

    def placed(self, name: str, approach: str | None = SETTING) -> list[Placed] | Value:
        """Each layer's segments placed with ``approach`` (default the setting's), or the NaN saying why not."""
        return self.place(name, self.approach if approach == SETTING else approach)


#: a segment metric's rows: (the cell's segments, the options, the metric's name for messages) -> rows
SegmentFormula = Callable[[SegmentCell, MeasureOptions, str], "list[Value]"]


@dataclass
class Cell:
    """One (setting, group, layer): what every metric may use of it."""

    stats: Stats
    level: str  # level of measurement (items may declare one; units are nominal)
    binary: bool  # 0/1 values (else labels or layer bit masks: a per-label breakdown means something)
    crowd: int | None  # crowd data counted per unit: the number of annotators (no annotator's own coding)
    categories: list[str] | None = None  # label data: the label of each value code
    per_doc: list[tuple[str, Stats]] | None = None  # with by_doc: each document's statistics (they add up to stats)
    segments: Callable[[], SegmentCell] | None = None  # the cell's segments (span data)

    def label(self, value: float) -> str:
        """The written form of a value (its label for label data)."""
        return self.categories[int(value)] if self.categories is not None else f"{value:g}"
