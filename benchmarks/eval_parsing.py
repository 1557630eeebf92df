"""Title and first-author extraction accuracy of ``resolvers.parsing.fields`` on AnyStyle's tagged gold.

Exact = equal after normalisation (case, accents, punctuation); fuzzy = rapidfuzz ratio >= 90 on
the normalised strings. First author = the predicted first surname is a word of the gold first
name (the gold author field split at its first name separator).
Usage: python benchmarks/eval_parsing.py [anystyle_tagged.jsonl] [--show N]
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from resolvers.parsing.fields import norm_text, parse_reference  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared/data/refs/anystyle_tagged.jsonl"


def main(argv: list[str] | None = None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    show = 0
    if "--show" in argv:
        i = argv.index("--show"); show = int(argv[i + 1]); del argv[i:i + 2]
    path = Path(argv[0]) if argv else DEFAULT
    rows = [json.loads(line) for line in path.open()]
    n_title = exact = fuzzy = 0
    n_auth = auth_ok = 0
    bad = []
    for row in rows:
        p = parse_reference(row["raw"])
        gold_titles = row["fields"].get("title")
        if gold_titles:
            n_title += 1
            g = norm_text(gold_titles[0]); t = norm_text(p.title or "")
            exact += g == t
            ok = fuzz.ratio(g, t) >= 90
            fuzzy += ok
            if not ok:
                bad.append((row["raw"], gold_titles[0], p.title))
        gold_auth = row["fields"].get("author")
        if gold_auth:
            n_auth += 1
            first = re.split(r",|;|\band\b|&", gold_auth[0])
            words = set(norm_text(first[0]).split()) | (set(norm_text(first[1]).split()) if len(first) > 1 else set())
            if p.authors and set(norm_text(p.authors[0]).split()) <= words and norm_text(p.authors[0]):
                auth_ok += 1
    res = {"rows": len(rows), "title_rows": n_title, "title_exact": exact / n_title,
           "title_fuzzy90": fuzzy / n_title, "author_rows": n_auth, "first_author": auth_ok / n_auth}
    print(json.dumps(res, indent=1))
    for raw, g, t in bad[:show]:
        print(repr(raw), "\n   gold:", g, "\n   got: ", t)
    return res


if __name__ == "__main__":
    main()
