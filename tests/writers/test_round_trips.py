"""read → write → read in the same format gives the same texts, span records, submissions and unit matrices of
every setting — on the fixtures of every format, the bundled examples and every sample of ../shared/corpora."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import Seed, fixtures, samples
from tests.conftest import CORPORA, ROOT, needs_shared
from tests.writers.roundtrip import materialize, read_back, records, submissions, texts, units_differ, valid
from unitize import RunError, read_corpus
from unitize.run.conversion import convert_format
from unitize.writers import available

EXAMPLES = ROOT / "unitize" / "examples"
EXAMPLE_SEEDS = {
    "brat": "brat-mini", "webanno-tsv": "inception-mini", "span-table": "crowd-mini", "conll-bio": "bio-mini", "datt": "tdb-mini",
    "labels": "labels-mini",
}


def _example(name: str) -> Seed:
    root = EXAMPLES / name
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.suffix != ".md"}
    return Seed(name, files, ["{root}/study.toml"])


def _toxic() -> Seed:
    names = ("annotations.csv", "spans.csv", "comments.csv")
    study = ('[input]\nformat = "span-table"\nannotations = "spans.csv"\ntexts = "comments.csv"\nroster = "annotations.csv"\n'
             'columns = {doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start"}\n')
    return Seed("toxic-spans", {**{n: (CORPORA / "toxic-spans" / n).read_bytes() for n in names}, "study.toml": study.encode()}, ["{root}/study.toml"])


def round_trip(fmt: str, seed: Seed, tmp_path: Path) -> None:
    """The seed read, written as its own format, read back: everything the same, nothing reported not convertible."""
    settings = materialize(seed, tmp_path / "in")
    source = read_corpus(settings)
    if source.traits.kind == "spans" and source.traits.tokenizer is None:
        settings = replace(settings, tokenizer="whitespace")
    if source.traits.kind == "spans" and not any(d.text is not None for d in source.documents.values()):
        with pytest.raises(RunError, match="no span could be written"):
            convert_format(settings, fmt, tmp_path / "out")
        return
    _, findings, manifest = convert_format(settings, fmt, tmp_path / "out")
    assert manifest is not None
    textless = {d for d, doc in source.documents.items() if doc.text is None}
    assert [f.message for f in findings if f.code in ("not-convertible", "text-changed") and f.doc not in textless] == []
    back, back_settings = read_back(tmp_path / "out")
    src = valid(source)
    assert texts(back) == {d: t for d, t in texts(src).items() if t is not None}
    assert records(back) == records(src)
    assert submissions(back) == {s for s in submissions(src) if s[1] not in textless}
    assert units_differ(back, back_settings, src, settings) == []
    assert manifest["accounting"]["not_convertible"] == len({f.doc for f in findings if f.code == "not-convertible"} & textless)


def test_every_reader_has_a_writer_and_back() -> None:
    from unitize.adapters import available as readers
    from unitize.writers import get_target

    assert set(available()) == set(readers())
    for name in available():
        assert get_target(name).reads_as == name


SEEDS = [(fmt, seed) for fmt in sorted(available()) for seed in fixtures().get(fmt, [])]
SEEDS += [(fmt, _example(name)) for fmt, name in sorted(EXAMPLE_SEEDS.items())]


@pytest.mark.parametrize("fmt, seed", SEEDS, ids=[f"{fmt}-{seed.name}" for fmt, seed in SEEDS])
def test_read_write_read_gives_the_same_corpus(fmt: str, seed: Seed, tmp_path: Path) -> None:
    round_trip(fmt, seed, tmp_path)


@needs_shared
@pytest.mark.parametrize("fmt", sorted(available()))
def test_every_shared_sample_round_trips(fmt: str, tmp_path: Path) -> None:
    seeds = samples().get(fmt, []) + ([_toxic()] if fmt == "span-table" else [])
    if not seeds:
        pytest.skip(f"../shared/corpora has no sample of {fmt}")
    for i, seed in enumerate(seeds):
        round_trip(fmt, seed, tmp_path / str(i))
