"""``unitize adjudicate OUT``: a gold standard from the annotators' unit matrices, with confidence and a review queue.

    from unitize.adjudicate import adjudicate
    result = adjudicate("out/", "majority")                 # out/adjudication/
    adjudicate("out/", "majority", to="datt", gold_dest="gold/")   # the gold as DATT, with a study.toml

One setting of the output directory is adjudicated (by default the first interval setting,
label matrices before 0/1 and bit masks, words before characters; item data: its item
matrix). Per (group, layer) the votes are counted (:mod:`.votes`), a method decides
(:mod:`.methods`), runs of units whose gold holds a label become gold spans, and low
confidence or tied regions go to the review queue (:mod:`.review`). What it writes is
named in :mod:`unitize.dataset.adjudication`; the folder is staged and swapped in whole.
With ``to``, the gold is also written as annotator ``gold`` in that format into
``gold_dest`` (:mod:`.gold`) — first, so that a refused or failed write leaves nothing.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..dataset import adjudication as files
from ..dataset.directory import OutputData, Setting
from ..dataset.pieces import layer_pieces
from ..dataset.regions import multi_groups, not_annotated, setting_cells
from ..dataset.roles import annotators_of
from ..dataset.roles import resolve as resolve_roles
from ..errors import OutputError, RunError, UnitizeError
from ..model import ItemLabel
from ..model.codes import constant, dictionary
from ..model.findings import sort_key
from ..output import OWNED, OutputDir, ParquetStream, atomic_write_text, csv_text, locks_output, read_manifest, refuse_foreign, run_section, staged_folder
from ..output.derived import is_adjudication
from ..runtime.spool import scratch_prefix
from ..schema import FORMAT_VERSION, adjudication_schema
from ..writers import get_target, writers
from ..writers.common import study_toml
from . import candidates
from . import gold as golden
from . import methods as registry
from .methods import METHODS, Method
from .review import Queued, ReviewFiles, flags, queue
from .votes import GoldSpan, count, spans

#: a piece larger than any group: a group read whole
WHOLE = 1 << 62
#: a unit (item) whose confidence is below this goes to the review queue (as do tied ones)
REVIEW_BELOW = 0.75
#: ``--voters``: the study's humans (its ``[roles]``; every annotator without candidates), or every annotator
HUMANS, ALL = "humans", "all"
#: what a gold folder written by ``--to`` holds (a rerun with ``force`` replaces it)
GOLD_OWNED = ("annotations", "texts", "study.toml", "report.jsonl", "manifest.json")

UNITS_SCHEMA, ITEMS_SCHEMA, SPANS_SCHEMA = (adjudication_schema(t) for t in ("units", "items", "spans"))


@dataclass
class Adjudication:
    """What an adjudication found and wrote. The review queue and the item gold are read from the files written
    (:attr:`review`, :attr:`gold`): the run itself holds them a piece at a time."""

    path: Path  # OUT/adjudication
    method: str
    setting: str
    summary: dict[str, Any]
    spans: list[GoldSpan] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)  # each annotator who did not vote, against the gold
    dest: Path | None = None  # where --to wrote the gold

    @property
    def review(self) -> list[dict[str, Any]]:
        """The review queue's rows, as review.jsonl holds them (a confidence nobody gave: None)."""
        path = self.path / files.REVIEW_JSONL
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh]

    @property
    def gold(self) -> dict[tuple[str, str], str | None]:
        """Item data: (group, item) -> the gold label (None: no label won); unit data: empty (see :attr:`spans`)."""
        path = self.path / files.UNITS
        if "item" not in pq.read_schema(path).names:
            return {}
        table = pq.read_table(path, columns=["group", "item", "gold"])
        return dict(zip(zip(table.column("group").to_pylist(), table.column("item").to_pylist()), table.column("gold").to_pylist()))


