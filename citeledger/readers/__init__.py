"""Catalog readers of the big public snapshots (OpenAlex, DBLP, arXiv OAI-PMH) and the details
the arXiv formats carry; ``citeledger.sources`` recognises each format and dispatches here."""
