"""A command costs what it does: what `unitize --help`, `unitize formats`, … import (unitize/cli/__init__.py).

Module sets, never timings: each case runs in a fresh interpreter and reports ``sys.modules``
after importing the command line or running a command. The packages below are the weight a
command pays only when its work needs them (bench/README.md, "The fixed cost of a command",
has the times).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: never loaded to start a command or describe the formats: each belongs to the work of some command
HEAVY = ("pandas", "scipy", "matplotlib", "spacy", "dask", "lxml", "statsmodels", "krippendorff", "pyarrow.dataset")

PROBE = """
import contextlib, io, json, sys
args = json.loads(sys.argv[1])
import unitize.cli
if args is not None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            unitize.cli.main(args)
        except SystemExit:
            pass
print(json.dumps(sorted(sys.modules)))
"""


def loaded(args: list[str] | None) -> set[str]:
    """The modules a fresh interpreter holds after ``import unitize.cli`` and ``main(args)`` (None: the import alone)."""
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    return set(json.loads(out.stdout))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args", [None, ["--help"], ["formats"], ["formats", "--format", "datt"], ["convert", "--help"], ["agree", "--help"]], ids=str
)
def test_starting_a_command_loads_no_heavy_package(args: list[str] | None) -> None:
    assert heavy(loaded(args)) == []


@pytest.mark.parametrize("args", [None, ["--help"], ["--version"], ["report", "--help"]], ids=str)
def test_the_top_level_loads_no_machinery(args: list[str] | None) -> None:
    """The command list needs each command's one line of help: no adapter, no settings, no NumPy or pyarrow."""
    modules = loaded(args)
    machinery = ("unitize.adapters", "unitize.config", "unitize.run", "unitize.metrics")
    assert not {m for m in modules if m in machinery or m.startswith(tuple(p + "." for p in machinery))}
    assert not {"numpy", "pyarrow"} & modules


def test_a_command_builds_its_own_parser_only() -> None:
    """`unitize agree --help` reads the metric registry, not the formats' declarations (the flags of convert)."""
    modules = loaded(["agree", "--help"])
    assert "unitize.metrics.registry" in modules
    assert not {m for m in modules if m.startswith("unitize.adapters")}


def test_the_package_imports_its_api_when_asked() -> None:
    code = (
        "import sys, unitize; before = 'unitize.run' in sys.modules; "
        "from unitize import convert, densify, load_settings, Settings; "
        "print(before, convert.__module__, load_settings.__name__, Settings.__module__, bool(unitize.__version__))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert out.stdout.split() == ["False", "unitize.run.pipeline", "load_toml", "unitize.config.settings", "True"]


def test_the_default_agree_loads_no_scipy_nor_arrow_group_by(tmp_path) -> None:
    """Cochran's Q's p-value is in closed form, the relation records are gathered with NumPy: the default
    metrics on span data load neither scipy nor pyarrow.acero and pyarrow.dataset (pandas cannot be
    asserted here: pyarrow imports it, when installed, the first time it builds an array)."""
    out = tmp_path / "out"
    study = ROOT / "unitize" / "examples" / "tdb-mini" / "study.toml"
    subprocess.run([sys.executable, "-m", "unitize", "convert", str(study), "--out", str(out), "-q"], cwd=ROOT, timeout=300, check=True)
    modules = loaded(["agree", str(out), "-q"])
    assert "unitize.agree.spans" in modules
    assert not {m for m in modules if m.split(".")[0] == "scipy" or m.startswith(("pyarrow.acero", "pyarrow.dataset"))}
