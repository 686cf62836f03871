"""A command that reads or writes tables runs Arrow on its jemalloc pool where pyarrow's wheels have one (its peaks
5-13 % lower than on mimalloc, pyarrow's default: bench/README.md), chosen before Arrow is loaded; a pool the user
names in ARROW_DEFAULT_MEMORY_POOL is kept, and a command that loads no table changes nothing."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLE

PROBE = """
import os, sys
import unitize.cli as cli
cli._main(sys.argv[1:])
import pyarrow as pa
print(os.environ.get("ARROW_DEFAULT_MEMORY_POOL"), pa.default_memory_pool().backend_name)
"""


def pool_after(tmp_path, *argv: str, **env: str) -> list[str]:
    environ = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | env
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=environ, cwd=tmp_path, check=True)
    return done.stdout.split()[-2:]


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"), reason="jemalloc is chosen on Linux x86-64")
def test_a_command_runs_arrow_on_jemalloc_unless_the_user_chose_a_pool(tmp_path):
    study = str(EXAMPLE / "study.toml")
    assert pool_after(tmp_path, "validate", study, "-q") == ["jemalloc", "jemalloc"]
    assert pool_after(tmp_path, "validate", study, "-q", ARROW_DEFAULT_MEMORY_POOL="system") == ["system", "system"]
    assert pool_after(tmp_path, "formats")[0] == "None"  # a light command leaves it to Arrow