def choose_setting(data: OutputData, method: Method, name: str | None) -> Setting:
    """The setting to adjudicate: the one named, or the first interval setting the method takes."""
    if name is not None:
        chosen = data.setting(name)
        if chosen.kind not in method.kinds:
            raise UnitizeError(f"{method.name} adjudicates item labels only; setting {name!r} holds unit matrices "
                               f"(use {', '.join(m.name for m in METHODS if 'units' in m.kinds)})")
        if chosen.kind == "units" and chosen.approach != "interval":
            raise UnitizeError(f"setting {name!r} marks only the first and last unit of each segment ({chosen.approach}); "
                               "adjudicate an interval setting")
        return chosen
    modes = {"labels": 0, "separate": 1, "combined": 2}
    candidates = [s for s in data.settings if s.kind in method.kinds and (s.kind == "items" or s.approach == "interval")]
    if not candidates:
        kinds = sorted({s.kind for s in data.settings})
        takes = " and ".join({"items": "item labels", "units": "the interval settings of span data"}[k] for k in sorted(method.kinds))
        others = ", ".join(m.name for m in METHODS if set(kinds) & set(m.kinds))
        held = " and ".join({"items": "item label", "units": "span"}[k] for k in kinds)
        raise UnitizeError(f"{data.path} holds no setting {method.name} can adjudicate: it has {held} data, and "
                           f"{method.name} takes {takes} only" + (f"; use --method {others}" if others else ""))
    return min(candidates, key=lambda s: (not s.layout.columnar, modes.get(s.mode or "", 3), s.unit != "word", s.name))


def _check_dest(to: str, dest: Path | None, force: bool) -> None:
    """Refuse a gold destination before anything is computed: an unknown format, a folder of other files,
    an earlier gold without ``force``."""
    available = writers()
    if to not in available:
        raise UnitizeError(f"cannot write the gold as {to!r}: no writer for it; writable formats: {', '.join(sorted(available))}")
    if dest is None:
        raise UnitizeError("--to needs --dest DIR: the folder the gold study is written to")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        try:
            earlier = read_manifest(dest, inputs=False) if dest.is_dir() else {}
        except OutputError:
            earlier = {}
        ours = earlier.get("kind") == "gold"
        if not ours:
            raise OutputError(f"{dest} exists and holds other files than a gold written by unitize adjudicate; "
                              "choose a new or empty --dest (nothing was written)")
        if not force:
            source = (earlier.get("settings") or {}).get("from")
            raise OutputError(f"{dest} holds a gold written earlier" + (f" from {source}" if source else "")
                              + "; pass --force to replace it (nothing was written)")


def _refuse_inside(out: Path, dest: Path | None) -> None:
    """Refuse a gold destination that is the output directory or inside one of the folders unitize writes there
    (a later command would replace it, or mix the gold with its own files)."""
    if dest is None:
        return
    root, place = out.resolve(), dest.resolve()
    if place == root or (place.is_relative_to(root) and place.relative_to(root).parts[0] in OWNED):
        raise UnitizeError(f"--dest {dest} is inside {out}'s own folders, which unitize replaces; write the gold to a folder "
                           f"of its own, e.g. --dest {out.parent / (out.name + '-gold')} (nothing was written)")


