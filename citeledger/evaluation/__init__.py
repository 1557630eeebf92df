"""Measures of the resolver: link precision and recall against gold ids (``links``) and the
style-robustness run over real citation styles (``styles``).

May import: ``run`` and the packages below it, and ``resolvers``.
"""
