"""The columnar reader of plain works JSONL: a block of whole lines parsed by Arrow's JSON reader
and normalised column by column, giving the same rows as ``sources.work_from_works_jsonl`` one
row at a time (tests/test_works_columnar.py compares them on the shared samples and odd rows).

Why: per-row Python (``json.loads``, a dataclass, the normalisers) was 63 us a work, most of a
10M-work build. Here Arrow parses, and the normalisers run only on the values that are not
already in their canonical form (a mask per column says which; almost none in a clean file).
Why a fallback: a block the columnar path cannot vouch for (bad JSON, a line that is not one
object, a value of another type, another format's keys, a repeated key, a lone carriage return) is read by
the per-row reader, so its rows and rejects (file, line, reason) are exactly the per-row ones.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from citeledger.sources import source_files
from citeledger.works.row_schema import SOURCE_FIELDS, WORKS_SCHEMA
from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi
from resolvers.parsing.text_arrow import python_class
from resolvers.work_fields import arxiv_doi, clean_text, content_work_id
from resolvers.work_fields import first_page as _first_page
from resolvers.work_fields import int_year as _int_year

BLOCK_BYTES = 8 << 20  # a block parsed at once (and read per row when it cannot be vouched for)
_TEXT = ("title", "venue", "volume", "pmid", "type")
_READ_SCHEMA = pa.schema([("doi", pa.string()), ("arxiv_id", pa.string()), ("title", pa.string()),
                          ("authors", pa.list_(pa.string())), ("year", pa.int64()), ("venue", pa.string()),
                          ("volume", pa.string()), ("first_page", pa.string()), ("pmid", pa.string()),
                          ("type", pa.string()), ("withdrawn", pa.bool_())])
# Keys that make ``sources.json_shape`` call a row another format's (a reject in works JSONL): a
# block where Arrow meets one (unknown keys are inferred, so a key is seen even with a null value
# or written with escapes) is read per row.
_OTHER_SHAPE_KEYS = frozenset({"items", "message", "DOI", "id", "authorships", "primary_location"})


def _not_clean() -> str:
    """What ``clean_text`` changes: a character reference, a tag, white space other than single
    spaces between words (the characters ``str.split`` splits on, all of them)."""
    return "&|<|^ | $|  |" + python_class("space", leave_out=" ")


# A DOI ``normalize_doi`` returns unchanged: lower-case, no prefix, escape, markup or trailing
# punctuation, a well-formed registrant.
_CANONICAL_DOI = r"^10\.[0-9]{1,9}(\.[0-9]{1,9})*/[a-z0-9._/()\-]{0,900}[a-z0-9]$"
_PAGE_DIGITS = r"^[0-9]{1,12}$"


def blocks(data: bytes, block_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of consecutive pieces of ``data`` of about ``block_bytes`` (default
    ``BLOCK_BYTES``), cut after a line end (a line, and a \\r\\n, is never cut)."""
    block_bytes = block_bytes or BLOCK_BYTES
    at = 0
    while at < len(data):
        end = data.find(b"\n", min(at + block_bytes, len(data)) - 1)
        end = len(data) if end < 0 else end + 1
        yield at, data[at:end]
        at = end


def line_count(block: bytes) -> int:
    """Lines as ``open_text`` splits them (\\n, \\r\\n, \\r) when the block has no lone \\r."""
    return block.count(b"\n") + (0 if block.endswith(b"\n") or not block else 1)


# Two objects on one line: "}" then the next object's "{" and its first key's quote (or "}" of an
# empty one). Inside a JSON string a quote is escaped, so LaTeX's "}{" in titles does not match;
# a string ending in "}{" does, and its block is read row by row (the same works, slower).
_GLUED = re.compile(rb'\}[ \t]*\{[ \t]*["}]')


