"""The resolution core: a reference string in, a verdict out (a state and a reason, both enums, with
evidence), decided by an ordered chain of small rules (``resolution``). Plain Python: nothing of
``citeledger``, the flows or Prefect, and no file written.

Rooms, bottom first: ``redaction`` (secrets kept out of what is printed and stored), ``model``
and ``errors``; ``strict_json`` (JSON read as I-JSON), ``jcs`` and ``canonical`` (the canonical
bytes digests are taken over), ``work_fields`` (the field readers every source of works shares);
``notices`` (standing notices), ``parsing`` (a string read into fields), ``identifiers`` (DOIs,
arXiv ids, journal references), ``catalog`` (the one lookup interface), ``openalex`` (an OpenAlex
work as a catalog work), ``verification`` (does a work match), ``remote`` (the services, off by
default), ``candidates`` (which works could match), ``context``, ``search_step`` and
``resolution`` (the chain), ``observation`` (a verdict as a ledger row).
"""
