"""CoNLL-2015/2016 shallow discourse parsing: ``relations.json`` (JSON Lines).

One relation per line::

    {"DocID": "wsj_1000", "ID": 14887, "Type": "Explicit", "Sense": ["Comparison.Contrast"],
     "Arg1": {"CharacterSpanList": [[9, 179]], "RawText": "...", "TokenList": [[9, 15, 0, 0, 0], ...]},
     "Arg2": {...}, "Connective": {"CharacterSpanList": [[2648, 2652]], "RawText": "also", ...}}

``CharacterSpanList`` holds ``[begin, end]`` code-point offsets into ``raw/<DocID>``,
end exclusive, one pair per discontinuous part; Implicit and EntRel relations
have an empty connective span list (English still gives the implicit
connective as ``RawText``). System outputs (``output.json``) give only
``TokenList`` as document token indices: these are mapped to characters
through ``parses.json`` (``CharacterOffsetBegin``/``End`` of each word, words
numbered across sentences); without it such relations are reported.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..model import Corpus, Finding
from ..model.findings import finding
from ..model.text import TextConventions
from . import AdapterError, Option
from ._safe import InputError, load_json, offset_value
from .discourse import (
    ParsedFile,
    Parser,
    Relation,
    RelationFormat,
    home,
    read_bytes_for,
)
from .discourse_read import read_relations, relation_adapter

#: layer -> key of the relation object
PARTS = {"Arg1": "Arg1", "Arg2": "Arg2", "Conn": "Connective"}
#: offsets are code points of ``raw/<DocID>`` as it is
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(".txt",), encoding="utf-8")


class TokenMap:
    """Document token index -> character extent, from ``parses.json`` (loaded on first use)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._docs: dict[str, list[tuple[int, int]]] | None = None
        self.error: str | None = None if path is not None else "no parses.json was given or found"

    def extents(self, doc: str) -> list[tuple[int, int]] | None:
        if self.error is not None or self.path is None:  # no path: error says so
            return None
        if self._docs is None:
            try:
                data = load_json(self.path.read_bytes(), max_depth=None)
                self._docs = {
                    str(d): [
                        (_offset(w[1]["CharacterOffsetBegin"]), _offset(w[1]["CharacterOffsetEnd"]))
                        for s in body["sentences"]
                        for w in s["words"]
                    ]
                    for d, body in data.items()
                }
            except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
                self.error = f"{self.path} could not be read as parses.json ({type(exc).__name__}: {exc})"
                return None
        return self._docs.get(doc)


def _offset(value: Any) -> int:
    """A character offset of ``parses.json``; ``ValueError`` when it is not one."""
    offset = offset_value(value)
    if offset is None:
        raise ValueError(f"{str(value)[:40]!r} is not a character offset")
    return offset


def _fragments_from_tokens(
    tokens: list[Any], doc: str, tokens_map: TokenMap
) -> tuple[list[tuple[int, int]] | None, str | None]:
    """Fragments for a token list: gold 5-tuples carry offsets, system outputs need ``parses.json``."""
    if not tokens:
        return [], None
    if all(isinstance(t, list) and len(t) >= 2 and all(offset_value(x) is not None for x in t[:3]) for t in tokens):
        extents = [(t[0], t[1]) for t in tokens]
        indices = [t[2] if len(t) > 2 else i for i, t in enumerate(tokens)]
    elif all(offset_value(t) is not None for t in tokens):
        table = tokens_map.extents(doc)
        if table is None:
            return None, tokens_map.error or f"parses.json has no document {doc}"
        if max(tokens) >= len(table) or min(tokens) < 0:
            return None, f"token index {max(tokens)} is past the {len(table)} tokens parses.json gives for {doc}"
        extents = [table[t] for t in tokens]
        indices = list(tokens)
    else:
        return None, "TokenList is neither a list of token indices nor of [begin, end, index, ...] entries"
    order = sorted(range(len(extents)), key=lambda i: indices[i])
    fragments: list[tuple[int, int]] = []
    previous = None
    for i in order:
        if previous is not None and indices[i] == previous + 1:
            fragments[-1] = (fragments[-1][0], extents[i][1])
        else:
            fragments.append(extents[i])
        previous = indices[i]
    return fragments, None


def _character_spans(value: Any) -> list[tuple[int, int]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and all(offset_value(x) is not None for x in pair)):
            return None
        out.append((pair[0], pair[1]))
    return out


