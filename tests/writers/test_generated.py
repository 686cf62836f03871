"""Round trips on property-generated corpora (hypothesis): brat projects of overlapping, nested, discontinuous
and zero-length entities, empty documents, text beyond the BMP, CRLF line breaks and a BOM — written as every
span tool's format and read back (every element read back unchanged or reported ``not-convertible``, units of
every setting the same), and each written output read, written again in its own format and read back unchanged.

The example counts are small (``UNITIZE_HYPOTHESIS_EXAMPLES``, default 3 per test) so the suite stays fast. A failing
example is reported as found, not shrunk: each shrinking step is a whole conversion and read-back, and Hypothesis
shrinks for up to five minutes (a suite run that seemed to hang); ``UNITIZE_HYPOTHESIS_SHRINK=1`` shrinks it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.adapters.test_fuzz import Seed
from tests.writers.roundtrip import cross
from tests.writers.test_round_trips import round_trip

EXAMPLES = int(os.environ.get("UNITIZE_HYPOTHESIS_EXAMPLES", "3"))
SPAN_TOOLS = ("brat", "webanno-tsv", "doccano", "label-studio", "conll-bio", "span-table", "quotes", "spacy", "huggingface", "factgenie", "xmi")
#: letters, spaces, punctuation, line breaks, and characters beyond the BMP (two UTF-16 code units each)
ALPHABET = st.sampled_from(list("ab cd.,\n") + ["ş", "中", "😀", "𝒜"])
LABELS = st.sampled_from(["PER", "LOC", "Q-1"])

PHASES = tuple(Phase) if os.environ.get("UNITIZE_HYPOTHESIS_SHRINK") == "1" else tuple(p for p in Phase if p is not Phase.shrink)

run = settings(max_examples=EXAMPLES, deadline=None, phases=PHASES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def entity(draw: st.DrawFn, length: int) -> tuple[str, list[tuple[int, int]]]:
    """A label and one to three fragments, in text order, not overlapping (they may touch or be empty)."""
    points = sorted(draw(st.lists(st.integers(0, length), min_size=2, max_size=6)))
    pairs = [(points[i], points[i + 1]) for i in range(0, len(points) - 1, 2)]
    return draw(LABELS), pairs[:3]


@st.composite
def brat_projects(draw: st.DrawFn) -> Seed:
    """A brat project: one to three annotators, one to three documents (empty ones too), CRLF and BOM by draw."""
    crlf, bom = draw(st.booleans()), draw(st.booleans())
    n_docs = draw(st.integers(1, 3))
    bodies = [draw(st.text(ALPHABET, max_size=40)) for _ in range(n_docs)]
    files: dict[str, bytes] = {}
    for a in range(draw(st.integers(1, 3))):
        for d, body in enumerate(bodies):
            text = ("\ufeff" if bom else "") + body  # the model's text: the BOM is character 0, CRLF one character
            raw = text.replace("\n", "\r\n") if crlf else text
            lines = []
            for i, (label, frags) in enumerate(draw(st.lists(entity(len(text)), max_size=5 if text else 0))):
                where = ";".join(f"{b} {e}" for b, e in frags)
                covered = " ".join(text[b:e] for b, e in frags).replace("\n", " ")
                lines.append(f"T{i + 1}\t{label} {where}\t{covered}\n")
            files[f"proj/ann{a}/doc{d}.txt"] = raw.encode()
            files[f"proj/ann{a}/doc{d}.ann"] = "".join(lines).encode()
    return Seed("generated", files, ["--format", "brat", "--annotations", "{root}/proj"])


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@run
@given(seed=brat_projects())
def test_generated_brat_projects_round_trip(seed: Seed) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        round_trip("brat", seed, Path(tmp))


#: found by the test below: a document whose text has no token (a CRLF) holds a span; CoNLL BIO cannot write the
#: document, and each of its records must be reported (it was one finding for the document)
TOKENLESS = Seed("tokenless", {"proj/a/d.txt": b"\r\n", "proj/a/d.ann": b"T1\tPER 0 1\t\r\n", "proj/a/e.txt": b"ab", "proj/a/e.ann": b"T1\tLOC 0 2\tab\n",
                               "proj/b/d.txt": b"\r\n", "proj/b/d.ann": b"", "proj/b/e.txt": b"ab", "proj/b/e.ann": b"T1\tLOC 0 2\tab\n"},
                 ["--format", "brat", "--annotations", "{root}/proj"])


@pytest.mark.parametrize("to", SPAN_TOOLS)
@run
@given(seed=brat_projects())
@example(seed=TOKENLESS)
def test_generated_corpora_convert_and_round_trip(to: str, seed: Seed) -> None:
    """brat → ``to``: every element read back unchanged or reported; then ``to`` → ``to`` → read: the same."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = cross(seed, to, Path(tmp))
        assert counts["diff"] == 0, counts
        if counts["nothing-writable"]:
            return
        written = Path(tmp) / "out"
        files = {k: v for k, v in _tree(written).items() if k not in ("manifest.json", "report.jsonl")}
        round_trip(to, Seed(f"generated-{to}", files, ["{root}/study.toml"]), Path(tmp) / "again")
