"""Reference input readers: JSON Lines (optionally gzipped), CSV, Parquet, LaTeX ``.bbl``, BibTeX ``.bib``.

Every input row ends either as a ``Reference`` or as an ``InputReject`` naming the file, line and
field: nothing is dropped silently. Lines are read with a size bound, so one enormous line cannot
exhaust memory.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from resolvers.model import Reference

from .sources import delatex

DEFAULT_MAX_RAW_CHARS = 100_000
EXCERPT_CHARS = 200


@dataclass(frozen=True, slots=True)
class InputReject:
    file: str
    line: int | None
    field: str | None
    reason: str
    excerpt: str = ""

    @property
    def message(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        what = f" field {self.field!r}:" if self.field else ""
        return f"{where}:{what} {self.reason}"


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_raw_chars: int = DEFAULT_MAX_RAW_CHARS
    max_file_bytes: int | None = None

    @property
    def max_line_bytes(self) -> int:
        # a JSON line may escape every character (\u0000 is 6 bytes) and carry other fields; up
        # to 16 MiB a line is parsed, so an oversized ``raw`` is reported as such, field named
        return max(self.max_raw_chars * 6 + 64_000, 16 << 20)


def _excerpt(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    # stored in the rejects table (Parquet, UTF-8): undecodable bytes and lone surrogates as escapes
    return text[:EXCERPT_CHARS].encode("utf-8", "backslashreplace").decode("utf-8")


def _open_binary(path: Path) -> io.BufferedIOBase:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def iter_bounded_lines(fh: io.BufferedIOBase, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Yield (line number, bytes) — or (line number, None) for a line longer than ``limit``."""
    lineno = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        lineno += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while True:  # skip the rest of the oversized line
                more = fh.readline(1 << 20)
                if not more or more.endswith(b"\n"):
                    break
            yield lineno, None
            continue
        yield lineno, line


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode_problem(value: str) -> str | None:
    """Why a string cannot be stored (Parquet needs valid UTF-8), or None. A lone surrogate comes
    from a JSON escape such as ``\\ud800`` or from undecodable CSV bytes (surrogateescape)."""
    m = _LONE_SURROGATE.search(value)
    if m is None:
        return None
    code = ord(m.group(0))
    what = f"invalid UTF-8 byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"lone surrogate U+{code:04X}"
    return f"not valid Unicode: {what} at character {m.start()}"


def validate_row(obj: Any, file: str, line: int, limits: InputLimits, lenient_types: bool = False,
                 defaults: dict[str, Any] | None = None) -> Reference | InputReject:
    """Check one row against the contract's input fields. ``lenient_types`` for CSV (all text)."""
    if not isinstance(obj, dict):
        return InputReject(file, line, None, "row is not an object", _excerpt(json.dumps(obj)[:EXCERPT_CHARS]))
    row = {**(defaults or {}), **{k: v for k, v in obj.items() if v is not None and v != ""}} if lenient_types \
        else {**(defaults or {}), **obj}
    excerpt = _excerpt(str(obj.get("raw", ""))) if isinstance(obj.get("raw"), str) else ""

    citing = row.get("citing_paper")
    if citing is None:
        return InputReject(file, line, "citing_paper", "missing required field", excerpt)
    if not isinstance(citing, str) or not citing.strip():
        return InputReject(file, line, "citing_paper", f"must be a non-empty string, got {type(citing).__name__}", excerpt)

    index = row.get("reference_index")
    if index is None:
        return InputReject(file, line, "reference_index", "missing required field", excerpt)
    if lenient_types and isinstance(index, str) and re.fullmatch(r"\s*\d+\s*", index):
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int):
        return InputReject(file, line, "reference_index", f"must be an integer >= 1, got {index!r:.40}", excerpt)
    if index < 1:
        return InputReject(file, line, "reference_index", f"must be an integer >= 1, got {index}", excerpt)

    raw = row.get("raw")
    if raw is None:
        if lenient_types and "raw" in obj:
            raw = ""
        else:
            return InputReject(file, line, "raw", "missing required field", excerpt)
    if not isinstance(raw, str):
        return InputReject(file, line, "raw", f"must be a string, got {type(raw).__name__}", excerpt)
    if len(raw) > limits.max_raw_chars:
        return InputReject(file, line, "raw", f"string of {len(raw):,} characters exceeds the limit of "
                           f"{limits.max_raw_chars:,} (max_raw_chars)", _excerpt(raw))

    source = row.get("source", "unknown")
    if source is None or source == "":
        source = "unknown"
    if not isinstance(source, str):
        return InputReject(file, line, "source", f"must be a string, got {type(source).__name__}", excerpt)
    for name, value in (("citing_paper", citing), ("raw", raw), ("source", source)):
        problem = _unicode_problem(value)
        if problem:
            return InputReject(file, line, name, problem, _excerpt(raw))
    return Reference(citing_paper=citing.strip(), reference_index=index, raw=raw, source=source,
                     file=file, line=line)