@locks_output
def adjudicate(out: Path | str, method: str = "majority", *, setting: str | None = None, min_share: float | None = None,
               review_below: float = REVIEW_BELOW, to: str | None = None, gold_dest: Path | str | None = None,
               annotator: str = "gold", with_annotators: bool = False, force: bool = False,
               voters: str | Sequence[str] = HUMANS) -> Adjudication:
    """Adjudicate output directory ``out`` with ``method``; write ``out/adjudication`` (and the gold, with ``to``).

    ``voters``: whose votes make the gold — ``humans`` (the study's ``[roles]`` humans: candidates, a model's
    runs, never vote; every annotator when the study names no candidates), ``all``, or annotators by name."""
    chosen_method = registry.get(method)
    if chosen_method.takes_min_share != (min_share is not None):
        raise UnitizeError("--min-share goes with --method threshold (and threshold needs it), e.g. --min-share 0.75")
    if min_share is not None and not 0 < min_share <= 1:
        raise UnitizeError(f"--min-share takes a share above 0 and at most 1, not {min_share}")
    if not 0 < review_below <= 1:
        raise UnitizeError(f"--review-below takes a confidence above 0 and at most 1, not {review_below}")
    if not annotator or "/" in annotator:
        raise UnitizeError(f"--annotator {annotator!r} cannot name an annotator (it becomes a folder or file name)")
    data = full = OutputData(Path(out))
    voting = _voters(data, voters)
    if voting is not None:
        data = OutputData(Path(out), voting)
    chosen = choose_setting(data, chosen_method, setting)
    if annotator in chosen.annotators:
        raise UnitizeError(f"an annotator of the study is called {annotator!r}; name the gold otherwise (--annotator NAME)")
    dest = Path(gold_dest) if gold_dest is not None else None
    if dest is not None and to is None:
        raise UnitizeError("--dest goes with --to FORMAT, the format to write the gold in; without --to the gold is only in "
                           f"{data.path / files.FOLDER} (nothing was written)")
    if to is not None:
        _refuse_inside(data.path, dest)
        _check_dest(to, dest, force)
    if chosen_method.model is not None:
        registry.crowd_kit()  # before any work: say how to install it
    final = data.path / files.FOLDER
    refuse_foreign(final, _replaceable, f"an earlier adjudication (no {files.SUMMARY}, and files named as this command's)")
    started = time.time()
    with staged_folder(final, "adjudication") as staging:
        result = _adjudicate(data, chosen, chosen_method, min_share, review_below, staging)
        outside = [a for a in full.setting(chosen.name).annotators if a not in chosen.annotators] if voting is not None else []
        result.candidates = candidates.scores(full, full.setting(chosen.name), outside, staging / files.UNITS)
        if result.candidates:
            atomic_write_text(staging / files.CANDIDATES, csv_text([candidates.COLUMNS, *(
                ["" if r[c] is None else r[c] for c in candidates.COLUMNS] for r in result.candidates)]))
        if to is not None and dest is not None:
            result.dest = _write_gold(data, chosen, result, to, dest, annotator, with_annotators)
        result.summary.update(voters=voting or "all", method=chosen_method.name, min_share=min_share, review_below=review_below, setting=chosen.name,
                              kind=chosen.kind, to=to, dest=str(result.dest) if result.dest else None,
                              annotator=annotator, seconds=round(time.time() - started, 3))
        (staging / files.SUMMARY).write_text(json.dumps(result.summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    result.path = final
    return result


def _adjudicate(data: OutputData, setting: Setting, method: Method, min_share: float | None, below: float, staging: Path) -> Adjudication:
    """Count, decide and queue every (group, layer) of ``setting``; write the units, spans and review files into ``staging``.
    A crowd group is read a piece of whole documents (items) at a time (:func:`~unitize.dataset.pieces.layer_pieces`):
    memory holds a piece's cells, votes and review rows, not the group's; its units' rows are written as one table's.
    A model method (dawid-skene, mace) reads each group whole: it fits the annotators on all of the group's items."""
    items = setting.kind == "items"
    empty = None if items else not_annotated(setting)
    multi = multi_groups(setting)
    stream = ParquetStream(staging / files.UNITS, ITEMS_SCHEMA if items else UNITS_SCHEMA)
    result = Adjudication(staging, method.name, setting.name, {})
    totals = {"units": 0, "coded": 0, "resolved": 0, "tied": 0, "review_units": 0}
    try:
        with ReviewFiles(data, setting, staging) as review:
            # a model method fits on the whole group: its group is one piece
            for _, _, pieces in layer_pieces(data, setting, limit=WHOLE if method.model is not None else None):
                for c in pieces:  # a piece of whole documents: each unit's votes, gold and review are the whole's
                    review.add(pieces, c.docs, _piece(c, method, multi, empty, items, min_share, below, result, stream, totals))
                stream.end()  # the (group, layer)'s rows in the row groups of one table, as if written whole
                review.done(pieces)
    finally:
        stream.close()
    result.spans.sort(key=lambda g: (g.group, g.doc, g.begin, g.end, g.layer, g.label or ""))
    if not items:
        _write_spans(result, staging)
    result.summary = {"tool": {"name": "unitize", "version": __version__}, "format_version": FORMAT_VERSION,
                      "annotators": list(setting.annotators), **totals, "gold_spans": len(result.spans),
                      "review_regions": review.rows}
    return result


def _piece(c: Any, method: Method, multi: Any, empty: Any, items: bool, min_share: float | None, below: float, result: Adjudication,
           stream: ParquetStream, totals: dict[str, int]) -> list[Queued]:
    """One piece's votes decided: its units' rows into ``stream``, its gold spans into ``result``, its counts into
    ``totals``; the review regions it queues."""
    votes = count(c, multi=c.group in multi, not_annotated=empty)
    decision = method.decide(votes, single=items and c.group not in multi, min_share=min_share)
    review = flags(decision, below)
    columns: dict[str, Any] = {"group": constant(c.group, votes.units).cast(pa.string())}
    if items:
        columns["item"] = dictionary(c.row_doc, c.docs).cast(pa.string())
    else:
        columns.update(doc_id=dictionary(c.row_doc, c.docs).cast(pa.string()), layer=constant(c.layer, votes.units).cast(pa.string()),
                       unit=c.row_unit, begin=c.begin, end=c.end)
        result.spans.extend(spans(decision))
    columns.update(gold=decision.gold_column(), votes=decision.agreeing(), coders=votes.coders, confidence=decision.confidence,
                   tied=decision.tied, review=review)
    stream.add(pa.table(columns, schema=stream.schema))
    totals["units"] += votes.units
    totals["coded"] += int((votes.coders > 0).sum())
    totals["resolved"] += int(decision.resolved.sum())
    totals["tied"] += int(decision.tied.sum())
    totals["review_units"] += int(review.sum())
    return queue(decision, below)


def _write_spans(result: Adjudication, staging: Path) -> None:
    """The gold spans as spans.parquet."""
    span_rows = {name: [getattr(g, key) for g in result.spans] for name, key in
                 (("group", "group"), ("doc_id", "doc"), ("layer", "layer"), ("label", "label"), ("unit_begin", "unit_begin"),
                  ("unit_end", "unit_end"), ("begin", "begin"), ("end", "end"), ("confidence", "confidence"))}
    spans_stream = ParquetStream(staging / files.SPANS, SPANS_SCHEMA)
    spans_stream.write(pa.table(span_rows, schema=SPANS_SCHEMA))
    spans_stream.close()


def _voters(data: OutputData, voters: str | Sequence[str]) -> list[str] | None:
    """The annotators who vote (``None``: every one): the humans of ``[roles]``, all, or the ones named."""
    if voters == ALL:
        return None
    if voters == HUMANS:
        roles = resolve_roles(data)
        return roles.humans if roles is not None else None
    named = [v.strip() for v in ([voters] if isinstance(voters, str) else voters) for v in v.split(",") if v.strip()]
    known = annotators_of(data)
    unknown = [v for v in named if v not in known]
    if unknown or not named:
        raise UnitizeError(f"--voters: not annotators of {data.path}: {', '.join(unknown) or '(none given)'}; give humans, all, or some of: "
                           f"{', '.join(known[:30])}{' …' if len(known) > 30 else ''}")
    return list(dict.fromkeys(named))


def _replaceable(folder: Path) -> bool:
    """Whether ``OUT/adjudication`` may be replaced: an earlier adjudication, or only files of the user's (as a rerun of
    ``convert`` leaves them), none named like one of the command's; the user's files are kept (:func:`staged_folder`)."""
    return is_adjudication(folder) or not any((folder / name).exists() or (folder / name).is_symlink() for name in files.FILES)


def _write_gold(data: OutputData, setting: Setting, result: Adjudication, to: str, dest: Path, name: str, with_annotators: bool) -> Path:
    """The gold as format ``to`` in ``dest`` (staged beside it and swapped in), with a study.toml that reads it back."""
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("gold")) as scratch:
        if setting.kind == "items":
            own = [ItemLabel(g, i, a, v) for g, i, a, v in _item_labels(data, setting)] if with_annotators else None
            corpus, rewritten = golden.item_corpus(data, result.gold, name, own), 0
        else:
            corpus, rewritten = golden.span_corpus(data, setting, result.spans, name, with_annotators, Path(scratch))
        target = OutputDir(dest, owned=GOLD_OWNED, kind="gold", per_file=("annotations", "texts"), editable=get_target(to).editable)
        try:
            written = writers()[to](corpus, target, Path(scratch), golden.source_settings(data))
            if not (written.spans or written.files.get("annotations")):
                why = "; ".join(f.message for f in written.findings[:3]) or "the gold holds no span or label"
                raise RunError(f"nothing of the gold could be written as {to}: {why}")
            findings = sorted(written.findings, key=sort_key)
            target.write_jsonl("report.jsonl", (f.as_dict() for f in findings))
            layers = sorted({s.layer for s in corpus.spans}) or list(data.layers)
            resolved = data.manifest.get("settings", {})
            unitize_table = {"layers": layers, "units": [setting.unit], "approaches": ["interval"], "modes": [setting.mode or "separate"],
                             **({"tokenizer": resolved["tokenizer"]} if resolved.get("tokenizer") else {}),
                             # the gold gives as many relations as it has gold spans, not as many as the annotators
                             **({"keep_mismatched": True} if corpus.traits.count_rule else {})} if setting.unit else {}
            study = study_toml(written.input_table(), unitize_table, f"the gold of {data.path.name} ({result.method}), written by unitize "
                               f"{__version__} adjudicate --to {to}; read it back with `unitize convert study.toml`")
            atomic_write_text(target.file("study.toml"), study)
            target.record("study.toml", None)
            target.write_json("manifest.json", {
                "format_version": FORMAT_VERSION, "kind": "gold", "tool": {"name": "unitize", "version": __version__},
                "settings": {"from": str(data.path), "setting": setting.name, "method": result.method, "to": to, "annotator": name},
                **({"names": written.names.changed} if written.names.changed else {}),
                "inputs": [], "outputs": target.outputs,
                "accounting": {"gold_spans": len([s for s in corpus.spans if s.annotator == name]), "spans_written": written.spans,
                               "texts_from_documents_parquet": rewritten, "files": written.files},
                "summary": {"findings": len(findings)}, "run": run_section(time.time()),
            })
            target.commit()
        except BaseException:
            target.abort()
            raise
    result.summary["gold_written"] = {"to": to, "spans": written.spans, "files": written.files, "findings": len(findings),
                                      "texts_from_documents_parquet": rewritten}
    return target.path


def _item_labels(data: OutputData, setting: Setting) -> list[tuple[str, str, str, str]]:
    """Every (group, item, annotator, label) of an item setting."""
    out = []
    for c in setting_cells(data, setting):
        out += [(c.group, c.docs[c.row_doc[r]], c.annotators[a], c.values[v])
                for r, a, v in zip(c.cell_row.tolist(), c.cell_annotator.tolist(), c.cell_code.tolist())]
    return out


__all__ = ["REVIEW_BELOW", "Adjudication", "METHODS", "adjudicate", "choose_setting"]
