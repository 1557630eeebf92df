"""What a run does with the remote services beside its lookups: the batch's search step, the
reports of the run's searches, circuits and remote time (for its summary and its row in ``runs``),
and the stop of every remote request of the process on an interrupt.

The remote resolvers are the process's (``process_cache.get_remote``): a run with remote services
on keeps its batches in this process's threads, so these reports see all of them.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from citeledger.engine.process_cache import get_remote
from resolvers.remote.guard.session import stop_all as stop_all_sessions
from resolvers.search_step import SearchStep


def search_step(remote: Any, run_id: str, budget: int | None = None,
                skip_files: Sequence[str] = ()) -> SearchStep | None:
    """The batch's search step when a search service is on: the run's request budget
    (``budget`` None: the configured ``search.max_requests_per_run``), and no search for the
    references read from ``skip_files`` (a nightly run's local re-runs)."""
    search = getattr(remote, "search", None) if remote is not None else None
    if search is None:
        return None
    skip = frozenset(skip_files)
    return SearchStep(search, search.budget(run_id, budget), lambda r: r.file not in skip)


def remote_report(run_id: str, remote: bool) -> dict[str, Any]:
    """What the run's circuits and remote time did in this process (``RemoteResolver.run_report``:
    each service whose circuit opened or refused requests, the run's remote time and what its bound
    refused); empty when the run asked no remote service here."""
    resolver = get_remote(True) if remote else None
    report = resolver.run_report() if resolver is not None else {}
    if report.pop("run_id", None) != run_id:
        return {}
    return report


def stop_remote_requests() -> None:
    """An interrupt (Ctrl-C, SIGTERM) while batches wait on remote services: every request of this
    process ends at once (``RemoteStopped``: its batch is not written), so the threads resolving
    batches end within a second. The stopped clients stay this process's: a batch that starts
    meanwhile fails at once too, rather than making new clients that would wait again."""
    stop_all_sessions()


@contextmanager
def remote_stopped_on_interrupt() -> Iterator[None]:
    """Batches submitted and waited for inside this block: an interrupt (or any failure that gives
    the run up) stops every remote request of the process before the workers are waited for."""
    try:
        yield
    except BaseException:
        stop_remote_requests()
        raise


def search_report(run_id: str, remote: bool) -> dict[str, Any]:
    """What the run's search step spent in this process (requests per service, cache hits)."""
    search = getattr(get_remote(True), "search", None) if remote else None
    return search.budget(run_id).report() if search is not None else {}
