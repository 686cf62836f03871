"""Input adapters, registered by name.

An adapter knows one input format and turns it into a :class:`~unitize.model.Corpus`.
Built-in adapters and third-party ones are found through the ``unitize.adapters``
entry-point group (the built-ins are listed in pyproject.toml, nowhere else); each
entry point names an :class:`Adapter` object. The group is scanned once per process
(:func:`rescan` forgets it).

An option's default is stated once: in its :class:`Option` declaration. A format's
reader function takes each option as a keyword argument without a default (``= None``
where the declared default is ``None``, "not given"), and :attr:`Adapter.read` passes
the declared default of every option the caller leaves out; so the study file, the
flags, ``unitize init``, ``unitize formats`` and the reader see one value. An option the
format cannot read without is declared ``Option(required=True)``, and a run asks for
it before reading.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import plugins
from ..config import Option
from ..errors import UnitizeError
from ..model import Corpus
from ..model.text import TextConventions
from ..model.traits import DEFAULT as DEFAULT_TRAITS
from ..model.traits import FormatTraits

__all__ = ["Adapter", "AdapterError", "FormatTraits", "Option", "Reader", "all_options", "available", "get_adapter", "rescan"]


class AdapterError(UnitizeError):
    """A usage error of an adapter: unknown format, bad option, unusable setting."""


@dataclass(frozen=True)
class Reader:
    """An adapter's ``read``: its format's reader function, given the declared default of every option the
    caller leaves out (``declared``: option -> default), whose corpus it stamps with the format's traits."""

    fn: Callable[..., Corpus]
    traits: FormatTraits
    declared: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, **kwargs: Any) -> Corpus:
        filled = {key: copy.deepcopy(value) for key, value in self.declared.items() if key not in kwargs}
        corpus = self.fn(**filled, **kwargs)
        corpus.traits = self.traits
        return corpus

    @property
    def __signature__(self) -> inspect.Signature:
        """The reader function's signature with the declared defaults (what ``help`` shows)."""
        signature = inspect.signature(self.fn)
        return signature.replace(
            parameters=[p.replace(default=self.declared[p.name]) if p.name in self.declared else p for p in signature.parameters.values()]
        )


@dataclass(frozen=True, init=False)
class Adapter:
    """A reader of one format.

    ``read`` takes keyword arguments only: the ``[input]`` table of the study
    configuration without ``format``, with paths already resolved, plus
    ``base`` (the directory that relative names in reports are relative to) and
    ``progress`` (a callable taking an iterable and a description, or ``None``).
    ``Adapter.read`` is that function wrapped in a :class:`Reader`, which passes the
    declared defaults of the options left out and sets the corpus's ``traits``.
    ``options`` declares the ``[input]`` keys it accepts: key -> :class:`Option`
    (type, default, one line of help, example), from which ``unitize init`` writes
    a study file and every key becomes a flag (``columns`` -> ``--columns``). A plain
    string instead of an :class:`Option` is its help (type ``str``, no default; required
    when ``read`` gives its argument no default), as adapters written before options
    had types declare them.
    ``traits`` (:class:`~unitize.model.traits.FormatTraits`) are what the format implies for
    unitizing (its layers, its own tokenizer, ``group_by``…). Adapters written before
    traits were typed give a ``defaults`` dict instead (the fifth argument, or
    ``defaults=``): it is converted with :meth:`FormatTraits.from_defaults`.
    ``suggest`` (optional, for ``unitize init``) takes the data folder and the
    options known so far and returns further options guessed from the files
    (e.g. the column names of a table). ``suffixes`` are the file name endings the
    format reads (lower case, with the dot), for the message when a folder holds none.
    ``text`` (:class:`~unitize.model.text.TextConventions`) is how the format's tool counted
    offsets into its texts (DESIGN.md §3); ``None`` for a format without text offsets.
    """

    name: str
    description: str
    read: Reader
    options: Mapping[str, Option]
    traits: FormatTraits
    suggest: Callable[[Path, dict[str, Any]], dict[str, Any]] | None = field(default=None, compare=False)
    suffixes: tuple[str, ...] = ()
    text: TextConventions | None = None

    def __init__(
        self,
        name: str,
        description: str,
        read: Callable[..., Corpus],
        options: Mapping[str, Option | str],
        traits: FormatTraits | Mapping[str, Any] = DEFAULT_TRAITS,
        suggest: Callable[[Path, dict[str, Any]], dict[str, Any]] | None = None,
        suffixes: tuple[str, ...] = (),
        text: TextConventions | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        """Declarations as adapters give them (legacy plain-help options and ``defaults`` dicts too), stored typed."""
        fn = read.fn if isinstance(read, Reader) else read
        declared_options = {key: spec if isinstance(spec, Option) else _legacy_option(fn, key, spec) for key, spec in dict(options).items()}
        given = traits if defaults is None else defaults
        typed = given if isinstance(given, FormatTraits) else FormatTraits.from_defaults(given)
        declared = {key: option.default for key, option in declared_options.items() if option.default is not None}
        put = functools.partial(object.__setattr__, self)  # frozen: every field is set once, here
        put("name", name)
        put("description", description)
        put("read", Reader(fn, typed, declared))
        put("options", declared_options)
        put("traits", typed)
        put("suggest", suggest)
        put("suffixes", suffixes)
        put("text", text)


def _legacy_option(read: Callable[..., Corpus], key: str, text: str) -> Option:
    """An option declared by its help alone: a string, required when ``read`` gives its argument no default."""
    try:
        parameter = inspect.signature(read).parameters.get(key)
    except (TypeError, ValueError):  # a reader Python cannot introspect: nothing known to be required
        parameter = None
    return Option("str", None, str(text), required=parameter is not None and parameter.default is inspect.Parameter.empty)


#: the entry-point group adapters are registered in; the built-ins too: the table
#: ``[project.entry-points."unitize.adapters"]`` of pyproject.toml is the one list of them
GROUP = "unitize.adapters"


def rescan() -> None:
    """Forget the entry points scanned so far: the next look-up scans the installed distributions again
    (after installing a plugin into a running process, and in tests)."""
    plugins.rescan(GROUP)


def available() -> dict[str, str]:
    """Adapter names -> their entry-point targets (built-ins and installed plugins), scanned once per process;
    a built-in wins a name a plugin repeats."""
    return plugins.scan(GROUP, f"{__name__}.")


def all_options() -> dict[str, dict[str, Option]]:
    """Every [input] key of every loadable format -> {format: its declaration}, formats in name order."""
    found: dict[str, dict[str, Option]] = {}
    for name in available():
        try:
            adapter = get_adapter(name)
        except Exception:  # a broken plugin: reported when it is used, not here
            continue
        for key, option in adapter.options.items():
            found.setdefault(key, {})[name] = option
    return found


def get_adapter(name: str) -> Adapter:
    """The adapter registered as ``name``."""
    targets = available()
    if not targets:
        raise AdapterError(f"unknown input format {name!r}: no adapter is registered; install unitize (pip install -e .) so its entry points exist")
    if name not in targets:
        raise AdapterError(f"unknown input format {name!r}; available: {', '.join(targets)}")
    adapter = plugins.load(targets[name])
    if not isinstance(adapter, Adapter):
        raise AdapterError(f"entry point {targets[name]!r} for format {name!r} is not a unitize Adapter")
    return adapter
