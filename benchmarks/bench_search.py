"""Search-based matching against a local search service, measured on real strings.

No internet here, so this stands up a local HTTP service in the three services' response shapes
(Crossref ``/works?query.bibliographic=``, OpenAlex ``/works?search=``, arXiv ``search_query``)
whose answers are real work records: the glutton works (the dev set's gold), the Crossref works
sample and the arXiv metadata sample. It ranks them by a plain BM25 over title, authors, venue,
year, volume and first page (it plays the service, not the product: nothing here is citeledger's
matching). A share of the gold works (``--hold-out``, default 10 %) is left out of the service.

Quality: ``--n`` glutton dev strings (default 3,000) are resolved through the product's chain
(``apply_rule_chain`` with the search step, the real polite clients, 8 search threads) against an
EMPTY local catalog, and again locally (no remote) against a catalog holding exactly the works the
service holds. Printed: precision and recall of the remote path, the local path's recall on the
same strings, and the links made for strings whose work the service lacks (held out, or never in
it), which should be none.

Rate: ``--rate SECONDS`` runs each service alone with its default politeness (Crossref 5/s,
OpenAlex 10/s, arXiv one request every 3 s, one at a time) under 8 concurrent workers, and the
server counts requests per second per service (most in any sliding second; for arXiv the
smallest gap between request starts and the most requests in flight at once).

Usage: python benchmarks/bench_search.py [--n 3000] [--hold-out 0.1] [--show-wrong] [--rate 12]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import re
import socket
import struct
import sys
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from resolvers.candidates.fuzzy import FuzzyResolver  # noqa: E402
from resolvers.candidates.retrieval import InMemoryRetriever  # noqa: E402
from resolvers.catalog import InMemoryCatalog  # noqa: E402
from resolvers.model import Reference, Work  # noqa: E402
from resolvers.remote.arxiv import entries_to_work, parse_feed  # noqa: E402
from resolvers.remote.crossref import message_to_work  # noqa: E402
from resolvers.remote.facade import build_remote  # noqa: E402
from resolvers.remote.settings import (  # noqa: E402
    ARXIV_DEFAULTS,
    CROSSREF_DEFAULTS,
    OPENALEX_DEFAULTS,
    Endpoints,
    RemoteSettings,
    SearchSettings,
    ServiceSettings,
)
from resolvers.resolution import apply_rule_chain
from resolvers.search_step import SearchStep  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
TOKEN = re.compile(r"[^\W_]+")
BATCH = 500


# --- the service's records --------------------------------------------------------------------

def crossref_record(w: dict) -> dict:
    """A works-JSONL work in Crossref's message shape (what ``select=`` would return)."""
    rec: dict[str, Any] = {"DOI": w["doi"], "title": [w["title"]] if w.get("title") else [],
                           "author": [{"family": a} for a in w.get("authors") or []], "type": "journal-article",
                           "container-title": [w["venue"]] if w.get("venue") else []}
    if w.get("year"):
        rec["issued"] = {"date-parts": [[int(w["year"])]]}
    if w.get("volume"):
        rec["volume"] = w["volume"]
    if w.get("first_page"):
        rec["page"] = w["first_page"]
    return rec


def openalex_record(m: dict) -> dict:
    """A Crossref message in OpenAlex's work shape."""
    year = ((m.get("issued") or {}).get("date-parts") or [[None]])[0][0]
    return {"id": "https://openalex.org/W" + hashlib.sha1(m["DOI"].encode()).hexdigest()[:10],
            "doi": "https://doi.org/" + m["DOI"].lower(), "title": (m.get("title") or [None])[0],
            "publication_year": year, "type": "article",
            "authorships": [{"author": {"display_name": a.get("family") or a.get("name")}} for a in m.get("author") or []],
            "primary_location": {"source": {"display_name": (m.get("container-title") or [None])[0]}},
            "biblio": {"volume": m.get("volume"), "first_page": (m.get("page") or "").split("-")[0] or None}}


def arxiv_entry(r: dict) -> str:
    """An arXiv metadata snapshot row as an Atom entry of the API."""
    authors = "".join(f"<author><name>{escape(a.strip())}</name></author>"
                      for a in re.split(r",\s*|\s+and\s+", r.get("authors") or "") if a.strip())
    created = ((r.get("versions") or [{}])[-1].get("created") or "")
    year = re.search(r"\b(19|20)\d\d\b", created)
    published = f"{year.group(0) if year else '2000'}-01-01T00:00:00Z"
    doi = f"<arxiv:doi>{escape(r['doi'])}</arxiv:doi>" if r.get("doi") else ""
    return (f"<entry><id>http://arxiv.org/abs/{escape(r['id'])}v1</id><published>{published}</published>"
            f"<title>{escape(' '.join((r.get('title') or '').split()))}</title>{authors}{doi}</entry>")


