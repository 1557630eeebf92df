"""Standing notices of works (retracted, corrected, withdrawn...): their kinds and precedence
(``standing``) and the events each notice source gives (``notice_sources``).

May import: ``resolvers.model`` and ``resolvers.errors``.
"""
