"""Identifiers in reference strings: DOIs (``doi_forms``), arXiv ids (``arxiv_forms``), both found
in a string (``extract``) or a batch of strings (``batch``), and journal references (``journal_ref``).

May import: ``resolvers.parsing.text``, ``resolvers.parsing.text_arrow`` (its Arrow kernels, for a batch),
``resolvers.model`` and ``resolvers.errors``.
"""