def feed(entries: list[str]) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
            f'<opensearch:totalResults>{len(entries)}</opensearch:totalResults>{"".join(entries)}</feed>').encode()


def load_records(dev_dois: set[str], hold_out: float) -> tuple[list[dict], list[tuple[str, dict]], set[str]]:
    """(Crossref-shaped records, arXiv (text, row) records, gold DOIs held out of the service)."""
    held = {d for d in dev_dois if int(hashlib.sha256(d.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < hold_out}
    records: dict[str, dict] = {}
    for line in gzip.open(SHARED / "catalog/glutton_works.jsonl.gz", "rt"):
        w = json.loads(line)
        if w.get("doi") and w["doi"].lower() not in held:
            records.setdefault(w["doi"].lower(), crossref_record(w))
    for line in gzip.open(SHARED / "catalog/crossref_works_sample.jsonl.gz", "rt"):
        m = json.loads(line)
        if m.get("DOI") and m["DOI"].lower() not in held:
            records.setdefault(m["DOI"].lower(), m)
    arxiv = [(arxiv_entry(r), r) for r in map(json.loads, gzip.open(SHARED / "catalog/arxiv_metadata_sample.jsonl.gz", "rt"))]
    return list(records.values()), arxiv, held


# --- BM25, playing the service ----------------------------------------------------------------

class BM25:
    """A plain BM25 (k1 1.2, b 0.75) over each record's text; very common terms are skipped."""

    def __init__(self, texts: list[str]):
        self.docs = [Counter(TOKEN.findall(t.lower())) for t in texts]
        self.lens = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        self.post: dict[str, list[int]] = defaultdict(list)
        for i, d in enumerate(self.docs):
            for t in d:
                self.post[t].append(i)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.post.items()}
        self.cutoff = max(50, n // 20)

    def top(self, query: str, k: int) -> list[int]:
        scores: dict[int, float] = defaultdict(float)
        for t in set(TOKEN.findall(query.lower())):
            post = self.post.get(t, ())
            if len(post) > self.cutoff:
                continue
            for i in post:
                tf = self.docs[i][t]
                scores[i] += self.idf[t] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lens[i] / self.avg))
        return [i for i, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]]


def record_text(m: dict) -> str:
    year = ((m.get("issued") or {}).get("date-parts") or [[""]])[0][0]
    authors = " ".join(a.get("family") or a.get("name") or "" for a in m.get("author") or [])
    return " ".join(map(str, [(m.get("title") or [""])[0], authors, (m.get("container-title") or [""])[0],
                              year or "", m.get("volume") or "", (m.get("page") or "").split("-")[0]]))


# --- the local service ------------------------------------------------------------------------

