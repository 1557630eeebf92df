"""What a process loads once to resolve references and shares between its tasks: the catalog
generation, the fuzzy matcher over its index, the remote clients, the notice index
(``process_cache``), and the fuzzy outcomes shared by the worker processes of one pool
(``fuzzy_outcomes``).

May import: ``catalog`` and the packages below it, and ``resolvers``.
"""
