"""Process hygiene for flows run from the command line: no Prefect server outlives its command.

Without ``PREFECT_API_URL`` a flow run starts a temporary API server (``SubprocessASGIServer``,
a ``python -m uvicorn`` child of about 220 MB) and stops it from an ``atexit`` hook. Two ways
left it running under init:

- SIGTERM: Python's default action ends the process without running ``atexit``. ``stop_on_sigterm``
  turns SIGTERM into ``Terminated`` (a ``KeyboardInterrupt``), so the flow run is marked crashed,
  the ledger lock released, and the ``atexit`` hook stops the server.
- SIGKILL (or any death that skips ``atexit``): ``watch_parent`` starts that server through a
  small wrapper that watches its parent and shuts uvicorn down (its own SIGTERM handling) when
  the parent is gone. Only ``prefect.server.api.server``'s use of ``subprocess.Popen`` is
  wrapped, and only for its uvicorn command; nothing else of Prefect changes.

``prepare_cli_process`` does both; a CLI path that runs no flow need not call it.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
from typing import Any

from citeledger.processes import Terminated


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(signum)


def stop_on_sigterm() -> None:
    """SIGTERM ends this process like Ctrl-C does (main thread only; elsewhere a no-op)."""
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


class SignalWatch:
    """Which of SIGINT and SIGTERM reached this process, whoever handled them: Prefect's flow
    engine puts its own SIGTERM handler in place during a flow run, and what it raises may come
    out wrapped in another error (a failed serialisation, an API call to a server stopped by the
    same signal). Python writes every signal number it handles to the wakeup fd, handler or not,
    so the command can still say "interrupted" and name the run. Main thread only."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.previous = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)

    def received(self) -> int | None:
        """SIGTERM if it came, else SIGINT if it came, else None."""
        try:
            while data := os.read(self.read_fd, 512):
                self.seen.update(data)
        except BlockingIOError:
            pass
        return next((s for s in (signal.SIGTERM, signal.SIGINT) if s in self.seen), None)

    def close(self) -> None:
        signal.set_wakeup_fd(self.previous)
        os.close(self.read_fd)
        os.close(self.write_fd)


# The signal watch of the running command (set by ``cli.main``), which the log filter below reads.
WATCH: SignalWatch | None = None


class QuietAfterSignal(logging.Filter):
    """Once SIGINT or SIGTERM has come, Prefect's log lines keep their one line but lose the
    traceback: a stopped flow run is not a bug to report, and the command's last line names the run."""

    def filter(self, record: logging.LogRecord) -> bool:
        if WATCH is not None and WATCH.received() is not None:
            record.exc_info, record.exc_text, record.stack_info = None, None, None
            logging.raiseExceptions = False  # nor "Error logging to API" for each batch the stopped server misses
        return True


def quiet_after_signal() -> None:
    """``QuietAfterSignal`` on every handler of Prefect's loggers and the root's (once each)."""
    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in list(logging.root.manager.loggerDict)
                                      if n.startswith("prefect"))]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, QuietAfterSignal) for f in handler.filters):
                handler.addFilter(QuietAfterSignal())


# Runs in the server's process: a thread polls the parent; once it is gone (its pid no longer our
# parent's), uvicorn gets SIGTERM (a clean shutdown), and the process exits within 10 s anyway.
WATCHDOG = r"""
import os, runpy, signal, sys, threading, time
parent = int(sys.argv[1])
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
    os._exit(1)
threading.Thread(target=watch, daemon=True, name="citeledger-parent-watch").start()
sys.argv = ["uvicorn", *sys.argv[2:]]
runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
"""


def watched_command(args: list[str], parent: int | None = None) -> list[str]:
    """``python -m uvicorn ARGS`` as the same command under the parent watchdog; others as given."""
    args = list(args)
    if len(args) >= 3 and args[1:3] == ["-m", "uvicorn"]:
        return [args[0], "-c", WATCHDOG, str(os.getpid() if parent is None else parent), *args[3:]]
    return args


class _WatchedSubprocess:
    """``subprocess`` as ``prefect.server.api.server`` sees it: ``Popen`` of the uvicorn command
    goes through ``watched_command``; every other name is the real module's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    @staticmethod
    def Popen(args: Any, *rest: Any, **kwargs: Any) -> subprocess.Popen:  # noqa: N802 - the module's name
        if isinstance(args, (list, tuple)):
            args = watched_command([str(a) for a in args])
        return subprocess.Popen(args, *rest, **kwargs)


def watch_parent() -> None:
    """Start Prefect's temporary server (if it starts one) under the parent watchdog."""
    if os.environ.get("PREFECT_API_URL"):
        return  # a configured server: no temporary one is started
    from prefect.server.api import server

    if not isinstance(server.subprocess, _WatchedSubprocess):
        server.subprocess = _WatchedSubprocess()  # type: ignore[assignment]  # the module name, on purpose


def prepare_cli_process() -> None:
    """Everything a CLI command that runs a flow needs so no server outlives it."""
    stop_on_sigterm()
    watch_parent()

