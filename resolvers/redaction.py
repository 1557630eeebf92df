"""Secrets kept out of what citeledger prints and stores.

An endpoint may carry credentials: user info (``http://user:password@grobid:8070``) or a secret
query parameter (``?api_key=...``, ``token``, ``key``, ``password``...), and a request's URL carries
the contact address (``mailto=``), which an operator may configure private. A failed request's
message names its URL, and messages travel far: into a reference's evidence (the ledger, the
records), the rejects table, logs, the flows' artifacts, one-line errors. So every citeledger error
message passes through ``redact`` (``resolvers.errors``), and so do the settings ``config show``
prints: user info becomes ``***@``, a secret parameter's value ``***``, and a string kept private
(``keep_private``) ``***`` wherever it appears, percent-encoded or not. Pure functions and one
process-wide list of private strings; no I/O. ``RedactedRecords`` is the same for a logger's
records (httpx logs every request's URL at INFO, credentials and all).
"""
from __future__ import annotations

import logging
import re
import threading
from urllib.parse import quote, quote_plus

HIDDEN = "***"
# query parameters whose values are credentials (compared in lower case, ``-`` read as ``_``)
SECRET_PARAMETERS = frozenset({"api_key", "apikey", "key", "token", "access_token", "auth", "auth_token",
                               "password", "passwd", "pwd", "secret", "client_secret", "signature", "sig"})
# a URL: a scheme, ``://``, then anything up to white space or a quote or bracket, less the
# punctuation that ends a sentence or a clause after it
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s'\"<>`]*[^\s'\"<>`.,:;)\]]")
_PARAMETER = re.compile(r"(?<=[?&;])([^=&;#\s]+)=([^&;#\s]*)")

_PRIVATE: set[str] = set()  # strings never shown (a contact address configured private), and their encodings
_PRIVATE_PARAMETERS: set[str] = set()
_LOCK = threading.Lock()


def keep_private(value: str | None, parameter: str | None = None) -> None:
    """Never show ``value`` (nor its percent-encoded forms) again in this process; ``parameter``:
    a query parameter whose value is hidden too (``mailto``)."""
    if not value or not value.strip():
        return
    with _LOCK:
        _PRIVATE.update({value, quote(value, safe=""), quote_plus(value)})
        if parameter:
            _PRIVATE_PARAMETERS.add(parameter.lower())


def _secret(name: str) -> bool:
    key = name.lower().replace("-", "_")
    return key in SECRET_PARAMETERS or key in _PRIVATE_PARAMETERS


def redact_url(url: str) -> str:
    """``url`` with its user info and its secret parameters' values hidden; the rest as given."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = len(rest)
    for stop in "/?#":  # the authority ends at the first of these
        at = rest.find(stop)
        if at != -1:
            end = min(end, at)
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = f"{HIDDEN}@{authority.rsplit('@', 1)[1]}"
    tail = _PARAMETER.sub(_hide_parameter, tail)
    return f"{scheme}://{authority}{tail}"


def _hide_parameter(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    return f"{name}={HIDDEN}" if value and _secret(name) else match.group(0)


def redact(text: str) -> str:
    """``text`` with every URL in it redacted (``redact_url``) and every private string hidden."""
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    with _LOCK:
        private = sorted(_PRIVATE, key=len, reverse=True)
    for value in private:
        if value in text:
            text = text.replace(value, HIDDEN)
    return text


class RedactedRecords(logging.Filter):
    """A logger's records redacted (``redact``) before any handler sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        shown = redact(message)
        if shown != message:
            record.msg, record.args = shown, None
        return True


def redact_logger(name: str) -> None:
    """Redact every record of the logger ``name`` from now on (once, however often it is asked)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, RedactedRecords) for f in logger.filters):
        logger.addFilter(RedactedRecords())