def _relation(obj: dict[str, Any], number: int, tokens_map: TokenMap, where: dict[str, Any], findings: list[Finding]) -> Relation:
    doc = str(obj["DocID"])
    record = str(obj.get("ID", number))
    spans: dict[str, list[tuple[int, int]]] = {}
    stored: dict[str, str] = {}
    inserted = None
    for layer, key in PARTS.items():
        part = obj.get(key) or {}
        if not isinstance(part, dict):
            part = {}
        raw_text = part.get("RawText")
        if "CharacterSpanList" in part:
            fragments = _character_spans(part["CharacterSpanList"])
            if fragments is None:
                findings.append(
                    finding(
                        "offset-invalid",
                        f"{key}.CharacterSpanList (line {number}) is not a list of [begin, end] integer pairs",
                        "span left out; write it as [[begin, end], ...]",
                        record=record,
                        doc=doc,
                        layer=layer,
                        **where,
                    )
                )
                fragments = [(-1, -1)]
        else:
            fragments, problem = _fragments_from_tokens(part.get("TokenList") or [], doc, tokens_map)
            if fragments is None:
                findings.append(
                    finding(
                        "token-offsets-missing",
                        f"{key} (line {number}) gives token indices only: {problem}",
                        "span left out; set [input] parses to the parses.json of these documents",
                        record=record,
                        doc=doc,
                        layer=layer,
                        **where,
                    )
                )
                fragments = [(-1, -1)]
        if fragments:
            spans[layer] = fragments
            if isinstance(raw_text, str) and raw_text.strip():
                stored[layer] = raw_text
        elif layer == "Conn" and isinstance(raw_text, str) and raw_text.strip():
            inserted = raw_text.strip()
    senses = obj.get("Sense") or []
    if not isinstance(senses, list):
        senses = [senses]
    return Relation(
        record=record,
        line=number,
        type=str(obj.get("Type") or ""),
        spans=spans,
        senses=[str(s) for s in senses if s],
        inserted=inserted,
        stored=stored,
        attrs={"conll_id": obj.get("ID")},
    )


def make_parser(tokens_map: TokenMap) -> Parser:
    """A parser of ``relations.json`` files that maps token-only spans through ``tokens_map``."""

    def parse_file(path: Path, name: str, annotator: str) -> ParsedFile:
        raw, out = read_bytes_for(path, name, annotator)
        if raw is None:
            return out
        where = {"file": name, "annotator": annotator}
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            out.findings.append(
                finding("file-unreadable", f"not UTF-8 ({exc.reason} at byte {exc.start})", "file skipped; CoNLL JSON is UTF-8", **where)
            )
            return out
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                obj = load_json(line)
            except InputError as exc:
                out.findings.append(
                    finding(
                        "record-malformed",
                        f"line {number}: {exc}",
                        "line skipped; relations.json holds one JSON object per line",
                        record=str(number),
                        **where,
                    )
                )
                continue
            if not isinstance(obj, dict) or not obj.get("DocID") or not obj.get("Type"):
                out.findings.append(
                    finding(
                        "record-malformed",
                        f"line {number}: a relation needs DocID and Type",
                        "line skipped; is this a CoNLL-2016 relations.json?",
                        record=str(number),
                        **where,
                    )
                )
                continue
            relation = _relation(obj, number, tokens_map, where, out.findings)
            out.relations.setdefault(str(obj["DocID"]), []).append(relation)
        return out

    return parse_file


#: CoNLL-2016 in the PDTB family: ``relations.json`` over ``raw/<DocID>`` beside it (this parser has no parses.json;
#: each read makes one that maps token-only spans through the study's, see :func:`read`)
CONLL16 = RelationFormat(
    "conll16",
    make_parser(TokenMap(None)),
    TEXT,
    glob="relations.json",
    texts="directory of the raw texts raw/<DocID> (default: raw/ beside relations.json)",
    hidden=True,
    texts_beside="raw",
)


def read(*, parses: Path | None = None, **options: Any) -> Corpus:
    """Read CoNLL-2016 ``relations.json`` files (gold or system output) and ``raw/<DocID>`` texts.

    ``parses`` maps token indices to characters (default: the ``parses.json`` beside the
    first annotations); the other options are those of every PDTB-family format.
    """
    annotations, annotators = options.get("annotations"), options.get("annotators")
    first = annotations if annotations is not None else (next(iter(annotators.values())) if isinstance(annotators, dict) and annotators else None)
    if parses is None and first is not None:
        candidate = home(Path(first)) / "parses.json"
        parses = candidate if candidate.is_file() else None
    if parses is not None and not Path(parses).is_file():
        raise AdapterError(f"parses.json not found: {parses}")
    tokens_map = TokenMap(Path(parses) if parses is not None else None)
    return read_relations(replace(CONLL16, parse=make_parser(tokens_map)), **options)


ADAPTER = relation_adapter(
    CONLL16,
    "CoNLL-2015/2016 relations.json (JSON Lines; gold or system output) over raw/<DocID>",
    suffixes=(".json",),
    read=read,
    options={
        "parses": Option(
            "path", None, "parses.json mapping token indices to characters, for system outputs (default: beside relations.json)", example="parses.json"
        ),
    },
)
