"""The resolution core: a reference string in, a verdict out (a state and a reason, both enums, with
evidence), decided by an ordered chain of small rules (``resolution``). Plain Python: nothing of
``citeledger``, the flows or Prefect, and no file written.

Rooms, bottom first: ``model`` and ``errors``; ``parsing`` (a string read into fields),
``identifiers`` (DOIs, arXiv ids, journal references), ``verification`` (does a work match),
``remote`` (the services, off by default), ``candidates`` (which works could match), ``context``,
``search_step`` and ``resolution`` (the chain), ``observation`` (a verdict as a ledger row);
``notices``, ``jcs`` and ``canonical`` stand apart.
"""
