"""Reference input readers: JSON Lines (optionally gzipped), CSV, Parquet, and papers (arXiv e-prints,
``.tex``, ``.bbl``, ``.bib``, folders: read by ``papers/`` through ``inputs.papers``).

Every input row ends either as a ``Reference`` or as an ``InputReject`` naming the file, line and
field: nothing is dropped silently. Lines are read with a size bound, so one enormous line cannot
exhaust memory; lines end with ``\n``, ``\r\n`` or ``\r``. Pipes and stdin are made files first
(``inputs.files.prepare_inputs``).
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from citeledger.app_errors import RowTooLong
from citeledger.display import visible_line
from citeledger.inputs.files import CHUNK, open_binary
from citeledger.inputs.papers import note_title, paper_rows, read_paper_input
from papers.paper_model import PaperLimits, PaperReferences
from resolvers.model import Reference
from resolvers.parsing.text import unicode_problem
from resolvers.redaction import redact

DEFAULT_MAX_RAW_CHARS = 100_000
EXCERPT_CHARS = 200  # of a rejected line, kept in the rejects table (what the line was, not the line)
REASON_CHARS = 500
# the largest reference_index every stage carries exactly: the ledger stores int64, but a citation
# record is RFC 8785 JSON, whose numbers are IEEE doubles (``resolvers.jcs``: exact up to 2^53);
# a larger index is rejected when read, never later (where it failed every records build of its run)
MAX_REFERENCE_INDEX = 2**53
MAX_REFERENCE_INDEX_TEXT = "2^53"
# a CSV record spanning more physical lines than this is an unclosed quote, not a reference
MAX_CSV_ROW_LINES = 100


@dataclass(frozen=True, slots=True)
class InputReject:
    """An input row that could not be read, and why. Its reason and its excerpt of the line are
    kept as any ``query`` user reads them: cut (``REASON_CHARS``, ``EXCERPT_CHARS``), on one line,
    control characters visible (``\x1b``), a URL's credentials hidden (``resolvers.redaction``)."""

    file: str
    line: int | None
    field: str | None
    reason: str
    excerpt: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", stored_text(self.reason, REASON_CHARS))
        object.__setattr__(self, "excerpt", stored_text(self.excerpt, EXCERPT_CHARS))

    @property
    def message(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        what = f" field {self.field!r}:" if self.field else ""
        return f"{where}:{what} {self.reason}"


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_raw_chars: int = DEFAULT_MAX_RAW_CHARS
    max_file_bytes: int | None = None
    papers: PaperLimits | None = None  # [papers] of the configuration (a run fills it): archive bombs, \input depth

    @property
    def max_line_bytes(self) -> int:
        # a JSON line may escape every character (\u0000 is 6 bytes) and carry other fields; up
        # to 16 MiB a line is parsed, so an oversized ``raw`` is reported as such, field named
        return max(self.max_raw_chars * 6 + 64_000, 16 << 20)


def stored_text(text: str, limit: int) -> str:
    """``text`` as a rejects row keeps it: secrets hidden, controls and newlines visible, at most
    ``limit`` characters."""
    if len(text) > limit * 4:
        text = text[: limit * 4]  # (a visible control takes at most four characters)
    return visible_line(redact(text))[:limit]


def excerpt_of(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    # stored in the rejects table (Parquet, UTF-8): undecodable bytes and lone surrogates as escapes
    return text[:EXCERPT_CHARS].encode("utf-8", "backslashreplace").decode("utf-8")


def iter_bounded_lines(fh: io.BufferedIOBase, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Yield (line number, bytes) — or (line number, None) for a line longer than ``limit``.
    A line ends with ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files)."""
    lineno, pending, size = 0, [], 0  # the start of a line not ended yet
    skipping = after_cr = False  # inside an over-long line; the last chunk ended with \r
    while chunk := fh.read1(CHUNK):  # read1: the rows before a truncated gzip end are kept
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the \n of a \r\n split between chunks
        after_cr = chunk.endswith(b"\r")
        for part in chunk.splitlines(keepends=True):
            ended = part.endswith((b"\n", b"\r"))
            if skipping:
                skipping = not ended
                continue
            pending.append(part)
            size += len(part)
            if size - (len(part) - len(part.rstrip(b"\r\n"))) > limit:
                lineno += 1
                yield lineno, None
                pending, size, skipping = [], 0, not ended
            elif ended:
                lineno += 1
                yield lineno, b"".join(pending)
                pending, size = [], 0
    if pending:
        yield lineno + 1, b"".join(pending)


def validate_row(obj: Any, file: str, line: int | None, limits: InputLimits, lenient_types: bool = False,
                 defaults: dict[str, Any] | None = None) -> Reference | InputReject:
    """Check one row against the contract's input fields. ``lenient_types`` for CSV (all text)."""
    if not isinstance(obj, dict):
        return InputReject(file, line, None, "row is not an object", excerpt_of(json.dumps(obj)[:EXCERPT_CHARS]))
    row = {**(defaults or {}), **{k: v for k, v in obj.items() if v is not None and v != ""}} if lenient_types \
        else {**(defaults or {}), **obj}
    excerpt = excerpt_of(str(obj.get("raw", ""))) if isinstance(obj.get("raw"), str) else ""

    citing = row.get("citing_paper")
    if citing is None:
        return InputReject(file, line, "citing_paper", "missing required field", excerpt)
    if not isinstance(citing, str) or not citing.strip():
        return InputReject(file, line, "citing_paper", f"must be a non-empty string, got {type(citing).__name__}",
                           excerpt)

    index = row.get("reference_index")
    if index is None:
        return InputReject(file, line, "reference_index", "missing required field", excerpt)
    if lenient_types and isinstance(index, str) and re.fullmatch(r"\s*\d+\s*", index):
        index = int(index) if len(index.strip()) <= 30 else MAX_REFERENCE_INDEX + 1  # int() of 5,000 digits raises
    if isinstance(index, bool) or not isinstance(index, int):
        return InputReject(file, line, "reference_index", f"must be an integer >= 1, got {index!r:.40}", excerpt)
    if index < 1:
        return InputReject(file, line, "reference_index", f"must be an integer >= 1, got {index}", excerpt)
    if index > MAX_REFERENCE_INDEX:
        got = str(index) if index.bit_length() <= 128 else f"a {index.bit_length()}-bit number"
        return InputReject(file, line, "reference_index", f"must be at most {MAX_REFERENCE_INDEX_TEXT} = "
                           f"{MAX_REFERENCE_INDEX} (a record's JSON number is exact up to there), got {got:.45}",
                           excerpt)

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
                           f"{limits.max_raw_chars:,} (max_raw_chars)", excerpt_of(raw))

    source = row.get("source", "unknown")
    if source is None or source == "":
        source = "unknown"
    if not isinstance(source, str):
        return InputReject(file, line, "source", f"must be a string, got {type(source).__name__}", excerpt)
    for name, value in (("citing_paper", citing), ("raw", raw), ("source", source)):
        problem = unicode_problem(value)
        if problem:
            return InputReject(file, line, name, problem, excerpt_of(raw))
    return Reference(citing_paper=citing.strip(), reference_index=index, raw=raw, source=source,
                     file=file, line=line)


_ROW_FIELDS = frozenset({"citing_paper", "reference_index", "raw", "source"})


def plain_row(line: bytes, file: str, lineno: int, max_raw_chars: int) -> Reference | None:
    """The reference of a JSON line that is a row of the contract's fields alone, every one of
    them valid, or None (then the line takes ``read_jsonl``'s full path, which names what is
    wrong). Read by orjson: what it decodes, ``json.loads`` decodes to the same values for such a
    row (orjson refuses the rest: NaN, lone surrogates, invalid UTF-8; a number it would make a
    float is not a valid field), and its strings are valid Unicode (no ``unicode_problem``)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or not obj.keys() <= _ROW_FIELDS:
        return None
    citing, index, raw = obj.get("citing_paper"), obj.get("reference_index"), obj.get("raw")
    source = obj.get("source")
    if source is None or source == "":
        source = "unknown"
    if type(citing) is not str or type(index) is not int or type(raw) is not str or type(source) is not str:
        return None
    citing = citing.strip()
    if not citing or not 1 <= index <= MAX_REFERENCE_INDEX or len(raw) > max_raw_chars:
        return None
    return Reference(citing, index, raw, source, file, lineno)


def read_jsonl(path: Path, limits: InputLimits, name: str | None = None) -> Iterator[Reference | InputReject]:
    name = name or str(path)
    with open_binary(path, limits.max_file_bytes) as fh:
        for lineno, line in iter_bounded_lines(fh, limits.max_line_bytes):
            if line is None:
                yield InputReject(name, lineno, None, f"line longer than {limits.max_line_bytes:,} bytes")
                continue
            if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # a UTF-8 byte order mark, as CSV strips it
            if not line.strip():
                continue
            plain = plain_row(line, name, lineno, limits.max_raw_chars)
            if plain is not None:
                yield plain
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield InputReject(name, lineno, None, f"invalid UTF-8 at byte {exc.start}", excerpt_of(line))
                continue
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError) as exc:  # ValueError: an integer of over 4,300 digits
                msg = f"bad JSON: {exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) \
                    else "bad JSON: nested too deeply" if isinstance(exc, RecursionError) else f"bad JSON: {exc}"
                yield InputReject(name, lineno, None, msg, excerpt_of(text))
                continue
            yield validate_row(obj, name, lineno, limits)


class _PhysicalLines:
    """The numbered physical lines csv.reader consumes, with push-back: the lines a record with an
    unclosed quote swallowed are read again as rows of their own."""

    def __init__(self, lines: Iterable[str]):
        self._lines = iter(lines)
        self._back: deque[tuple[int, str]] = deque()
        self.lineno = 0
        self.taken: list[tuple[int, str]] = []

    def __iter__(self) -> "_PhysicalLines":
        return self

    def __next__(self) -> str:
        if self._back:
            item = self._back.popleft()
        else:
            item = (self.lineno + 1, next(self._lines))
            self.lineno += 1
        self.taken.append(item)
        if len(self.taken) > MAX_CSV_ROW_LINES:
            raise RowTooLong
        return item[1]

    def push_back(self, items: list[tuple[int, str]]) -> None:
        self._back.extendleft(reversed(items))


def _looks_like_row(text: str, width: int, index_column: int) -> bool:
    """A physical line that would be a whole row of this CSV on its own."""
    fields = next(csv.reader([text]), [])
    return len(fields) == width and fields[index_column].strip().isdigit()


def _swallowed(taken: list[tuple[int, str]], header: list[str]) -> str | None:
    """Why a record spanning several lines is an unclosed quote, or None for a genuine quoted
    line break: lines wholly inside its quoted field (not the first, not the one where the quote
    closes) read as whole rows of their own."""
    index_column = header.index("reference_index")
    # a line wholly inside a quoted field holds no lone quote (a quote there is doubled): one that
    # does closes the field and opens another (``0","0","``), so it is part of a genuine record
    rows = [n for n, text in taken[1:-1]
            if '"' not in text.replace('""', '') and _looks_like_row(text, len(header), index_column)]
    if not rows:
        return None
    return (f"unclosed quote: the quoted field runs on over lines {taken[1][0]}-{taken[-1][0]}, "
            f"{len(rows)} of which look like rows; those lines are read again as rows")


_TRAILING_BLANKS = re.compile(r"[ \t]+(\r?\n|\r)?$")


def _closed_badly(taken: list[tuple[int, str]]) -> str | None:
    """Why a record spanning several lines is an unclosed quote, or None: its quote closes with
    text after it (``p,2,"open`` then ``p,3,"quoted row"``: the second line's first quote closes
    the field), which a well-formed quoted field never has; the lines after the first would be
    swallowed into it. (Blanks ending a line are not such text: a genuine field may close before them.)"""
    text = "".join(_TRAILING_BLANKS.sub(r"\1", line) for _, line in taken)
    try:
        for _ in csv.reader(io.StringIO(text, newline=""), strict=True):
            pass
    except csv.Error:
        return (f"unclosed quote: the quoted field opened on line {taken[0][0]} closes on line {taken[-1][0]} "
                "with text after its closing quote; the lines after it are read again as rows")
    return None


def _quoted_field(text: str, header: list[str]) -> str | None:
    """The column whose quote opens on this line and never closes on it."""
    fields = next(csv.reader([text]), [])
    return header[len(fields) - 1] if 0 < len(fields) <= len(header) else None


def _csv_header(reader: Any, name: str) -> tuple[list[str] | None, InputReject | None]:
    try:
        header = next(reader)
    except StopIteration:
        return None, None
    except (UnicodeDecodeError, csv.Error, RowTooLong) as exc:
        return None, InputReject(name, 1, None, f"unreadable header: {exc or 'an unclosed quote'}")
    header = [h.strip().lstrip("\ufeff") for h in header]
    missing = [f for f in ("citing_paper", "reference_index", "raw") if f not in header]
    if missing:
        return None, InputReject(name, 1, missing[0], f"CSV header lacks required column(s) {missing}")
    return header, None


def read_csv(path: Path, limits: InputLimits, name: str | None = None) -> Iterator[Reference | InputReject]:
    name = name or str(path)
    csv.field_size_limit(limits.max_line_bytes)
    with open_binary(path, limits.max_file_bytes) as fb:
        # surrogateescape, not strict: undecodable bytes stay in their row (which validate_row
        # rejects, naming the field) instead of ending the file, so no later row is lost
        lines = _PhysicalLines(io.TextIOWrapper(fb, encoding="utf-8", errors="surrogateescape", newline=""))
        reader = csv.reader(lines)
        header, reject = _csv_header(reader, name)
        if reject:
            yield reject
        if header is None:
            return
        while True:
            lines.taken = []
            try:
                values, why = next(reader), None
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                yield InputReject(name, lines.lineno, None, f"invalid UTF-8: {exc.reason}")
                return  # the decoder cannot resynchronise safely
            except csv.Error as exc:
                values, why = None, f"bad CSV: {exc}"
            except RowTooLong:
                values, why = None, (f"unclosed quote: the quoted field runs on over more than {MAX_CSV_ROW_LINES} "
                                     "lines; those lines are read again as rows")
            taken = lines.taken
            start_line = taken[0][0] if taken else lines.lineno
            if values is not None and len(taken) > 1:
                why = _swallowed(taken, header) or _closed_badly(taken)
            if why or values is None:
                yield InputReject(name, start_line, _quoted_field(taken[0][1], header) if len(taken) > 1 else None,
                                  why or "unreadable row", excerpt_of(taken[0][1] if taken else ""))
                lines.push_back(taken[1:])
                continue
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                yield InputReject(name, start_line, None,
                                  f"ragged row: {len(values)} fields for {len(header)} columns",
                                  excerpt_of(",".join(values)))
                continue
            yield validate_row(dict(zip(header, values)), name, start_line, limits, lenient_types=True)


def read_parquet(path: Path, limits: InputLimits, name: str | None = None) -> Iterator[Reference | InputReject]:
    from citeledger.storage.parquet_batches import parquet_file

    name = name or str(path)
    try:
        pf = parquet_file(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a broken file
        yield InputReject(name, None, None, f"unreadable Parquet file: {exc}")
        return
    rowno = 0
    for batch in pf.iter_batches(batch_size=10_000):
        for obj in batch.to_pylist():
            rowno += 1
            yield validate_row(obj, name, rowno, limits)


def read_paper_rows(path: Path, limits: InputLimits, citing_paper: str | None, name: str,
                    kind: str) -> Iterator[Reference | InputReject]:
    """One paper (``papers/``) as rows: its references, checked like any row, and its rejects
    (``file`` is ``name!member`` for a member inside the paper)."""
    yield from paper_input_rows(read_paper_input(path, name, kind, limits.papers or PaperLimits(), citing_paper),
                                limits)


def paper_input_rows(paper: PaperReferences, limits: InputLimits) -> Iterator[Reference | InputReject]:
    """A paper already read (``papers.paper_model.PaperReferences``, from a file, a folder, GROBID or
    arXiv) as rows: every paper input names its rejects' file, line and field alike. Its title, when
    its source gives one, is kept for the run (``papers.collecting_titles``)."""
    note_title(paper)
    for where, row, line, reason in paper_rows(paper):
        if row is None:
            yield InputReject(where, line, "citing_paper" if reason.startswith("no_citing_paper") else None, reason)
        else:
            ref = validate_row(row, where, line, limits)
            # the source's fields (a .bib entry's, GROBID's) go with the reference to the parser
            yield dataclasses.replace(ref, fields=tuple(sorted(row["fields"].items()))) \
                if isinstance(ref, Reference) and row.get("fields") else ref


