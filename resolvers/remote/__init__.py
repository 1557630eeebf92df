"""Remote resolvers, off unless configured: the facade the resolution chain talks to.

``build_remote(settings)`` (a plain ``RemoteSettings``, which ``citeledger.config`` builds) is
None when no remote resolver is on, so the default configuration
never creates a client, let alone opens a connection. Results:

* ``id -> Work``: the service knows the work;
* ``id -> None``: the service answered that it does not exist (a real "not found");
* id absent: no enabled service can check it (e.g. a DataCite DOI that is not arXiv's);
* ``RemoteBatchUnavailable`` (a ``RemoteUnavailable``): a needed service could not answer; it
  carries the answers obtained before the failure so nothing already fetched is lost.

``facade`` holds ``build_remote`` and the ``RemoteResolver``; the package itself imports nothing, so
reading ``settings`` (as ``citeledger.config`` does for every command) loads no HTTP client.
Every request goes through ``http`` (one client per service: contact address, rate limit,
retries, ``bounds``, the circuit breaker and the rest of ``guard``); the clients share one
``RemoteSession`` (the run's remote time, bounded by ``max_run_seconds``, and the stop of an
interrupt). ``begin_run`` starts a run (each circuit closed, the run's remote time from zero);
``run_report`` says what the run's circuits and remote time did, for its summary and its row in
``runs``.

The services: ``arxiv`` (the API by id, the OAI-PMH harvest), ``eprint`` (a paper's own files from
arXiv), ``crossref``, ``grobid`` (a PDF's references), ``retraction_watch`` (its CSV downloaded),
and the search step's ``search`` with its three services' requests (``search_clients``); a
harvest's place is a ``checkpoint`` the caller keeps.

May import: ``resolvers.identifiers``, ``resolvers.parsing``, ``resolvers.openalex``,
``resolvers.redaction``, ``resolvers.model`` and ``resolvers.errors``; nothing that writes a file.
"""
