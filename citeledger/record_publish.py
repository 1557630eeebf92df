"""Record files published while the next records are built: a write of many records hands each
batch (``RECORDS_PER_WRITE`` records, three files each) to one background thread, which stages,
syncs (``os.sync`` waits for the disk with the GIL released) and renames it through
``atomic.atomic_write_files`` while the caller builds the next batch. At most one batch is in
flight and batches are published in order, so a crash leaves what ``atomic_write_files`` leaves
(whole files, old or new, and staged temps the next writer removes); the caller waits for the
batch in flight before it returns or raises, so no file is written after the ledger lock is
released."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Callable

from .ledger import LedgerStore

Batch = list[tuple[str, dict[str, bytes]]]


class Publisher:
    """``publish(batch)`` returns at once; the paths of every batch published, in order, are in
    ``written`` after the ``with`` block; ``progress(n)`` after each batch is on the disk."""

    def __init__(self, ledger: LedgerStore, progress: Callable[[int], None] | None):
        self.ledger, self.progress = ledger, progress
        self.written: list[Path] = []
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="record-publish")
        self._pending: tuple[Future[list[Path]], int] | None = None

    def __call__(self, batch: Batch) -> None:
        self._wait()
        self._pending = (self._pool.submit(self.ledger.write_records_batch, batch), len(batch))

    def _wait(self) -> None:
        if self._pending is not None:
            future, size = self._pending
            self._pending = None
            self.written += future.result()  # a failed publish raises here, in the caller
            if self.progress is not None:
                self.progress(size)

    def __enter__(self) -> "Publisher":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            if kind is None:
                self._wait()
            elif self._pending is not None:
                self._pending[0].exception()  # building failed: let the batch in flight finish, then raise
        finally:
            self._pool.shutdown(wait=True)
