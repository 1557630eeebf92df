"""Pith's record formats, spoken by citeledger: Pith's ``pith.paper-citation-record.v1`` and
``pith_number_record`` (``../shared/seeds`` holds published examples).

What this package owns:

* ``digests``: Pith's digest rules (observation digest, context digest, a number record's
  ``canonical_sha256``, the pith number and the title hash), all sha256 over RFC 8785 bytes;
* ``schema``: the ``pith.paper-citation-record.v1`` JSON Schema (``citeledger/schemas/``), checking a
  record against it, and telling a Pith record from citeledger's own records (whose first version
  carried Pith's schema name);
* ``export`` and ``export_parts``: citeledger's v2 record (a plain dict) -> a Pith-shaped record;
* ``pith_receipts``: Pith receipts (ed25519 over the 32 raw bytes of a digest), made and verified, with
  typed reasons for every failure; ``ed25519_points``: the public keys refused before they are
  trusted (small order, outside the prime-order subgroup, non-canonical);
* ``consistency``: whether a record says the same thing everywhere (digests recomputed, the members
  outside a signed digest against the content they come from, counts that add up);
* ``pith_reader`` and ``states``: Pith records in -> rows shaped like the ledger's observation rows,
  Pith's state names -> citeledger's, and the two sides paired for a comparison.

May import: the standard library, ``resolvers.jcs`` (the RFC 8785 bytes), ``citeledger.app_errors``
(``InputError``), ``cryptography`` (ed25519) and ``jsonschema``. Nothing else of citeledger: a
citeledger record is read as a dict and ledger rows are plain dicts, so the package sits low in
the layers (below ``storage``): ``records`` checks Pith's records with its schema, ``ledger`` and
``records`` read and write them. Every function here is pure (no clock, no files except the
shipped schema, no network).
"""