def read_jsonl(path: Path, limits: InputLimits) -> Iterator[Reference | InputReject]:
    name = str(path)
    with _open_binary(path) as fh:
        for lineno, line in iter_bounded_lines(fh, limits.max_line_bytes):
            if line is None:
                yield InputReject(name, lineno, None, f"line longer than {limits.max_line_bytes:,} bytes")
                continue
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield InputReject(name, lineno, None, f"invalid UTF-8 at byte {exc.start}", _excerpt(line))
                continue
            try:
                obj = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as exc:
                msg = f"bad JSON: {exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) \
                    else "bad JSON: nested too deeply"
                yield InputReject(name, lineno, None, msg, _excerpt(text))
                continue
            yield validate_row(obj, name, lineno, limits)


def read_csv(path: Path, limits: InputLimits) -> Iterator[Reference | InputReject]:
    name = str(path)
    csv.field_size_limit(limits.max_line_bytes)
    with _open_binary(path) as fb:
        # surrogateescape, not strict: undecodable bytes stay in their row (which validate_row
        # rejects, naming the field) instead of ending the file, so no later row is lost
        text = io.TextIOWrapper(fb, encoding="utf-8", errors="surrogateescape", newline="")
        reader = csv.reader(text)
        try:
            header = next(reader)
        except StopIteration:
            return
        except (UnicodeDecodeError, csv.Error) as exc:
            yield InputReject(name, 1, None, f"unreadable header: {exc}")
            return
        header = [h.strip().lstrip("\ufeff") for h in header]
        missing = [f for f in ("citing_paper", "reference_index", "raw") if f not in header]
        if missing:
            yield InputReject(name, 1, missing[0], f"CSV header lacks required column(s) {missing}")
            return
        while True:
            start_line = reader.line_num + 1
            try:
                values = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                yield InputReject(name, start_line, None, f"invalid UTF-8: {exc.reason}")
                return  # the decoder cannot resynchronise safely
            except csv.Error as exc:
                yield InputReject(name, start_line, None, f"bad CSV: {exc}")
                continue
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                yield InputReject(name, start_line, None,
                                  f"ragged row: {len(values)} fields for {len(header)} columns",
                                  _excerpt(",".join(values)))
                continue
            yield validate_row(dict(zip(header, values)), name, start_line, limits, lenient_types=True)


def read_parquet(path: Path, limits: InputLimits) -> Iterator[Reference | InputReject]:
    import pyarrow.parquet as pq

    name = str(path)
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a broken file
        yield InputReject(name, None, None, f"unreadable Parquet file: {exc}")
        return
    rowno = 0
    for batch in pf.iter_batches(batch_size=10_000):
        for obj in batch.to_pylist():
            rowno += 1
            yield validate_row(obj, name, rowno, limits)


# --- LaTeX .bbl and BibTeX .bib ------------------------------------------------------------

_BIBITEM = re.compile(r"\\bibitem\s*(?:\[[^\]]{0,500}\])?\s*\{[^}]{0,500}\}")
_LATEX_CMD_KEEP_ARG = re.compile(r"\\(?:emph|textit|textbf|textsc|textrm|texttt|em|it|bf|sc|url|path|href\{[^}]*\})\s*")


