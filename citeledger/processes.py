"""Worker processes that never outlive the process that started them.

A process pool's workers (``ProcessPoolExecutor``, Prefect's ``ProcessPoolTaskRunner``) each load
a catalog index of hundreds of MB. Killed with SIGKILL, the parent can run no clean-up, and its
workers would wait on their call queue for ever, holding that memory and, through them, the
``multiprocessing`` resource tracker (it ends once every holder of its pipe is gone). So every
pool of the library starts its workers with ``die_with_parent`` as the pool's initializer: on
Linux the kernel sends the worker SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``), and
everywhere a thread of the worker polls its parent's pid and ends the worker once it changes.

``stop_pool`` is the other half, for a parent that is stopped but alive (Ctrl-C, SIGTERM): the
pool's workers are terminated at once instead of finishing their current task first.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any

PARENT_POLL_SECONDS = 0.5  # how often a worker checks that its parent is alive (the fallback watch)
STOP_GRACE_SECONDS = 5.0  # how long ``stop_pool`` waits for a terminated worker before SIGKILL
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)  # the parent is gone: nobody will read this worker's results


def die_with_parent(parent: int | None = None) -> None:
    """A pool initializer: this worker process ends when the process that started it does.
    ``parent``: that process's pid (``initargs=(os.getpid(),)``), so a worker whose parent died
    while it was still starting (a spawned process imports for seconds before its initializer
    runs) ends at once instead of watching the process it was handed to.

    The kernel's ``PR_SET_PDEATHSIG`` acts when the *thread* that spawned the worker ends: every
    pool of the library is made, used and shut down within one call, so that thread outlives the
    pool's use. The poll below needs no such care and holds where ``prctl`` does not exist."""
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent is gone already
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl here: the poll below still holds
            pass
    if os.getppid() != parent:  # the parent died before the watch began
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="citeledger-parent-watch").start()


def stop_pool(pool: Any) -> None:
    """Stop a process pool now: no further task starts, its workers are terminated (SIGTERM, then
    SIGKILL after ``STOP_GRACE_SECONDS``) rather than left to finish a task nobody will read."""
    from concurrent.futures import ProcessPoolExecutor  # (loaded by whoever made the pool)

    processes = list((getattr(pool, "_processes", None) or {}).values()) if isinstance(pool, ProcessPoolExecutor) \
        else []
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered as an interrupt so every ``finally`` and ``atexit`` hook runs."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(f"signal {signum}")
        self.signum = signum
