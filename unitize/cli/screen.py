"""What unitize prints cannot act on the user's terminal.

Annotator names, labels, groups, document ids and file names come from the data,
and a terminal acts on the control characters in them: ``ESC]0;…BEL`` retitles the
window, ``ESC[2J`` clears it, a carriage return or a bidirectional override
(U+202E) hides what the line says. Every command writes through one escaping
(:func:`escaped_output`, installed by :func:`unitize.cli.main` around the command):
each such character is written as ``\\uXXXX``, the same escape JSON uses, so a
``--json`` line stays valid JSON holding the same string. Tab and line feed, which
unitize's own output uses, pass; the progress bar alone writes to the raw stream
(:func:`raw`), and shows only unitize's own words.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

#: what a terminal may act on: C0 controls but tab and line feed, DEL, C1 controls, and the
#: characters that reorder or break a line (Arabic letter mark, LRM/RLM, line and paragraph
#: separators, the bidirectional embeddings, overrides and isolates)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` with every character a terminal would act on written as ``\\uXXXX``."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Screen:
    """A text stream that writes :func:`clean` text to the stream it wraps (everything else is the stream's)."""

    def __init__(self, stream: TextIO):
        self.raw = stream

    def write(self, text: str) -> int:
        self.raw.write(clean(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under a :class:`Screen` (for the progress bar, which moves the cursor itself)."""
    return stream.raw if isinstance(stream, Screen) else stream


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """Standard output and standard error escaped while the block runs (:func:`clean`)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if s is None or isinstance(s, Screen) else Screen(s) for s in saved)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
