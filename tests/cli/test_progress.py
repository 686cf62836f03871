"""Progress bars show on a terminal — a sized one, and a pseudo-terminal that reports no width — and never when piped."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pytest

from tests.conftest import EXAMPLE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals are tested on Linux")


def on_terminal(args: list[str], cwd, columns: int | None) -> tuple[int, str]:
    """Run ``python -m unitize ARGS`` with a pseudo-terminal as its standard streams: exit code and what it drew."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
        os.chdir(cwd)
        os.execv(sys.executable, [sys.executable, "-m", "unitize", *args])
    if columns is not None:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


@pytest.mark.parametrize("columns", [100, None], ids=["sized", "no-width"])
def test_convert_agree_and_report_draw_their_bars(tmp_path, columns):
    code, drawn = on_terminal(["convert", str(EXAMPLE / "study.toml"), "--out", "out"], tmp_path, columns)
    assert code == 0
    for step in ("reading annotations", "tokenizing", "writing unit matrices"):
        assert f"{step}:" in drawn and "it/s]" in drawn, drawn[:400]
    code, drawn = on_terminal(["agree", "out"], tmp_path, columns)
    assert code == 0 and "%|" in drawn
    code, drawn = on_terminal(["report", "out"], tmp_path, columns)
    assert code == 0 and "report: settings:" in drawn and "report: writing documents:" in drawn


def test_no_bar_when_piped_or_quiet(tmp_path):
    run = subprocess.run([sys.executable, "-m", "unitize", "convert", str(EXAMPLE / "study.toml"), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, check=True)
    assert "it/s" not in run.stderr and "%|" not in run.stderr
    code, drawn = on_terminal(["agree", "out", "-q"], tmp_path, 100)
    assert code == 0 and drawn == ""
