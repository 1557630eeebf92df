"""Reference inputs as the user gives them: files, pipes and stdin (``files``), JSON Lines, CSV and
Parquet rows (``rows``), papers (``papers``, ``pdf_papers``), arXiv ids fetched (``arxiv_ids``,
``arxiv_fetch``), any input by its kind (``read_input``), and every row of a run once (``dedupe``).

May import: ``engine`` and the packages below it, ``papers`` and ``resolvers``.
"""
