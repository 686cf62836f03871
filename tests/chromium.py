"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No Python package and no browser download: Debian's ``chromium`` (``make browser``
installs it). The browser reads commands on file descriptor 3 and writes replies
and events on 4, each a JSON message ended by a NUL byte.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")


def find() -> str | None:
    """The Chromium executable, or None."""
    for name in CANDIDATES:
        path = name if os.path.isabs(name) and os.access(name, os.X_OK) else shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page; ``errors`` collects console errors, exceptions and failed loads."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900):
        self._profile = tempfile.TemporaryDirectory(prefix="unitize-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the pipes become descriptors 3 and 4
            a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [executable, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                f"--user-data-dir={self._profile.name}", f"--window-size={width},{height}", "about:blank"]
        self.proc = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=wire, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._events: queue.Queue = queue.Queue()
        self._cond = threading.Condition()
        self.errors: list[str] = []
        self.loaded = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.send(method, session=True)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    # -- protocol --

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[-1] = {"error": {"message": "browser closed the pipe"}}
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._dispatch(json.loads(raw))

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "id" in msg:
            with self._cond:
                self._replies[msg["id"]] = msg
                self._cond.notify_all()
            return
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Page.loadEventFired":
            self.loaded.set()

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False, timeout: float = 30) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._next not in self._replies and -1 not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no reply to {method} in {timeout} s")
                self._cond.wait(left)
            reply = self._replies.pop(self._next, None) or self._replies[-1]
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    # -- what a test does --

    def open(self, url: str, timeout: float = 30) -> None:
        self.loaded.clear()
        self.send("Page.navigate", {"url": url}, session=True)
        if not self.loaded.wait(timeout):
            raise BrowserError(f"{url} did not finish loading in {timeout} s")

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll a JavaScript expression until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression!r}")
            time.sleep(0.05)

    def key(self, key: str) -> None:
        """Press and release a printable key (what a user's keyboard sends)."""
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "text": key, "code": f"Key{key.upper()}"}, session=True)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": f"Key{key.upper()}"}, session=True)

    def press(self, key: str) -> None:
        """Press and release Tab or Enter."""
        code, text = {"Tab": (9, None), "Enter": (13, "\r")}[key]
        down = {"type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": code}
        self.send("Input.dispatchKeyEvent", dict(down, text=text) if text else down, session=True)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code}, session=True)

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = self.send("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