class Service:
    """The three endpoints over the records, counting every request (service, start, end)."""

    def __init__(self, crossref: list[dict], arxiv: list[tuple[str, dict]]):
        self.crossref = crossref
        self.openalex = [openalex_record(m) for m in crossref]
        self.arxiv = arxiv
        self.index = BM25([record_text(m) for m in crossref])
        self.arxiv_index = BM25([f"{r.get('title')} {r.get('authors')}" for _, r in arxiv])
        self.by_doi = {m["DOI"].lower(): m for m in crossref}
        self.by_arxiv = {r["id"]: i for i, (_, r) in enumerate(arxiv)}
        self.requests: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def answer(self, path: str, args: dict[str, str]) -> tuple[str, bytes | None, str]:
        if path.startswith("/works/"):  # an identifier lookup by DOI (the chain asks these first)
            rec = self.by_doi.get(path[len("/works/"):].lower())
            return "crossref", json.dumps({"message": rec}).encode() if rec else None, "application/json"
        if path == "/works":
            hits = [self.crossref[i] for i in self.index.top(args.get("query.bibliographic", ""), int(args.get("rows", 5)))]
            body = {"status": "ok", "message-type": "work-list", "message": {"items": hits, "total-results": len(hits)}}
            return "crossref", json.dumps(body).encode(), "application/json"
        if path == "/openalex/works":
            hits = [self.openalex[i] for i in self.index.top(args.get("search", ""), int(args.get("per-page", 5)))]
            return "openalex", json.dumps({"meta": {"count": len(hits)}, "results": hits}).encode(), "application/json"
        if "id_list" in args:
            found = [self.arxiv[i][0] for i in (self.by_arxiv.get(a) for a in args["id_list"].split(",")) if i is not None]
            return "arxiv", feed(found), "application/atom+xml"
        query = args.get("search_query", "").replace("ti:", " ").replace("au:", " ").replace(" AND ", " ")
        hits = [self.arxiv[i][0] for i in self.arxiv_index.top(query, int(args.get("max_results", 5)))]
        return "arxiv", feed(hits), "application/atom+xml"

    def serve(self) -> ThreadingHTTPServer:
        """Serve on a free port. Each request's arrival is the kernel's receive time of its first
        bytes (``SO_TIMESTAMPNS``), not the time a handler thread got to run: the count per
        second is the network's, whatever the server process was doing."""
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_one_request(self):
                self.arrived = arrival(self.connection)
                super().handle_one_request()

            def do_GET(self):  # noqa: N802 - the http.server interface
                url = urlparse(self.path)
                args = {k: v[0] for k, v in parse_qs(url.query).items()}
                name, body, kind = service.answer(url.path, args)
                if body is None:
                    body, kind = b"Resource not found.", "text/plain"
                    self.send_response(404)
                else:
                    self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with service.lock:
                    service.requests.append((name, self.arrived, time.time()))

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def server_bind(self):
                self.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # inherited by accepted sockets
                super().server_bind()

        server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; Python does not export it


def arrival(connection: socket.socket) -> float:
    """When the next request's first bytes reached the kernel (peeked, so nothing is consumed);
    the wall clock when the kernel gives no timestamp."""
    try:
        _, ancillary, _, _ = connection.recvmsg(1, socket.CMSG_SPACE(16), socket.MSG_PEEK)
    except OSError:
        return time.time()
    for _, _, data in ancillary:
        seconds, nanoseconds = struct.unpack("qq", data[:16])
        return seconds + nanoseconds / 1e9
    return time.time()


def settings_for(base: str, services: tuple[str, ...], polite: bool) -> RemoteSettings:
    """The product's settings pointed at the local service: its default politeness (``polite``),
    or no waiting at all (the quality run: how fast a real service answers is not measured)."""
    quick = ServiceSettings(min_interval_seconds=0.0, max_concurrency=8, timeout_seconds=30.0, retries=0)
    return RemoteSettings(enabled=frozenset(services), mailto="bench@example.org",
                          arxiv=ARXIV_DEFAULTS if polite else quick, crossref=CROSSREF_DEFAULTS if polite else quick,
                          openalex=OPENALEX_DEFAULTS if polite else quick,
                          endpoints=Endpoints(arxiv_api=base + "/api/query", crossref_api=base,
                                              openalex_api=base + "/openalex"),
                          search=SearchSettings(services=services, threads=8))


# --- quality ----------------------------------------------------------------------------------

def local_works(service: Service) -> list[Work]:
    """The works the service holds, as the product makes them from its answers."""
    works = [message_to_work(m) for m in service.crossref]
    works += [entries_to_work(parse_feed(feed([e])).entries) for e, _ in service.arxiv]
    return works


def resolve_all(rows: list[dict], catalog_works: list[Work], remote: Any) -> list:
    """The chain over ``rows`` in batches: with ``remote`` (and its search step) or locally."""
    fuzzy = FuzzyResolver(InMemoryRetriever(catalog_works))
    catalog = InMemoryCatalog(catalog_works)
    verdicts = []
    for start in range(0, len(rows), BATCH):
        refs = [Reference(r["citing_paper"], r["reference_index"], r["raw"]) for r in rows[start:start + BATCH]]
        step = SearchStep(remote.search, remote.search.budget("bench")) if remote is not None else None
        verdicts += [x.verdict for x in apply_rule_chain(refs, catalog, fuzzy, remote, step)]
    return verdicts


