"""The README is executable documentation: its Python runs, its commands and flags exist, its layout is the tree."""

from __future__ import annotations

import ast
import re
import shlex
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from tests.conftest import EXAMPLE, ROOT
from unitize.cli import build_parser, main

README = (ROOT / "README.md").read_text(encoding="utf-8")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(lang: str) -> list[str]:
    """The README's fenced code blocks of one language, in order."""
    return [body for kind, body in _FENCE.findall(README) if kind == lang]


def section(title: str) -> str:
    """The README text from a heading to the next heading of the same or a higher level (code blocks skipped)."""
    level = len(title) - len(title.lstrip("#"))
    lines = README.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    fenced = False
    for i in range(start + 1, len(lines)):
        fenced ^= lines[i].startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", lines[i]):
            return "".join(lines[start:i])
    return "".join(lines[start:])


def command_lines() -> list[str]:
    """Every ``unitize …`` command shown in a shell block (continuation lines joined, comments cut)."""
    out = []
    for body in blocks("sh"):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("unitize "):
                out.append(re.split(r"\s+#\s", line, maxsplit=1)[0])
    return out


def subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def test_readme_shows_commands() -> None:
    # the tour, agree, export, flat labels: a README without commands would make the next test vacuous
    assert len(command_lines()) >= 15


@pytest.mark.parametrize("line", command_lines())
def test_every_command_and_flag_in_the_readme_exists(line: str) -> None:
    words = shlex.split(line)
    commands = subparsers()
    assert words[1] in commands, f"README shows `unitize {words[1]}`, which is not a command"
    known = commands[words[1]]._option_string_actions
    flags = [w.split("=", 1)[0] for w in words[2:] if w.startswith("-")]
    unknown = [f for f in flags if f not in known]
    assert not unknown, f"README shows {line!r}; `unitize {words[1]}` has no {', '.join(unknown)}"


def test_the_python_api_section_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (code,) = [b for b in blocks("python") if b in section("## The Python API")]
    shutil.copytree(EXAMPLE, tmp_path / "study")
    monkeypatch.chdir(tmp_path / "study")
    scope: dict = {}
    exec(compile(code, "README.md (The Python API)", "exec"), scope)
    result = scope["result"]
    ama = result.matrix("ama", "Arg1", unit="word", approach="interval")
    assert isinstance(ama, pa.Table) and set(ama.column("group").to_pylist()) == {"ama"}
    # the last loop of the block streams label matrices: "O" marks units an annotator did not annotate
    assert "O" in scope["table"].column("ayse").to_pylist()
    assert result.layout.name == "wide" and result.findings
    assert (tmp_path / "study" / "out" / "manifest.json").is_file()
    assert scope["manifest"]["summary"]["annotators"] == ["ayse", "burak", "cem"]


def test_the_flat_labels_example_prints_what_the_readme_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = section("## Flat labels")
    shell = next(b for b in blocks("sh") if b in text and "labels-mini" in b)
    monkeypatch.chdir(tmp_path)
    for line in shell.strip().splitlines():
        words = shlex.split(line)
        words = [str(ROOT / w) if w.startswith("unitize/examples/") else w for w in words]
        assert main(words[1:] + (["-q"] if words[1] == "convert" else [])) == 0
    code = next(b for b in blocks("python") if b in text)
    scope: dict = {}
    exec(compile(code, "README.md (Flat labels)", "exec"), scope)
    shown = [ast.literal_eval(m) for m in re.findall(r"(\{[^{}]*\})", code)]
    rows = {r["item"]: r for r in scope["t"]}
    assert shown and all(rows[s["item"]] == s for s in shown)


def test_the_layout_section_names_every_module() -> None:
    layout = section("## Layout")
    package = ROOT / "unitize"
    modules = [p for p in package.iterdir() if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p.is_dir() and (p / "__init__.py").exists())]
    missing = [p.name for p in modules if f"unitize/{p.name}{'/' if p.is_dir() else ''}" not in layout]
    assert not missing, f"README Layout does not mention {', '.join(sorted(missing))}"


def test_the_large_studies_section_reads_a_partitioned_sparse_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dask.dataframe", reason="the dask extra (pip install 'unitize[dask]') is not installed")
    text = section("## Large studies")
    (code,) = [b for b in blocks("python") if b in text]
    monkeypatch.chdir(tmp_path)
    study = ROOT / "unitize" / "examples" / "tdb-mini" / "study.toml"
    assert main(["convert", str(study), "--out", "out", "--layout", "sparse", "--partition-units", "600", "-q"]) == 0
    scope: dict = {}
    exec(compile(code, "README.md (Large studies)", "exec"), scope)
    assert scope["units"].npartitions > 1 and "setting" in scope["units"].columns
    dense = scope["dense"]
    assert set(dense.column("group").to_pylist()) == {"ama"} and set(dense.column("layer").to_pylist()) == {"Arg1"}
    marks = scope["marks"]
    assert int(marks.loc[("ama", "Arg1"), "ayse"]) == sum(dense.column("ayse").to_pylist())  # the implicit rows are 0
