"""Writers of annotation formats: the model written back out, for conversion between formats.

A writer takes a corpus (as an adapter read it, or as a program made it) and writes annotation
files, the texts, and a ``study.toml`` that reads the result back, into an output directory.
Offsets are converted from the model's text to the convention of the target tool (see
:mod:`unitize.writers.offsets`); what the target cannot hold is reported per record
(``not-convertible``), never dropped silently (see :mod:`unitize.writers.holds`).

Writers are declared like adapters: each module names a :class:`Target` (its write function,
its :class:`~unitize.model.traits.WriterTraits`, the adapter that reads its output back, its options),
registered in the ``unitize.writers`` entry-point group (the built-ins in pyproject.toml,
nowhere else); :func:`writers` maps a name to its write function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import plugins
from ..config import Option
from ..errors import UnitizeError
from ..model import Corpus, Finding
from ..model.traits import WriterTraits
from ..names import FileNames
from ..output import OutputDir

__all__ = ["GROUP", "Target", "Writer", "WriterError", "WriterTraits", "Written", "available", "get_target", "rescan", "writers"]


class WriterError(UnitizeError):
    """A usage error of a writer: an unknown target format or option."""


@dataclass
class Written:
    """What a writer wrote: files per role, records and spans written, findings about what it could not.

    ``study`` is the ``[input]`` table of the ``study.toml`` that reads the output back,
    ``unitize`` what its ``[unitize]`` table must say besides the source's settings (e.g. the
    ``assignment`` of a format that writes a roster). ``items`` counts flat labels written,
    ``layers`` names the layers written. ``names`` gives every name that becomes part of a file's path its
    file form (:mod:`unitize.names`) and keeps those it changed, for the study file that reads them back.
    """

    files: dict[str, int] = field(default_factory=dict)
    relations: int = 0
    spans: int = 0
    items: int = 0
    findings: list[Finding] = field(default_factory=list)
    study: dict[str, Any] = field(default_factory=dict)
    unitize: dict[str, Any] = field(default_factory=dict)
    layers: set[str] = field(default_factory=set)
    names: FileNames = field(default_factory=FileNames)

    def take(self, held: Any) -> None:
        """Start from what :func:`~unitize.writers.holds.holdable` found: its findings, and the layers of what it kept."""
        self.findings += held.findings
        self.layers |= {s.layer for s in held.spans}

    def input_table(self) -> dict[str, Any]:
        """The ``[input]`` table of the study file that reads the output back: :attr:`study`, and the names that
        file names stand for (``[input.names]``; annotators named by an ``[input.annotators]`` table need none)."""
        changed = {k: v for k, v in self.names.changed.items() if not (k == "annotators" and isinstance(self.study.get("annotators"), dict))}
        return {**self.study, **({"names": changed} if changed else {})}

    def add_file(self, role: str) -> None:
        """Count one more file of ``role``."""
        self.files[role] = self.files.get(role, 0) + 1


#: write(corpus, target, base, source_settings, **options) -> Written. ``base`` is the folder the
#: documents' ``source`` paths are relative to; ``source_settings`` the source study's ``[input]``
#: (plus ``group_by``, ``layers`` and ``tokenizer``); options are the target's (:attr:`Target.options`).
Writer = Callable[..., Written]


@dataclass(frozen=True)
class Target:
    """A writer of one format, declared: its name, one line of description, the write function, what the
    format can hold (``traits``), the adapter that reads its output back (``reads_as``) and its options
    (``KEY=VALUE`` on the command line: ``--target-option``)."""

    name: str
    description: str
    write: Writer
    traits: WriterTraits
    reads_as: str
    options: Mapping[str, Option] = field(default_factory=dict)
    #: files it writes for the user to edit (a tool's configuration): a rerun keeps an edited one
    editable: tuple[str, ...] = ()

    def __call__(self, corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any], **options: Any) -> Written:
        """Write ``corpus`` into ``target`` (options checked against the declaration, defaults filled in)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(self.options) or "none"
            raise WriterError(f"format {self.name} has no option {', '.join(unknown)}; its options: {known}")
        for key, option in self.options.items():
            value = options.get(key, option.default)
            if option.choices and value not in option.choices:
                raise WriterError(f"option {key} of format {self.name} must be one of {', '.join(option.choices)}, not {value!r}")
            options[key] = value
        return self.write(corpus, target, base, source, **options)


#: the entry-point group writers are registered in (the built-ins too, in pyproject.toml)
GROUP = "unitize.writers"


def rescan() -> None:
    """Forget the entry points scanned so far (after installing a plugin into a running process)."""
    plugins.rescan(GROUP)


def available() -> dict[str, str]:
    """Writer names -> their entry-point targets, scanned once per process; a built-in wins a name a plugin repeats."""
    return plugins.scan(GROUP, f"{__name__}.")


def get_target(name: str) -> Target:
    """The writer declared as ``name``."""
    targets = available()
    if name not in targets:
        known = ", ".join(targets) or "none (install unitize with pip install -e . so its entry points exist)"
        raise WriterError(f"cannot write format {name!r}; writable formats: {known}")
    declared = plugins.load(targets[name])
    if not isinstance(declared, Target):
        raise WriterError(f"entry point {targets[name]!r} for writer {name!r} is not a unitize writers.Target")
    return declared


def writers() -> dict[str, Writer]:
    """Target format name -> its writer (a :class:`Target`, called as ``write(corpus, target, base, source)``)."""
    return {name: get_target(name) for name in available()}
