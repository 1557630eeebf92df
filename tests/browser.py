"""Pages opened in a real browser, Debian's headless chromium, from ``file://`` (no network).

``dump_dom``: a page's DOM after its scripts ran (``--dump-dom``). ``Browser``: a page driven as a
reader drives it, over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages
ended by a NUL byte on file descriptors 3 and 4, the standard library is enough): a click is a
mouse press and release at the element's place on the page, typing is text inserted where the
focus is, so the page's own event handlers run as they do for a person. Every wait is bounded, and
the browser's processes (its own process group) are killed when a test ends, whatever happened."""
from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at "
                                    "/usr/bin/chromium (apt-get install chromium; .ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"]
WAIT = 120.0  # seconds any one answer of the browser may take on a loaded machine


def dump_dom(url: str) -> str:
    """The DOM of ``url`` after its scripts ran, from headless chromium (no network: file:// only)."""
    done = subprocess.run([str(CHROMIUM), *FLAGS, "--virtual-time-budget=5000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Browser:
    """One headless chromium, and the page it shows (``open``)."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)

        def give_the_pipes() -> None:  # in the browser's process: the two ends as its fds 3 and 4
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.process = subprocess.Popen([str(CHROMIUM), *FLAGS, f"--user-data-dir={self.profile}",
                                         "--remote-debugging-pipe", "about:blank"], preexec_fn=give_the_pipes,
                                        close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        for fd in ends:
            os.close(fd)
        self._buffer = b""
        self._id = 0
        self.session: str | None = None

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.process.poll() is None:
                self._send("Browser.close")
                self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
            for fd in (self._commands, self._answers):
                os.close(fd)
            shutil.rmtree(self.profile, ignore_errors=True)

    def _send(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> int:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._id

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = True) -> dict[str, Any]:
        """A DevTools command's result (an error of the browser's fails the test)."""
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + WAIT
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                assert left > 0 and select.select([self._answers], [], [], left)[0], f"no answer to {method}"
                chunk = os.read(self._answers, 1 << 16)
                assert chunk, f"the browser ended while answering {method}"
                self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(line)
            if answer.get("id") == wanted:
                assert "error" not in answer, (method, answer["error"])
                return answer["result"]

    def open(self, url: str) -> Browser:
        """``url`` in a new tab, once it has loaded and its scripts ran; later calls act on it."""
        target = self.call("Target.createTarget", {"url": url}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.wait_for("document.readyState === 'complete' && location.protocol === 'file:'")
        return self

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression in the page."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        deadline = time.monotonic() + WAIT
        while not (value := self.evaluate(expression)):
            assert time.monotonic() < deadline, f"never true in the page: {expression}"
            time.sleep(0.05)
        return value

    def click(self, selector: str) -> None:
        """A mouse click at the middle of the element ``selector`` names (scrolled into sight first)."""
        box = self.evaluate(f"(function () {{ var e = document.querySelector({json.dumps(selector)}); "
                            "e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect(); "
                            "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1})

    def type(self, selector: str, text: str) -> None:
        """``text`` typed into the field ``selector`` names (clicked first), after what it holds is selected
        (so it replaces it)."""
        self.click(selector)
        self.evaluate(f"document.querySelector({json.dumps(selector)}).select()")
        self.call("Input.insertText", {"text": text})

    def text(self, selector: str) -> str:
        """The text the element ``selector`` names shows (its ``innerText``)."""
        return str(self.evaluate(f"document.querySelector({json.dumps(selector)}).innerText"))
