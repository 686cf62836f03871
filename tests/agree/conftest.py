"""What the agree tests share: the example corpus converted once per module (separate and combined modes).

A test module of its own corpus defines its own ``out``, which takes precedence.
"""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    target = tmp_path_factory.mktemp("agree-measure") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "--modes", "separate,combined", "-q"]) == 0
    return target
