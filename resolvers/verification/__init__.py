"""Does a work match a reference: the comparison forms of both made once (``forms``), the field
checks and scores (``verify``, ``verify_bound``, ``title_score``), field agreement (``agreement``)
and contradictions (``contradiction``).

May import: ``resolvers.parsing``, ``resolvers.identifiers`` and the top-level modules below them.
"""