def bbl_to_text(item: str) -> str:
    """One ``\\bibitem`` body as plain text: ``\\newblock`` and font commands out, accents in."""
    text = item.replace("\\newblock", " ").replace("~", " ").replace("\\&", "&")
    # a comment runs to the end of its line (or of the text); "\%" is a percent sign. "\n|\Z", not
    # "\n": an unterminated comment would otherwise rescan the rest at every "%" (quadratic)
    text = re.sub(r"(?<!\\)%[^\n]*(?:\n|\Z)", " ", text)
    text = text.replace("\\%", "%")
    text = _LATEX_CMD_KEEP_ARG.sub("", text)
    text = delatex(text)
    text = re.sub(r"\\[a-zA-Z]+\*?", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def read_bbl(path: Path, limits: InputLimits, citing_paper: str) -> Iterator[Reference | InputReject]:
    name = str(path)
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    matches = list(_BIBITEM.finditer(text))
    if not matches:
        yield InputReject(name, 1, None, "no \\bibitem found in .bbl file")
        return
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[m.end():end]
        body = body.split("\\end{thebibliography}", 1)[0]
        line = text.count("\n", 0, m.start()) + 1
        yield validate_row({"citing_paper": citing_paper, "reference_index": i + 1, "raw": bbl_to_text(body),
                            "source": "bbl"}, name, line, limits)


def _bib_entries(text: str) -> Iterator[tuple[int, str | None, str]]:
    """Yield (offset, entry text or None if unbalanced, error) for each ``@type{...}`` entry."""
    pos = 0
    while True:
        at = text.find("@", pos)
        if at < 0:
            return
        m = re.match(r"@\s*([A-Za-z]+)\s*([{(])", text[at:at + 200])
        if not m:
            pos = at + 1
            continue
        kind = m.group(1).lower()
        open_ch = m.group(2)
        close_ch = "}" if open_ch == "{" else ")"
        i = at + m.end()
        depth = 1
        while i < len(text) and depth:
            c = text[i]
            if c == "{" or (c == open_ch):
                depth += 1
            elif c == "}" or (c == close_ch):
                depth -= 1
            i += 1
        if kind in ("comment", "preamble", "string"):
            pos = i
            continue
        if depth:
            # unbalanced: the entry runs into the next '@' at line start, or to the end
            nxt = re.search(r"\n\s*@", text[at + 1:])
            stop = at + 1 + nxt.start() if nxt else len(text)
            yield at, None, text[at:stop]
            pos = stop
            continue
        yield at, text[at:i], ""
        pos = i


def read_bib(path: Path, limits: InputLimits, citing_paper: str) -> Iterator[Reference | InputReject]:
    name = str(path)
    text = path.read_bytes().decode("utf-8", errors="replace")
    index = 0
    for offset, entry, bad in _bib_entries(text):
        line = text.count("\n", 0, offset) + 1
        index += 1
        if entry is None:
            yield InputReject(name, line, None, "unbalanced braces in BibTeX entry", _excerpt(bad))
            continue
        raw = re.sub(r"\s+", " ", entry).strip()
        yield validate_row({"citing_paper": citing_paper, "reference_index": index, "raw": raw,
                            "source": "bib"}, name, line, limits)
    if index == 0:
        yield InputReject(name, 1, None, "no BibTeX entry found")


def detect_kind(path: Path) -> str:
    """The reader for a file: by extension, then by a look at its first bytes."""
    name = path.name.lower()
    for ext, kind in ((".jsonl.gz", "jsonl"), (".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json.gz", "jsonl"),
                      (".csv.gz", "csv"), (".csv", "csv"), (".parquet", "parquet"), (".bbl", "bbl"),
                      (".bib", "bib")):
        if name.endswith(ext):
            return kind
    with _open_binary(path) as fh:
        head = fh.read(512).lstrip()
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"{"):
        return "jsonl"
    if b"\\bibitem" in head or b"thebibliography" in head:
        return "bbl"
    if head.startswith(b"@"):
        return "bib"
    return "csv"


def read_references(path: str | Path, limits: InputLimits | None = None,
                    citing_paper: str | None = None) -> Iterator[Reference | InputReject]:
    """Every row of one input file, as a reference or a reject."""
    path = Path(path)
    limits = limits or InputLimits()
    name = str(path)
    if not path.exists():
        yield InputReject(name, None, None, "no such file")
        return
    size = path.stat().st_size
    if limits.max_file_bytes is not None and size > limits.max_file_bytes:
        yield InputReject(name, None, None, f"file of {size:,} bytes exceeds the limit of {limits.max_file_bytes:,} (max_file_bytes)")
        return
    kind = detect_kind(path)
    if kind in ("bbl", "bib"):
        if not citing_paper:
            yield InputReject(name, None, "citing_paper", f".{kind} input needs --citing-paper ID")
            return
        reader = read_bbl if kind == "bbl" else read_bib
        yield from reader(path, limits, citing_paper)
        return
    try:
        if kind == "jsonl":
            yield from read_jsonl(path, limits)
        elif kind == "csv":
            yield from read_csv(path, limits)
        else:
            yield from read_parquet(path, limits)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield InputReject(name, None, None, f"file could not be read to the end: {exc}")
