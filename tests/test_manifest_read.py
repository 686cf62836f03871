"""Reading a manifest without its list of input files: the same manifest, the list empty, in the layout unitize writes;
any other layout is read whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.output import OutputError, read_manifest
from unitize.output.claim import without_inputs


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("manifest") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--units", "word", "-q"]) == 0
    return target


def test_a_written_manifest_reads_the_same_without_its_inputs(out):
    whole = read_manifest(out)
    assert len(whole["inputs"]) == 26  # every input file of the example
    assert read_manifest(out, inputs=False) == {**whole, "inputs": []}
    text = (out / "manifest.json").read_text(encoding="utf-8")
    assert len(without_inputs(text)) < len(text) - 1000


def manifest(inputs_last: bool = False, path: str = "annotations/a.xml") -> dict:
    inputs = [{"path": path, "role": "annotations", "bytes": 3, "sha256": "0" * 64}]
    body = {"format_version": 3, "tool": {"name": "unitize", "version": "0"}, "settings": {"layers": ["Arg1"]}}
    rest = {"outputs": [{"path": "units/word-interval"}], "accounting": {}, "summary": {"documents": 1}}
    return {**body, **rest, "inputs": inputs} if inputs_last else {**body, "inputs": inputs, **rest}


@pytest.mark.parametrize("data, dump", [
    (manifest(), lambda d: json.dumps(d, indent=2)),
    (manifest(inputs_last=True), lambda d: json.dumps(d, indent=2)),  # the last key: no comma after it
    (manifest(path='x\n  "outputs": [], "inputs": ['), lambda d: json.dumps(d, indent=2)),  # a path that looks like keys
    (manifest(), lambda d: json.dumps(d)),  # another layout: read whole
    (manifest(), lambda d: json.dumps(d, indent=2).replace('\n    {', '\n  {')),  # items as deep as keys: read whole
])
def test_any_manifest_reads_as_it_is_but_its_inputs(tmp_path, data, dump):
    (tmp_path / "manifest.json").write_text(dump(data), encoding="utf-8")
    assert read_manifest(tmp_path) == data
    got = read_manifest(tmp_path, inputs=False)
    assert {k: v for k, v in got.items() if k != "inputs"} == {k: v for k, v in data.items() if k != "inputs"}
    assert got["inputs"] in ([], data["inputs"])


def test_a_manifest_broken_outside_its_inputs_is_refused_either_way(tmp_path):
    text = json.dumps(manifest(), indent=2)
    (tmp_path / "manifest.json").write_text(text.replace('"summary": {', '"summary": {,'), encoding="utf-8")
    for inputs in (True, False):
        with pytest.raises(OutputError, match="cannot be read"):
            read_manifest(tmp_path, inputs=inputs)
    # broken inside the list of inputs: refused where they are read, not where they are not
    (tmp_path / "manifest.json").write_text(text.replace('"bytes": 3,', '"bytes": 3,,'), encoding="utf-8")
    with pytest.raises(OutputError, match="cannot be read"):
        read_manifest(tmp_path)
    assert read_manifest(tmp_path, inputs=False)["inputs"] == []
