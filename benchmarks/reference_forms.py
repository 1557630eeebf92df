"""How reference strings cite a work by its arXiv id or DOI (the first three by arXiv id, the last two
by DOI): the identifier path benchmark writes its strings in these spellings, and
tests/test_identifier_fastpath.py checks the batch extraction on strings of the same spellings."""

FORMS = [
    "{author}. {title}. arXiv preprint arXiv:{arxiv}, {year}.",
    "{author}, \u201c{title},\u201d CoRR, abs/{arxiv}, {year}.",
    "{author}. {title}. {year}. URL https://arxiv.org/abs/{arxiv}v2.",
    "{author} ({year}) {title}. doi:{doi}",
    "{author}. {title}. {venue} {year}. https://doi.org/{doi}",
]
