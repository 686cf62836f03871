"""The bundled examples' outputs are the same as when their golden digests were taken (tools/golden.py).

A refactoring that changes a unit matrix, a segment, the manifest or an agreement value fails here,
naming the file. Rewrite the digests (``python tools/golden.py --update``) only for a change of the
outputs that is meant, and say why in the commit.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("golden", ROOT / "tools" / "golden.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)

EXAMPLES = golden.examples()


def test_every_example_has_golden_digests() -> None:
    assert EXAMPLES == ["bio-mini", "brat-mini", "crowd-mini", "inception-mini", "labels-mini", "models-mini", "tdb-mini"]
    assert sorted(p.stem for p in golden.GOLDEN.glob("*.json")) == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_outputs_equal_the_golden_digests(name: str, tmp_path: Path) -> None:
    out = golden.run_example(name, tmp_path)
    found = golden.digests(out)
    stored = json.loads((golden.GOLDEN / f"{name}.json").read_text(encoding="utf-8"))["files"]
    assert "manifest.json" in found and "agreement/results.parquet" in found
    assert any(rel.startswith("units/") for rel in found)
    assert golden.compare(name, found) == []
    assert found == stored


def test_a_changed_table_is_caught(tmp_path: Path) -> None:
    """The digest sees one changed value (a test that cannot fail would be worth nothing)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path)
    before = golden.table_digest(path)
    pq.write_table(pa.table({"a": [1, 2, 4]}), path)
    assert golden.table_digest(path) != before
    assert golden.table_digest(path)[0] == 3
