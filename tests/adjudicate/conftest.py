"""Output directories of small brat projects, made once per test, for the adjudication tests."""

from __future__ import annotations

from pathlib import Path

from unitize.cli import main


def brat_out(root: Path, text: str, anns: dict[str, str], *, layout: str = "wide", units: str = "word",
             modes: str = "separate,labels", extra: tuple[str, ...] = ()) -> Path:
    """A brat project of one document ``d`` annotated by each annotator of ``anns``, converted into ``root/out``."""
    for annotator, ann in anns.items():
        folder = root / "proj" / annotator
        folder.mkdir(parents=True)
        (folder / "d.txt").write_text(text, encoding="utf-8")
        (folder / "d.ann").write_text(ann, encoding="utf-8")
    out = root / f"out-{layout}"
    assert main(["convert", "--format", "brat", "--annotations", str(root / "proj"), "--out", str(out), "--units", units,
                 "--approaches", "interval", "--modes", modes, "--tokenizer", "whitespace", "--layout", layout, "-q", *extra]) == 0
    return out
