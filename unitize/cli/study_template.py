"""A study file written from the data: what ``unitize init`` writes (pure: no I/O).

:func:`inspect` sums up a corpus — annotators, documents, groups, layers and the
labels of each, findings; :func:`render` writes a commented ``study.toml`` for a
format: every ``[input]`` option its adapter declares (given ones set, the others
commented out with their default or an example), the ``[unitize]`` keys with the
format's defaults (``[items]`` with one table per label group for flat labels),
``[output]``, and what was found in the data as comments, so that the file
explains itself and every line is one ``#`` away from being used.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..adapters import Adapter
from ..config import ITEM_GROUP_OPTIONS, ITEMS_OPTIONS, UNITIZE_OPTIONS, Option, dump_key, dump_value
from ..model import Corpus
from ..units.tokenize import guess_language

#: where inline comments start
COMMENT_COLUMN = 40
#: how many names or labels a comment lists before "… (n more)"
SHOWN = 12
#: documents whose text tells init their language
LANGUAGE_SAMPLE = 200
LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch", "pt": "Portuguese",
                  "tr": "Turkish"}


@dataclass
class Inspection:
    """What a first read of the data found."""

    kind: str = "spans"  # or "items" (flat labels)
    annotators: list[str] = field(default_factory=list)
    documents: int = 0
    groups: list[str] = field(default_factory=list)
    #: spans: layer -> label -> spans; items: group -> label -> cells
    labels: dict[str, Counter] = field(default_factory=dict)
    #: documents that some annotator has no submission for (RAT's rule leaves them out)
    incomplete: int = 0
    #: (code, severity) -> findings
    findings: Counter = field(default_factory=Counter)
    #: why the data could not be read (then the rest is empty)
    error: str | None = None
    #: the texts' language when they tell it (:func:`unitize.units.tokenize.guess_language`), for the word tokenizer
    language: str | None = None
    #: annotators the input says are models (:attr:`unitize.model.Corpus.candidates`)
    candidates: list[str] = field(default_factory=list)


def inspect(corpus: Corpus) -> Inspection:
    """Sum up a corpus as read by its adapter."""
    found = Inspection(findings=Counter((f.code, f.severity) for f in corpus.findings))
    if corpus.items:
        found.kind = "items"
        found.annotators = sorted({i.annotator for i in corpus.items})
        found.documents = len({i.item for i in corpus.items})
        for i in corpus.items:
            labels = found.labels.setdefault(i.group, Counter())
            if i.label is not None:
                labels[i.label] += 1
        return found
    found.annotators = sorted({s.annotator for s in corpus.spans} | {s.annotator for s in corpus.submissions})
    found.candidates = sorted(corpus.candidates & set(found.annotators))
    found.documents = len(corpus.documents) or len({s.doc_id for s in corpus.submissions})
    found.language = guess_language([d.text for d in itertools.islice(corpus.documents.values(), LANGUAGE_SAMPLE) if d.text])
    found.groups = sorted({s.group for s in corpus.spans} | {s.group for s in corpus.submissions})
    for s in corpus.spans:
        found.labels.setdefault(s.layer, Counter())[s.label if s.label is not None else "*"] += 1
    by_doc: dict[str, set[str]] = {}
    for sub in corpus.submissions:
        by_doc.setdefault(sub.doc_id, set()).add(sub.annotator)
    found.incomplete = sum(1 for who in by_doc.values() if len(who) < len(found.annotators))
    return found


def shorten(names: list[str], limit: int = SHOWN) -> str:
    return ", ".join(names) if len(names) <= limit else ", ".join(names[:limit]) + f", … ({len(names) - limit} more)"


def counts(counter: Counter, limit: int = SHOWN) -> str:
    ranked = [f"{label} {n}" for label, n in counter.most_common() if n]
    return shorten(ranked, limit)


def summary(found: Inspection) -> list[str]:
    """What was found, one line each (without comment marks)."""
    if found.error:
        return [f"could not read the data: {found.error}"]
    lines = [f"{len(found.annotators)} annotators ({shorten(found.annotators)})"]
    if found.kind == "items":
        lines[0] += f", {found.documents} items, {len(found.labels)} label groups"
        lines += [f"  {group}: {counts(labels, 8)}" for group, labels in found.labels.items()]
    else:
        lines[0] += f", {found.documents} documents"
        if len(found.groups) > 1:
            lines.append(f"{len(found.groups)} groups: {shorten(found.groups)}")
        for layer, labels in sorted(found.labels.items()):
            lines.append(f"layer {layer}: {sum(labels.values())} spans; labels {counts(labels, 6)}")
    problems = [f"{code} {n}" for (code, severity), n in sorted(found.findings.items()) if severity in ("error", "warning")]
    if problems:
        lines.append("findings while reading: " + ", ".join(problems) + " (see report.jsonl after convert)")
    return lines


def _noted(text: str, note: str) -> str:
    return f"{text:<{COMMENT_COLUMN - 1}} # {note}" if note else text


def _line(key: str, value: Any, note: str, *, active: bool) -> str:
    return _noted(f"{'' if active else '# '}{dump_key(key)} = {dump_value(value)}", note)


def _entry(key: str, option: Option, given: dict[str, Any], extra: str = "") -> str:
    note = option.help + (f" ({extra})" if extra else "")
    if key in given:
        return _line(key, given[key], note, active=True)
    if option.default is not None:
        return _line(key, option.default, note, active=False)
    if option.example is not None or option.choices:
        return _line(key, option.example if option.example is not None else option.choices[0], f"e.g.; {note}", active=False)
    return _noted(f'# {dump_key(key)} = ""', note)


def relative(value: Any, folder: Path) -> Any:
    """Paths (also inside lists and tables) relative to the study file's folder when they are
    beside it (at most one ``..``), else absolute."""
    if isinstance(value, Path):
        text = Path(os.path.relpath(value, folder)).as_posix()
        return value.as_posix() if text.startswith("../..") else text
    if isinstance(value, dict):
        return {k: relative(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [relative(v, folder) for v in value]
    return value


def _input(adapter: Adapter, given: dict[str, Any], found: Inspection) -> list[str]:
    lines = ["[input]", _line("format", adapter.name, adapter.description, active=True)]
    for key, option in adapter.options.items():
        extra = ""
        if key == "annotators" and 0 < len(found.annotators) <= SHOWN and option.type == "list" and key not in given:
            lines.append(_line(key, found.annotators[:SHOWN], f"{option.help} (found: {len(found.annotators)})", active=False))
            continue
        if key == "groups" and found.groups and key not in given and option.type == "list":
            extra = f"found: {shorten(found.groups, 6)}"
        lines.append(_entry(key, option, given, extra))
    return lines


def _unitize(adapter: Adapter, given: dict[str, Any], found: Inspection) -> list[str]:
    traits = adapter.traits
    lines = ["[unitize]"]
    for key, option in UNITIZE_OPTIONS.items():
        default, extra = option.default, ""
        if key == "layers":
            layers = sorted(found.labels) or list(traits.layers or default)
            if traits.default_layers == "found":
                default, extra = layers, "found in the data"
            else:
                default = [layer for layer in default if layer in layers] or default
                extra = f"this format has {shorten(list(traits.layers or layers))}"
        elif key == "tokenizer" and traits.tokenizer is not None:
            default, extra = traits.tokenizer, "the format's tokens"
        elif key == "tokenizer" and found.language is not None and key not in given:
            given = {**given, key: f"spacy:{found.language}"}
            extra = f"the texts look {LANGUAGE_NAMES.get(found.language, found.language)}; spacy:xx when they are not"
        elif key == "modes" and any(set(labels) - {"*"} for labels in found.labels.values()):
            named = sorted({label for labels in found.labels.values() for label in labels} - {"*"})
            if len(named) >= 2 and traits.default_layers == "found" and key not in given:
                given = {**given, key: [*option.default, "labels"]}  # a span tool's labels: agreement on which label, too
                extra = f"the spans have {len(named)} labels: a label matrix beside the 0/1 one"
            else:
                extra = "the spans have labels: add \"labels\" for label matrices"
        elif key == "keep_missing" and found.incomplete and key not in given:
            extra = f"{found.incomplete} of {found.documents} documents lack some annotator"
            if not traits.count_rule and 2 * found.incomplete > found.documents:
                given = {**given, key: True}  # span tools, crowd tables: RAT's rule would leave out most of the data
        lines.append(_entry(key, Option(option.type, default, option.help), given, extra))
    return lines


def _items(given: dict[str, Any], found: Inspection) -> list[str]:
    lines = ["[items]"]
    for key, option in ITEMS_OPTIONS.items():
        if key != "groups":
            lines.append(_entry(key, option, given))
    groups = given.get("groups", {})
    for group, labels in found.labels.items():
        table = groups.get(group, {})
        values = sorted(label for label in labels if label is not None)
        lines += ["", _noted(f"[items.groups.{dump_key(group)}]", f"found: {counts(labels)}")]
        numeric = bool(values) and all(_number(v) for v in values)
        several = any("," in v for v in values)
        for key, option in ITEM_GROUP_OPTIONS.items():
            if key == "values" and key not in table and 0 < len(values) <= 2 * SHOWN and not several:
                lines.append(_line(key, values, option.help, active=False))
            elif key == "level" and key not in table and numeric:
                lines.append(_line(key, "ordinal", "the labels are numbers: ordinal or interval?", active=False))
            elif key == "multi" and key not in table and several:
                lines.append(_line(key, "set", "some cells hold several labels (a,b)", active=False))
            elif key in table or key in ("values", "level"):
                lines.append(_entry(key, option, table))
    return lines


def _roles(found: Inspection) -> list[str]:
    """``[roles]`` when the input says some annotators are models: they become candidates, compared with the humans
    (agree, the alt-test, adjudicate's gold made by the humans alone, estimate)."""
    if not found.candidates or len(found.candidates) == len(found.annotators):
        return []
    note = f"the input's models ({len(found.candidates)} of {len(found.annotators)} annotators): compared with the humans, never voting"
    return ["[roles]", _line("candidates", found.candidates, note, active=True), ""]


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def render(
    adapter: Adapter,
    found: Inspection,
    *,
    folder: Path,
    given_input: dict[str, Any],
    given_unitize: dict[str, Any] | None = None,
    given_items: dict[str, Any] | None = None,
    out: Path | None = None,
    source: str = "",
    next_steps: Sequence[str] = (),
) -> str:
    """The text of a commented study file for ``adapter``'s format, kept in ``folder`` (paths are relative to it)."""
    given = relative(dict(given_input), folder)
    head = [f"unitize study, format {adapter.name}: written by `unitize init`" + (f" from {source}" if source else "")]
    head += ["Found: " + line if i == 0 else "       " + line for i, line in enumerate(summary(found))]
    head += ["", "Next:"] + [f"  {step}" for step in next_steps]
    head += [
        "",
        "Paths are relative to this file. A line starting with # is a default or an example:",
        "remove the # to use it. Every [input] key is also a flag of `unitize convert` (columns ->",
        f"--columns), any key can be set with --set section.key=value, and `unitize formats --format {adapter.name}`",
        "explains each option.",
    ]
    lines = [f"# {line}".rstrip() for line in head] + [""]
    lines += _input(adapter, given, found) + [""]
    if found.kind == "items" or adapter.traits.kind == "items":
        lines += _items(dict(given_items or {}), found) + [""]
    else:
        lines += _unitize(adapter, dict(given_unitize or {}), found) + [""]
    lines += _roles(found)
    lines.append("[output]")
    if out is not None:
        lines.append(_line("dir", relative(out, folder), "the output directory (--out overrides it)", active=True))
    else:
        lines.append(_line("dir", "out", "the output directory (or --out)", active=False))
    return "\n".join(lines) + "\n"