def score(rows: list[dict], verdicts: list, in_service: set[str], skip: set[str] = frozenset()) -> dict[str, Any]:
    """Precision over judged links (a link where the gold says null is judged only when it names
    another row's gold work), recall over strings whose gold work the service holds, and links
    made for strings whose work the service lacks. Rows whose raw string is in ``skip`` (the gold
    answers it in several ways) are left out."""
    golds = {(r.get("gold_doi") or "").lower() for r in rows} - {""}
    out: Counter = Counter()
    absent_links, wrong = [], []
    for r, v in zip(rows, verdicts):
        if r["raw"] in skip:
            continue
        gold = (r.get("gold_doi") or "").lower()
        ids = {d for d in ((v.work.doi, *v.work.alt_dois) if v.work is not None and v.status.is_link else ()) if d}
        if gold in in_service:
            out["answerable"] += 1
            out["found"] += gold in ids
        if not ids:
            continue
        if gold:
            out["judged"] += 1
            out["correct"] += gold in ids
            if gold not in ids:
                wrong.append((r, v))
            if gold not in in_service:
                absent_links.append((r, v))
        elif ids & golds:
            out["judged"] += 1
            wrong.append((r, v))
        out["by_" + (v.resolver_source or "?")] += 1
    precision = out["correct"] / out["judged"] if out["judged"] else float("nan")
    recall = out["found"] / out["answerable"] if out["answerable"] else float("nan")
    return {**out, "precision": precision, "recall": recall, "absent_links": absent_links, "wrong": wrong}


def show(kind: str, links: list, titles: dict[str, str], noisy: set[str]) -> None:
    """One line per link: the string, what the gold says (and its work's title), what was linked."""
    for r, v in links:
        gold = (r.get("gold_doi") or "").lower()
        mark = "gold-inconsistent" if r["raw"] in noisy else "gold-consistent"
        print(f"    {kind} [{mark}, {v.resolver_source}] {' '.join(r['raw'].split())!r}\n"
              f"      gold {gold or None}: {titles.get(gold)!r}\n"
              f"      linked {v.work.work_id}: {v.work.title!r} {v.work.authors[:1]} {v.work.year} "
              f"vol {v.work.volume} p {v.work.first_page}")


def report(label: str, r: dict, loc: dict) -> None:
    by = {k: v for k, v in r.items() if k.startswith("by_")}
    print(f"{label}:\n  remote: {r['judged']:,} judged links {by}, {r['correct']:,} correct: precision "
          f"{r['precision']:.2%}; recall {r['found']:,}/{r['answerable']:,} = {r['recall']:.2%}")
    print(f"  local:  {loc['judged']:,} judged links, precision {loc['precision']:.2%}; recall "
          f"{loc['found']:,}/{loc['answerable']:,} = {loc['recall']:.2%}; gap (local - remote) "
          f"{100 * (loc['recall'] - r['recall']):.2f} points")
    print(f"  links for strings whose work the service lacks: remote {len(r['absent_links'])}, "
          f"local {len(loc['absent_links'])}")


def self_contradicting_raws(rows: list[dict]) -> set[str]:
    """Raw strings the gold answers in more than one way across the whole file (as
    ``bench_fuzzy.py``): whatever a matcher links, the gold calls it wrong at least once. The
    rest, one gold answer per string, are the rows whose gold is consistent."""
    answers: dict[str, set] = defaultdict(set)
    for r in rows:
        answers[r["raw"]].add(((r.get("gold_doi") or "").lower(), r.get("gold_arxiv_id") or ""))
    return {raw for raw, found in answers.items() if len(found) > 1}


def gold_titles() -> dict[str, str]:
    """DOI -> title of every work record at hand (to print what the gold names)."""
    titles = {}
    for line in gzip.open(SHARED / "catalog/glutton_works.jsonl.gz", "rt"):
        w = json.loads(line)
        if w.get("doi"):
            titles[w["doi"].lower()] = w.get("title")
    return titles