def vouched(block: bytes) -> bool:
    """Can the columnar path read this block as the per-row reader would (checks on its bytes)?
    Arrow's JSON reader does not check UTF-8 and reads an object across lines or two glued on one
    line as rows of their own; the per-row reader rejects each such line, so these blocks go to it:
    every line must start with "{" and end with "}", no "}{" on a line, valid UTF-8."""
    if not block or (b"\r" in block and block.count(b"\r") != block.count(b"\r\n")):
        return False
    if not block.isascii():
        try:
            block.decode("utf-8")
        except UnicodeDecodeError:
            return False
    data = np.frombuffer(block, np.uint8)
    ends = np.flatnonzero(data == 0x0A)
    lines = np.concatenate(([0], ends + 1))
    lines = lines[lines < len(block)]
    last = np.append(ends, len(block)) if block[-1:] != b"\n" else ends
    last = np.maximum(last - 1, 0)
    last = np.maximum(last - (data[last] == 0x0D), 0)  # (a \r\n line: the byte before the \r)
    return (bool(np.all(data[lines] == ord("{"))) and bool(np.all(data[last] == ord("}")))
            and _GLUED.search(block) is None)  # every line one object, no blank lines, no BOM


def read_block(block: bytes) -> pa.Table | None:
    """The block parsed against the works JSONL columns, or None when Arrow refuses it (a value
    of another type, bad JSON, bad UTF-8, a lone surrogate escape, a repeated key), it is not one
    row per line, or a row has a key of another format."""
    try:
        table = pa_json.read_json(pa.py_buffer(block), read_options=pa_json.ReadOptions(use_threads=False),
                                  parse_options=pa_json.ParseOptions(explicit_schema=_READ_SCHEMA,
                                                                     unexpected_field_behavior="infer"))
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if table.num_rows != line_count(block) or _OTHER_SHAPE_KEYS.intersection(table.column_names):
        return None
    return table.select(_READ_SCHEMA.names)


def _fix(values: pa.Array, needs: pa.Array, fix: Callable[[Any], Any], out_type: pa.DataType) -> pa.Array:
    """``values`` with those where ``needs`` is true replaced by ``fix(value)`` (Python, few)."""
    needs = pc.fill_null(needs, False)
    if pc.any(needs).as_py():
        fixed = pa.array([fix(v) for v in pc.filter(values, needs).to_pylist()], values.type)
        values = pc.replace_with_mask(values, needs, fixed)
    return values.cast(out_type)


def _empty_to_null(values: pa.Array) -> pa.Array:
    return pc.if_else(pc.equal(values, ""), pa.scalar(None, values.type), values)


def clean_texts(values: pa.Array) -> pa.Array:
    """``clean_text`` of every value (null and "" -> null)."""
    values = _empty_to_null(values)
    return _fix(values, pc.match_substring_regex(values, _not_clean()), clean_text, pa.string())


def _authors(column: pa.Array) -> pa.Array:
    """Each row's authors cleaned, the empty ones dropped (a null list -> [])."""
    lists = pc.fill_null(column, pa.scalar([], column.type))
    flat = clean_texts(pc.list_flatten(lists))
    parent = pc.list_parent_indices(lists).to_numpy()
    keep = pc.is_valid(flat).to_numpy(zero_copy_only=False)
    counts = np.bincount(parent[keep], minlength=len(lists))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.filter(flat, pa.array(keep)))


def _ids(table: pa.Table) -> tuple[pa.Array, pa.Array]:
    """The normalised DOI and arXiv id columns (a falsy value -> null)."""
    doi = _empty_to_null(table.column("doi").combine_chunks())
    canonical = pc.and_(pc.match_substring_regex(doi, _CANONICAL_DOI), pc.less_equal(pc.utf8_length(doi), 1000))
    doi = _fix(doi, pc.invert(canonical), normalize_doi, pa.string())  # (over 1,000 chars: normalize_doi's "too long")
    arxiv = _empty_to_null(table.column("arxiv_id").combine_chunks())
    arxiv = _fix(arxiv, pc.is_valid(arxiv), canonical_arxiv_id, pa.string())
    return doi, arxiv


