"""Progress of long steps (references resolved, records written, catalog files read).

On a terminal (stderr a tty) a ``rich`` bar with the count, the rate and the time left; otherwise
plain lines, at most one every ``PLAIN_EVERY`` seconds plus the last, so logs stay quiet. The CLI
chooses; the flow and the direct path both report through ``track``.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

PLAIN_EVERY = 10.0  # seconds between plain progress lines
_ENABLED: dict[str, bool | None] = {"bar": None}  # None: decide by the terminal; False: never a bar (tests, --quiet)


def use_bar() -> bool:
    """A bar only when stderr is a terminal (and not switched off)."""
    if _ENABLED["bar"] is not None:
        return bool(_ENABLED["bar"])
    return sys.stderr.isatty()


def set_bar(enabled: bool | None) -> None:
    _ENABLED["bar"] = enabled


@contextmanager
def track(total: int, unit: str, log: Callable[[str], None] | None = None) -> Iterator[Callable[[int], None]]:
    """Yields ``advance(n)``; shows a bar on a terminal, else logs plain lines through ``log``
    (default: stderr)."""
    if total <= 0:
        yield lambda n: None
        return
    if use_bar():
        with _bar(total, unit) as advance:
            yield advance
        return
    with _plain(total, unit, log or (lambda line: print(line, file=sys.stderr, flush=True))) as advance:
        yield advance


@contextmanager
def _bar(total: int, unit: str) -> Iterator[Callable[[int], None]]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn(unit), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn()]
    started = time.monotonic()
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task(unit, total=total, rate="")

        def advance(n: int) -> None:
            done = bar.tasks[0].completed + n
            elapsed = time.monotonic() - started
            bar.update(task, advance=n, rate=f"{done / elapsed:,.0f}/s" if elapsed > 0 else "")

        yield advance


@contextmanager
def _plain(total: int, unit: str, log: Callable[[str], None]) -> Iterator[Callable[[int], None]]:
    started = time.monotonic()
    state = {"done": 0, "said": started}

    def line() -> str:
        elapsed = time.monotonic() - started
        rate = state["done"] / elapsed if elapsed > 0 else 0.0
        left = f"about {(total - state['done']) / rate:.0f} s left" if rate else "time left unknown"
        return f"{state['done']:,}/{total:,} {unit}, {rate:,.0f} {unit}/s, {left}"

    def advance(n: int) -> None:
        state["done"] += n
        now = time.monotonic()
        if now - state["said"] >= PLAIN_EVERY and state["done"] < total:
            state["said"] = now
            log(line())

    yield advance
    if state["said"] > started or time.monotonic() - started >= PLAIN_EVERY:  # quiet for short steps
        log(line())
