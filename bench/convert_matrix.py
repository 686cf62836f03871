"""The format × format matrix of convert-format: every span format's samples written as every span format.

For each source format (its test fixtures, and its samples in ../shared/corpora when that is beside the
repository) and each target, the source is converted with :func:`unitize.run.conversion.convert_format`, read
back, and compared with the source: a cell counts the elements written and read back unchanged (``pass``),
those the target reported ``not-convertible``, and any that differ (``diff``, which must be 0). A cell
without anything writable (the target holds none of the source's layers) shows ``—``.

    python bench/convert_matrix.py [--out bench/convert-matrix.md] [--no-shared] [--records-only]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adapters.test_fuzz import fixtures, samples  # noqa: E402
from tests.writers.roundtrip import SPAN_FORMATS, cross  # noqa: E402


@dataclass
class Cell:
    passed: int = 0
    not_convertible: int = 0
    diff: int = 0
    empty: int = 0
    snapped: int = 0

    def add(self, other: Counter) -> None:
        self.passed += other["pass"]
        self.not_convertible += other["not-convertible"]
        self.diff += other["diff"]
        self.empty += other["nothing-writable"]
        self.snapped += other["snapped"]

    def show(self) -> str:
        if not (self.passed or self.not_convertible or self.diff):
            return "—"
        text = f"{self.passed} / {self.not_convertible}" + (f" ({self.snapped} snapped)" if self.snapped else "")
        return text + (f" (**{self.diff} diff**)" if self.diff else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the matrix (Markdown) here too")
    parser.add_argument("--no-shared", action="store_true", help="the test fixtures only")
    parser.add_argument("--records-only", action="store_true", help="compare span records only, not the unit matrices (faster)")
    args = parser.parse_args()
    seeds = {fmt: list(fixtures().get(fmt, [])) + ([] if args.no_shared else list(samples().get(fmt, []))) for fmt in SPAN_FORMATS}
    cells: dict[tuple[str, str], Cell] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for source in SPAN_FORMATS:
            for target in SPAN_FORMATS:
                cell = cells[(source, target)] = Cell()
                for i, seed in enumerate(seeds[source]):
                    cell.add(cross(seed, target, Path(tmp) / f"{source}-{target}-{i}", units=not args.records_only))
                print(f"{source:>13} → {target:<13} {cell.show()}", file=sys.stderr)
    lines = [
        "| from \\ to | " + " | ".join(SPAN_FORMATS) + " |",
        "|---|" + "---|" * len(SPAN_FORMATS),
    ]
    for source in SPAN_FORMATS:
        lines.append(f"| **{source}** ({len(seeds[source])}) | " + " | ".join(cells[(source, t)].show() for t in SPAN_FORMATS) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 1 if any(c.diff for c in cells.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