def _year(column: pa.Array) -> pa.Array:
    in_range = pc.and_(pc.greater_equal(column, 1000), pc.less_equal(column, 2999))
    return _fix(column, pc.and_(pc.is_valid(column), pc.invert(in_range)), _int_year, pa.int32())


def _page(column: pa.Array) -> pa.Array:
    column = _empty_to_null(column)
    return _fix(column, pc.invert(pc.match_substring_regex(column, _PAGE_DIGITS)), _first_page, pa.string())


def _work_ids(doi: pa.Array, arxiv: pa.Array, title: pa.Array, authors: pa.Array, year: pa.Array) -> pa.Array:
    """``arxiv:ID``, else ``doi:DOI``, else the content id of title, first author and year."""
    by_id = pc.coalesce(pc.binary_join_element_wise("arxiv:", arxiv, ""),
                        pc.binary_join_element_wise("doi:", doi, ""))
    none = pc.is_null(by_id)
    if not pc.any(none).as_py():
        return by_id
    rows = pa.table({"t": title, "a": authors, "y": year}).filter(none).to_pylist()
    content = pa.array([content_work_id(r["t"], r["a"], r["y"]) for r in rows], pa.string())
    return pc.replace_with_mask(by_id, none, content)


def convert(table: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """The parsed block as source rows (``SOURCE_FIELDS`` columns) and the 0-based positions of
    the rows that are rejects (no identifier and no title), which the table leaves out."""
    table = table.combine_chunks()
    doi, arxiv = _ids(table)
    text = {name: clean_texts(table.column(name).combine_chunks()) for name in _TEXT}
    authors = _authors(table.column("authors").combine_chunks())
    year = _year(table.column("year").combine_chunks())
    n = table.num_rows
    cols: dict[str, pa.Array] = {
        **text, "doi": doi, "arxiv_id": arxiv, "authors": authors, "year": year,
        "first_page": _page(table.column("first_page").combine_chunks()),
        "withdrawn": pc.fill_null(table.column("withdrawn").combine_chunks(), False),
        "alt_dois": _alt_dois(arxiv)}
    cols["work_id"] = _work_ids(doi, arxiv, text["title"], authors, year)
    ok = pc.or_(pc.or_(pc.is_valid(doi), pc.is_valid(arxiv)), pc.is_valid(text["title"]))
    ok_np = ok.to_numpy(zero_copy_only=False)
    for name in SOURCE_FIELDS:
        if name not in cols:
            cols[name] = _empty(WORKS_SCHEMA.field(name).type, n)
    out = pa.table({name: cols[name] for name in SOURCE_FIELDS})
    return (out if ok_np.all() else out.filter(ok)), np.flatnonzero(~ok_np)


def _alt_dois(arxiv: pa.Array) -> pa.Array:
    """``[arxiv_doi(id)]`` for an arXiv work, else []."""
    valid = pc.is_valid(arxiv).to_numpy(zero_copy_only=False)
    values = [arxiv_doi(a) for a in pc.drop_null(arxiv).to_pylist()]
    offsets = np.concatenate(([0], np.cumsum(valid))).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.string()))


def _empty(arrow_type: pa.DataType, n: int) -> pa.Array:
    """A column of n empty values: [] for a list column (as a source row's ``()``), else null."""
    if pa.types.is_list(arrow_type):
        return pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], arrow_type.value_type))
    return pa.nulls(n, arrow_type)


def row_items(block: bytes, name: str, line0: int, lines: list[int]) -> Iterator[Any]:
    """The per-row reader over a block (``sources.rows_of_bytes``): works and rejects."""
    return source_files.rows_of_bytes(block, name, source_files.SourceFormat.WORKS_JSONL, line0, lines)
