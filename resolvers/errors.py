"""One error tree for citeledger (in the spirit of httpx's): its root and the resolution core's
errors are here; the application's own (a usage error, a missing run, a full disk, a refused
query...) branch from them in ``citeledger/app_errors.py``.

``CiteledgerError`` is the base: the CLI prints any of them as one line on stderr, exit 2
(``NotFound``: exit 1), never a traceback. Two branches:

- ``TransientError`` is retried (and, when retries run out, a reference becomes ``unavailable``
  and is tried again on the next run);
- ``PermanentError`` will fail the same way again: an input row or source row becomes a reject
  with its reason, a command-line value or path an exit code.

"No match" is never an exception: it is a ``Verdict`` with state ``unresolved``.
``tests/test_errors.py`` fails when a ``CiteledgerError`` is defined anywhere but in these two modules.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolvers.redaction import redact

if TYPE_CHECKING:  # only for the annotation: model imports nothing from here, but keep it light
    from resolvers.model import Work


class CiteledgerError(Exception):
    """Base of every error citeledger raises on purpose. Its message never carries a secret: a
    URL's user info and secret parameters, a private contact (``resolvers.redaction``), since
    messages reach the ledger (evidence, rejects), logs and the terminal."""

    def __init__(self, *args: object):
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class TransientError(CiteledgerError):
    """Might succeed later: retry, then report ``unavailable``."""


class RemoteUnavailable(TransientError):
    """A remote service did not answer usefully (timeout, 5xx, reset, open circuit)."""

    def __init__(self, service: str, why: str):
        self.why = redact(why)
        super().__init__(f"{service}: {self.why}")
        self.service = service


class RateLimited(RemoteUnavailable):
    """A remote service said 429; ``retry_after`` is in seconds when it said so."""

    def __init__(self, service: str, why: str, retry_after: float | None = None):
        super().__init__(service, why)
        self.retry_after = retry_after


class RemoteBatchUnavailable(RemoteUnavailable):
    """A service failed part-way through a batch: ``answered`` holds what was already settled
    (a work, or None for "no such identifier"), ``unanswered`` the ids that must be reported
    ``unavailable`` and retried next run, so nothing already fetched is lost."""

    def __init__(self, cause: RemoteUnavailable, answered: dict[str, Work | None], unanswered: list[str]):
        super().__init__(cause.service, cause.why)
        self.cause = cause
        self.answered: dict[str, Work | None] = answered
        self.unanswered: list[str] = unanswered
        self.retry_after: float | None = getattr(cause, "retry_after", None)


class PermanentError(CiteledgerError):
    """Will fail the same way again: report it, keep it, go on."""


class RemoteStopped(PermanentError):
    """The run was stopped (SIGTERM, Ctrl-C) while a remote request was waiting or in flight: the
    request is abandoned at once and its batch is not written: the run is left unfinished (nothing
    is marked ``unavailable``, nothing retried), and a re-run with its id does the batch again."""

    def __init__(self, service: str):
        super().__init__(f"{service}: the run was stopped while a request was waiting or in flight")
        self.service = service


class InputTooLarge(PermanentError):
    """Decompressed data ran past ``max_file_bytes``: a gzip bomb is stopped, not read; the file
    becomes a reject."""


class PdfUnreadable(PermanentError):
    """GROBID said it cannot read this PDF (damaged, image only, too large): the paper becomes a
    reject with GROBID's reason; asking again would give the same answer, so nothing is retried."""


class ArxivQueryError(PermanentError):
    """The arXiv API rejected the query itself (not one id): a bug on our side, not a missing
    paper; the batch gets no answer from arXiv, nothing is retried."""


class ConfigError(PermanentError):
    """A configuration value that is missing or wrong."""


class StrictJSONError(PermanentError, ValueError):
    """JSON read as a record that is not I-JSON (RFC 7493): not UTF-8, a member name twice in one
    object, NaN or Infinity, a number beyond a double, a lone surrogate, nesting too deep
    (``resolvers/strict_json.py``); a ValueError too, as json's own refusals are."""


class JCSError(PermanentError, ValueError):
    """A value RFC 8785 (JCS) has no form for: NaN, an integer beyond 2**53, a lone surrogate, a
    non-JSON type (``resolvers/jcs.py``); a ValueError too, as json's own refusals are."""
