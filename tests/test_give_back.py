"""What a phase of a run freed goes back to the system (``runtime.memory.give_back``): glibc keeps freed holes in its
heap (only its top is returned on ``free``); ``malloc_trim`` returns them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from unitize.runtime import memory


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's (Linux)")
def test_freed_holes_in_the_heap_go_back_to_the_system():
    assert memory._malloc_trim() is not None
    memory.give_back()
    blocks = [np.ones(12_000, np.int64) for _ in range(3_000)]  # 96 KB each: the heap, not mmap; about 275 MiB
    kept = blocks[::10]  # every tenth kept: the heap's top stays in use, the rest are holes free() cannot return
    del blocks
    before = _rss_mib()
    memory.give_back()
    after = _rss_mib()
    assert before - after > 150, (before, after)
    assert len(kept) == 300
