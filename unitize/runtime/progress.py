"""The progress-reporting protocol shared by adapters, the run and the CLI.

A progress callable takes an iterable and a description and returns an
iterable over the same items (the CLI passes a tqdm bar; the API default does
nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

T = TypeVar("T")


class Progress(Protocol):
    """``progress(items, desc)``: an iterable over the same items, showing ``desc`` while they pass (or not)."""

    def __call__(self, items: Iterable[T], desc: str, /) -> Iterable[T]: ...


def no_progress(items: Iterable[T], desc: str) -> Iterable[T]:
    return items


class Sized(Iterable[T]):
    """An iterator with a known length, so a progress bar can show a total."""

    def __init__(self, items: Iterable[T], length: int):
        self._items = items
        self._length = length

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return self._length
