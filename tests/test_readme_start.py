"""The README's way in: the first lines, the table of formats, and the Examples section run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize.adapters import available

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end]


def test_first_lines_give_make_demo_and_make_test():
    block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make demo", "make test"]
    assert README.index("```sh") < README.index("## Your data")


def test_the_table_names_registered_formats_and_every_format_is_in_it():
    table = section("Your data → the command")
    named = set(re.findall(r"`([a-z0-9-]+)`", table)) & set(available())
    assert named == set(available())
    for command in re.findall(r"`(unitize init --format [^`]+)`", table):
        assert command.split()[3] in available()


def test_how_to_run_the_installed_command_is_on_the_first_screen():
    first = README[: README.index("## Installation")]
    assert "make shell" in first and ".venv/bin/activate" in first and ".venv/bin/unitize" in first


@pytest.mark.parametrize("block", re.findall(r"```sh\n(.*?)```", section("Examples: one per kind of data"), re.S))
def test_the_examples_section_runs_as_written(block, tmp_path):
    (tmp_path / "unitize").symlink_to(ROOT / "unitize")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-euc", block], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
