"""What a phase of a run freed, given back to the system before the next phase.

The C allocator keeps memory a program freed for its next allocations: glibc's ``malloc`` in one arena per thread
that allocated (the threads writing the unit matrices each leave one behind), and Arrow's pool likewise. A run
between phases — the unit matrices written, the segments joined — asks both to return what is free
(:func:`give_back`), so the next phase's peak does not sit on top of the last one's leftovers; the pages a phase
read of the arrays held in mapped scratch files (:mod:`unitize.runtime.mapped`) are let go with it. Where the C
library has no ``malloc_trim`` (not glibc), only Arrow's pool is asked.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache

import pyarrow as pa

from .mapped import let_go_all


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None


def give_back() -> None:
    """Return the memory the allocators hold free, and the pages read of mapped arrays, to the system (a few
    milliseconds)."""
    let_go_all()
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
