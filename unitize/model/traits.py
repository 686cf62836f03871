"""What a format implies for unitizing its data: one declaration per format, carried by its corpus.

An adapter declares its :class:`FormatTraits` once (``Adapter(traits=...)``); its reader
stamps them on the :class:`~unitize.model.Corpus` it returns, so every later step of a
run asks ``corpus.traits`` and never looks the adapter up again. The fields:

- ``kind``: ``"spans"`` (unit matrices) or ``"items"`` (flat labels, item matrices);
- ``layers``: the layers the format can give, also those a corpus happens to lack (a study
  may ask for them; ``unitize init`` names them);
- ``layer_aliases``: names a user may write -> the layer the format reads them as (DATT's
  ``Supp1`` is ``Sup1``), for the message about an unknown layer;
- ``tokenizer``: the word units' tokenizer when a study keeps the built-in one
  (``"given"``: the file's own tokens); ``None``: the study's;
- ``default_layers``: ``"found"``: a study that keeps the built-in layers gets every
  layer that occurs instead (span tools); ``None``: the built-in layers stay;
- ``check_boundaries``: validation reports spans that begin or end inside a word or on
  whitespace (the PDTB family);
- ``count_rule``: RAT's rule that the annotators of one (document, group) give as many
  relations (off for span tools, whose annotators mark different numbers by nature); a span
  format that keeps it is a format of relations (:attr:`FormatTraits.relations`);
- ``group_by``: the format's own sampling unit (``connective``, ``none``); ``None``: it
  names none;
- ``streams``: its reader can hand over the spans a batch of whole groups at a time
  (``read(stream=True)``, :class:`~unitize.model.SpanStream`), so a conversion holds one
  batch of groups, not the corpus.

Adapters written before traits were typed declared a ``defaults`` dict with these keys;
:meth:`FormatTraits.from_defaults` reads one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal

Kind = Literal["spans", "items"]
DefaultLayers = Literal["found"]


@dataclass(frozen=True)
class FormatTraits:
    """A format's unitization traits (see the module docstring for each field)."""

    kind: Kind = "spans"
    layers: tuple[str, ...] = ()
    layer_aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    tokenizer: str | None = None
    default_layers: DefaultLayers | None = None
    check_boundaries: bool = False
    count_rule: bool = True
    group_by: str | None = None
    streams: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("spans", "items"):
            raise ValueError(f"kind must be 'spans' or 'items', not {self.kind!r}")
        if self.default_layers not in (None, "found"):
            raise ValueError(f"default_layers must be 'found' or None, not {self.default_layers!r}")
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "layer_aliases", MappingProxyType(dict(self.layer_aliases)))

    def __reduce__(self) -> tuple[type[FormatTraits], tuple[Any, ...]]:
        """Pickled as its fields (a read-only mapping pickles as a dict): a batch read in another process carries them."""
        return type(self), tuple(dict(v) if isinstance(v, MappingProxyType) else v for v in (getattr(self, f.name) for f in fields(self)))

    @property
    def relations(self) -> bool:
        """Whether the format's records are relations (discourse: one record joins the Arg1, Arg2, … of a
        connective) — the span formats under RAT's :attr:`count_rule`; a span tool's entities and item labels are not."""
        return self.kind == "spans" and self.count_rule

    @classmethod
    def from_defaults(cls, defaults: Mapping[str, Any]) -> FormatTraits:
        """Traits from an adapter's legacy ``defaults`` dict; keys that name no trait are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in defaults.items() if key in known})


#: the traits of a corpus whose adapter declared none
DEFAULT = FormatTraits()


#: how a target format keeps a document's text: ``raw`` (the raw file beside the annotations, copied byte for
#: byte), ``embedded`` (inside the annotation files, exactly), ``sentences`` (rebuilt from sentence lines, which
#: end the text with a line break), ``tokens`` (only the tokens are kept: the text is rebuilt from them)
TextKept = Literal["raw", "embedded", "sentences", "tokens"]


@dataclass(frozen=True)
class WriterTraits:
    """What a target format can hold: the facts that decide which records a conversion reports ``not-convertible``.

    - ``kind``: ``"spans"`` or ``"items"`` (flat labels);
    - ``layers``: the layers it has a place for (``()``: any layer); ``one_layer``: an output holds one
      layer only (the format's reader names it with its ``layer`` option);
    - ``discontinuous``: elements of several fragments; ``overlap``: spans of one annotator that overlap in
      one layer (nested, crossing, stacked); ``empty``: zero-length spans; ``unlabelled``: spans without a label;
    - ``label``: a regular expression every label must match in full (``None``: any text);
    - ``groups``: sampling units other than the one group (discourse connectives); ``relations``: records
      that join several layers (discourse relations), with their type and senses;
    - ``text``: how it keeps a document's text (see :data:`TextKept`); ``empty_documents``: a document without
      text (and so without tokens) can be written.
    """

    kind: Kind = "spans"
    layers: tuple[str, ...] = ()
    one_layer: bool = False
    discontinuous: bool = True
    overlap: bool = True
    empty: bool = True
    unlabelled: bool = True
    label: str | None = None
    groups: bool = False
    relations: bool = False
    text: TextKept = "raw"
    empty_documents: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
