"""The application's errors: what citeledger's commands, runs, ledgers and catalogs refuse or
cannot do, as branches of the one error tree whose root and core branches are the resolution
core's (``resolvers.errors``: ``CiteledgerError``, ``TransientError``, ``PermanentError``, the
remote services' errors, ``ConfigError``).

The CLI prints any ``CiteledgerError`` as one line on stderr, exit 2 (``NotFound``: exit 1),
never a traceback. ``tests/test_errors.py`` fails when an error is defined anywhere but here and in
``resolvers/errors.py``.
"""
from __future__ import annotations

from resolvers.errors import ConfigError, PermanentError


class CatalogSourceError(PermanentError):
    """A catalog source file (or one of its rows) that cannot be read."""


class RowTooLong(PermanentError):
    """A CSV record spanning more physical lines than a reference can (an unclosed quote): the
    reader rejects it and goes on from the line after its start."""


class GrobidNotConfigured(PermanentError):
    """A PDF met no GROBID service (none configured): the paper is a reject saying how to start
    one; no byte of the PDF left the machine."""


class QueryFailed(PermanentError):
    """A user query DuckDB could not answer, or stopped at its time or memory limit
    (``[query]``): exit 2."""


class QueryRefused(PermanentError):
    """User SQL that would change the ledger or reach outside it."""


class UsageError(ConfigError):
    """A command-line value or path the user gave that cannot work (exit 2, one line)."""


class InputError(UsageError):
    """An input path that cannot be read at all (missing, a directory, a silent pipe): refused
    before the run starts, so no run is marked finished without its input (exit 2)."""


class NotFound(PermanentError):
    """What was asked for is not there (an id the ledger does not know): one line, exit 1."""


class LockTimeout(ConfigError):
    """Another process holds the ledger or catalog lock for longer than we were willing to wait
    (``CITELEDGER_LOCK_TIMEOUT``): exit 2, nothing was started."""


class LedgerPathError(UsageError):
    """A ledger folder that is a file, or that this process may not write."""


class UnknownRun(UsageError):
    """A run id the ledger has never seen."""


class DiskFull(PermanentError):
    """No space left while writing a file; what was staged is removed, nothing is half-written."""

    def __init__(self, path: object):
        super().__init__(f"no space left on the device writing {path}; nothing partial was kept: "
                         "free some space and re-run")
        self.path = path


class RunIncomplete(PermanentError):
    """Some batches of a run failed; what was written stays, and the same run id finishes it."""


class RecordsIncomplete(PermanentError):
    """Some papers' records could not be built (a value their JSON cannot carry); the others were
    written, and the message names the papers left out and why."""


class RecordFileError(PermanentError, ValueError):
    """A file read as a record that cannot be one before its JSON is even looked at: not a regular
    file (a FIFO, a device), larger than a record can be, unreadable. The message names the file."""

