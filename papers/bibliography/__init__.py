"""The bibliography forms of a paper's LaTeX source turned into entries: BibTeX ``.bbl`` items
(``bibitems``), biblatex ``.bbl`` entries (``biblatex``), ``.bib`` files (``bibtex``) with the entries
the paper cites (``cites``) and REVTeX's footnotes as entries (``notes``), their rendering as
strings (``render``), author repeats filled (``repeats``) and the identifiers an entry keeps
outside its text (``idents``).

May import: the modules at the top of ``papers`` (``model``, ``text``, ``braces``, ``macros``,
``tree``), and of the resolvers only ``resolvers.identifiers``.
"""
