"""Write small real PDFs for tests: pages of text lines placed at given points, in the base-14
Helvetica font (no font file needed; every PDF reader knows its metrics). Enough to lay out a
two-column reference list, labels, hanging indents, running headers and page numbers, with known
content."""
from __future__ import annotations

PAGE_W, PAGE_H = 612, 792  # US Letter, points


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[tuple]], size: float = 9.0) -> bytes:
    """A PDF whose page ``i`` prints each ``(x, y, text)`` of ``pages[i]`` with ``y`` from the
    top of the page (as read), ASCII text only; ``(x, y, text, size)`` sets that text's size."""
    objects: list[bytes] = []
    page_ids = []
    font_id = 3 + 2 * len(pages)
    for i, lines in enumerate(pages):
        content_id = 4 + 2 * i
        page_ids.append(3 + 2 * i)
        ops = "".join(f"BT /F1 {(rest[0] if rest else size):g} Tf {x:g} {PAGE_H - y:g} Td ({_escape(t)}) Tj ET\n"
                      for x, y, t, *rest in lines)
        stream = ops.encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] "
                       f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    head = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode()]
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    return pdf_file(head + objects + [font])


def pdf_file(body: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog) with its cross-reference
    table and trailer."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(body, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(body) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(body) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def column_lines(entries: list[list[str]], x: float, y: float, step: float = 11.0,
                 hang: float = 0.0, label_width: float = 0.0) -> tuple[list[tuple[float, float, str]], float]:
    """Lines of a reference list in one column from ``(x, y)`` down: each entry's first line at
    ``x``, its other lines at ``x + hang`` (a hanging indent) or ``x + label_width``; returns the
    lines and the next free ``y``."""
    out = []
    for entry in entries:
        for i, text in enumerate(entry):
            out.append((x + (0 if i == 0 else hang or label_width), y, text))
            y += step
    return out, y


def nested_forms_pdf(depth: int = 26, words: int = 45) -> bytes:
    """A one-page PDF of about 6 KB whose page draws a form object that draws the next one twice,
    ``depth`` levels deep, the last printing ``words`` words: 2**depth copies of the words on one
    page, which poppler's text output gathers in memory without end (a hostile PDF's shape). With
    no words the last level strokes a line: the work never ends, but takes no memory."""
    leaf = b"BT /F1 9 Tf 72 700 Td " + b" ".join(b"(w%d x y z) Tj 0 -10 Td" % k for k in range(words)) + b" ET"
    leaf = leaf if words else b"72 700 m 300 700 l S"
    forms = []
    for level in range(depth):
        stream = leaf if level == depth - 1 else b"/Y Do /Y Do"
        inner = f"/XObject << /Y {7 + level} 0 R >> " if level < depth - 1 else ""
        forms.append(f"<< /Type /XObject /Subtype /Form /BBox [0 0 {PAGE_W} {PAGE_H}] /Resources << {inner}"
                     f"/Font << /F1 5 0 R >> >> /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    content = b"/X Do"
    body = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] /Resources << /Font << /F1 5 0 R >> "
            f"/XObject << /X 6 0 R >> >> /Contents 4 0 R >>".encode(),
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", *forms]
    return pdf_file(body)