def quality(n: int, hold_out: float, show_wrong: bool) -> None:
    every = [json.loads(line) for line in gzip.open(SHARED / "refs/glutton_dev.jsonl.gz", "rt")]
    rows = every[:n]
    dev_dois = {(r.get("gold_doi") or "").lower() for r in rows} - {""}
    crossref, arxiv, held = load_records(dev_dois, hold_out)
    service = Service(crossref, arxiv)
    server = service.serve()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    in_service = set(service.by_doi)
    works = local_works(service)
    print(f"service: {len(crossref):,} DOI records, {len(arxiv):,} arXiv records; {len(rows):,} dev strings, "
          f"{len(dev_dois & in_service):,} of their {len(dev_dois):,} gold works in the service, "
          f"{len(held):,} held out ({hold_out:.0%}), {len(dev_dois - in_service - held):,} never in it")
    t0 = time.monotonic()
    remote = build_remote(settings_for(base, ("crossref", "openalex", "arxiv"), polite=False))
    remote_v = resolve_all(rows, [], remote)
    t1 = time.monotonic()
    local_v = resolve_all(rows, works, None)
    t2 = time.monotonic()
    print(f"remote path (empty catalog): {t1 - t0:.1f} s, {len(service.requests):,} requests "
          f"{dict(Counter(x[0] for x in service.requests))}; spent {remote.search.budget('bench').report()}")
    print(f"local path (catalog = the service's works): {t2 - t1:.1f} s")
    noisy = self_contradicting_raws(every)
    titles = gold_titles()
    for label, skip in (("all rows", set()), (f"rows whose gold is consistent (one gold answer per string in the "
                                                f"file; {sum(r['raw'] in noisy for r in rows)} rows left out)", noisy)):
        remote_s, local_s = score(rows, remote_v, in_service, skip), score(rows, local_v, in_service, skip)
        report(label, remote_s, local_s)
        if show_wrong and not skip:
            for path, s in (("remote", remote_s), ("local", local_s)):
                show(f"{path} wrong", s["wrong"], titles, noisy)
                show(f"{path} held-out", s["absent_links"], titles, noisy)
    server.shutdown()


# --- rate -------------------------------------------------------------------------------------

def window_max(starts: list[float], width: float) -> int:
    """The most request starts in any window of ``width`` seconds."""
    best, lo = 0, 0
    for hi, t in enumerate(starts):
        while t - starts[lo] >= width:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def in_flight_max(spans: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    now = best = 0
    for _, step in events:
        now += step
        best = max(best, now)
    return best


def serve_apart(conn: Any) -> None:
    """The service in a process of its own (the rate check), answering every search with an
    empty list in the service's shape: a handler busy ranking would hold the GIL and make the
    next request's arrival look later than it was (bunching what the server counts). Answers
    ``report`` with the requests seen since the last report, ``stop`` ends it."""
    service = Service([], [])
    server = service.serve()
    conn.send(server.server_address[1])
    while conn.recv() == "report":
        with service.lock:
            conn.send(list(service.requests))
            service.requests.clear()
    server.shutdown()


def rate(seconds: float, n: int) -> None:
    """Each service alone with its default politeness under 8 concurrent search threads; the
    run's request budget (rate x seconds) ends each phase. Counted at the server."""
    import multiprocessing

    rows = [json.loads(line) for line in gzip.open(SHARED / "refs/glutton_dev.jsonl.gz", "rt")][:n]
    here, there = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=serve_apart, args=(there,), daemon=True)
    child.start()
    base = f"http://127.0.0.1:{here.recv()}"
    for name, per_second in (("crossref", 5), ("openalex", 10), ("arxiv", 1 / 3)):
        settings = settings_for(base, (name,), polite=True)
        remote = build_remote(settings)
        step = SearchStep(remote.search, remote.search.budget(f"rate-{name}", max(2, int(per_second * seconds))))
        here.send("report")
        here.recv()  # forget what came before this phase
        refs = [Reference(r["citing_paper"], r["reference_index"], r["raw"]) for r in rows]
        t0 = time.monotonic()
        apply_rule_chain(refs, InMemoryCatalog([]), FuzzyResolver(InMemoryRetriever([])), None, step)
        took = time.monotonic() - t0
        here.send("report")
        spans = sorted((s, e) for x, s, e in here.recv() if x == name)
        starts = [s for s, _ in spans]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        limit = getattr(settings, name)
        print(f"{name}: min_interval {limit.min_interval_seconds} s, max_concurrency {limit.max_concurrency}; "
              f"{len(starts)} requests in {took:.1f} s by 8 threads; "
              f"most in any 1 s: {window_max(starts, 1.0)}; in any 3 s: {window_max(starts, 3.0)}; "
              f"smallest gap {min(gaps) if gaps else float('nan'):.3f} s; most in flight {in_flight_max(spans)}")
        remote.close()
    here.send("stop")
    child.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000, help="glutton dev strings to resolve")
    parser.add_argument("--hold-out", type=float, default=0.1, help="share of gold works left out of the service")
    parser.add_argument("--rate", type=float, default=0.0, help="seconds per service of the rate check (0: skip)")
    parser.add_argument("--show-wrong", action="store_true",
                        help="print every wrong link and every link for a work the service lacks, both paths")
    args = parser.parse_args()
    if args.rate:
        rate(args.rate, max(args.n, 500))
    else:
        quality(args.n, args.hold_out, args.show_wrong)


if __name__ == "__main__":
    main()
