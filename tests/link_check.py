"""A link checker over a folder of HTML files: every ``href`` and ``src`` that is not an outside
address names a file of the folder, and its ``#anchor`` (when it has one) an ``id`` of that file."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append(value)
            elif name == "id" and value is not None:
                self.ids.add(value)


def parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def broken_links(folder: Path) -> tuple[list[str], int]:
    """(each broken link as "file: link (why)", the number of internal links checked)."""
    pages = {p.resolve(): parse(p) for p in folder.rglob("*.html")}
    broken, checked = [], 0
    for page, found in pages.items():
        for link in found.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https"):
                continue
            checked += 1
            if parts.scheme or parts.netloc or link.startswith("/"):
                broken.append(f"{page.name}: {link} (not relative)")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if folder.resolve() not in target.parents:
                broken.append(f"{page.name}: {link} (outside the folder)")
            elif target not in pages and not target.is_file():
                broken.append(f"{page.name}: {link} (no file {target})")
            elif parts.fragment and target in pages and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{page.name}: {link} (no id {parts.fragment!r})")
    return broken, checked
