"""Soak of the remote clients' bounds: hostile answers from 127.0.0.1, in a loop, for a set time.

    .venv/bin/python benchmarks/soak_remote.py --seconds 60 --threads 4

One polite client (as a service's: one rate limit, one circuit) is asked by ``--threads`` threads
in turn for each kind of answer: a fine one, a redirect within the host, an 8 GiB Content-Length,
an endless body, a gzip bomb (4 MB to 4 GiB), a byte trickled every 50 ms, ``gzip, gzip``, a
Retry-After of 999999999999, a redirect loop and a redirect to another host (the circuit closes
again at once: a fine request fails only when it waited behind a stall). Prints the requests,
the answers, the ``unavailable`` ones by fault, the longest wall time of a request of each kind
(against the deadline), the bytes taken in and the largest answer (against ``max_body_bytes``),
what the server handed to its sockets, and the process's peak RSS. Exit status 1 when a hostile
kind was answered, a fine one was not (but for ``circuit open``), an exception other than
``RemoteUnavailable`` came out, or a request outlived its deadline by more than one read timeout.
Outside the test suite.
"""
from __future__ import annotations

import argparse
import itertools
import logging
import re
import resource
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from pytest_httpserver import HTTPServer  # noqa: E402
from remote_hostile import MIB, Sent, gzip_bomb, huge, redirect, stacked_gzip, trickle  # noqa: E402
from werkzeug import Request, Response  # noqa: E402

from resolvers.errors import RemoteUnavailable  # noqa: E402
from resolvers.remote.bounds import Fault, fault_of  # noqa: E402
from resolvers.remote.http import PoliteClient  # noqa: E402
from resolvers.remote.settings import ServiceSettings  # noqa: E402

logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the local server logs every request

FINE = ("ok", "moved")
HOSTILE = ("huge", "endless", "bomb", "trickle", "stacked", "retryafter", "loop", "away")
# the circuit closes again at once and never stays open for the run: each kind of answer meets
# its bound (a request waiting behind a stall still fails unsent: "circuit open", by design)
SETTINGS = ServiceSettings(min_interval_seconds=0.0, max_concurrency=4, timeout_seconds=2.0, retries=1,
                           backoff_base_seconds=0.01, backoff_max_seconds=0.05, max_retry_after_seconds=0.2,
                           circuit_failures=10**9, circuit_cooldown_seconds=0.0, circuit_openings=10**9,
                           max_body_bytes=MIB, deadline_seconds=3.0)
REFUSED = f"unavailable: {Fault.CIRCUIT_OPEN.value}"


def handler(elsewhere: HTTPServer, sent: Sent):
    kinds = {
        "huge": huge(sent), "endless": huge(sent, declared=None), "bomb": gzip_bomb(sent),
        "trickle": trickle(sent, every=0.05, count=400), "stacked": stacked_gzip(b'{"message": {}}'),
        "retryafter": lambda r: Response("slow down", status=429, headers={"Retry-After": "999999999999"}),
    }

    def answer(request: Request) -> Response:
        kind = request.path.strip("/").split("/")[0]
        if kind == "ok" or request.args.get("via"):
            return Response('{"message": {}}', content_type="application/json")
        if kind == "moved":
            return redirect(request.path + "?via=redirect", 301)(request)
        if kind == "loop":
            return redirect(request.path)(request)  # back to itself
        if kind == "away":
            return redirect(elsewhere.url_for(request.path))(request)
        return kinds[kind](request)

    return answer


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outcomes: Counter[str] = Counter()
        self.longest: dict[str, float] = defaultdict(float)
        self.wrong: list[str] = []

    def record(self, kind: str, outcome: str, seconds: float) -> None:
        with self.lock:
            self.outcomes[outcome] += 1
            self.longest[kind] = max(self.longest[kind], seconds)
            answered = outcome == "answered"
            fine_refused = kind in FINE and outcome == REFUSED  # it waited behind a stall
            if ((kind in FINE) != answered and not fine_refused) or \
                    seconds > SETTINGS.deadline_seconds + SETTINGS.timeout_seconds:
                if len(self.wrong) < 20:
                    self.wrong.append(f"{kind}: {outcome} in {seconds:.2f} s")


def worker(client: PoliteClient, base: str, kinds, stop_at: float, tally: Tally) -> None:
    for n in itertools.count():
        if time.monotonic() >= stop_at:
            return
        kind = next(kinds)
        started = time.monotonic()
        try:
            client.get(f"{base}/{kind}/{threading.get_ident()}-{n}")
            outcome = "answered"
        except RemoteUnavailable as exc:
            outcome = f"unavailable: {fault_of(exc).value}"
        except Exception as exc:  # noqa: BLE001 - what the soak is looking for
            outcome = f"CRASH {type(exc).__name__}: {exc}"[:200]
        tally.record(kind, outcome, time.monotonic() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to soak (default 60)")
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    server, elsewhere, sent = HTTPServer(host="127.0.0.1", threaded=True), HTTPServer(host="127.0.0.1"), Sent()
    server.start()
    elsewhere.start()
    elsewhere.expect_request("/").respond_with_data("elsewhere")
    server.expect_request(re.compile("^/.*")).respond_with_handler(handler(elsewhere, sent))
    client = PoliteClient("soak", SETTINGS, mailto="soak@example.org")
    kinds = itertools.cycle(FINE + HOSTILE)
    lock = threading.Lock()

    def next_kind():
        while True:
            with lock:
                kind = next(kinds)
            yield kind

    tally, started = Tally(), time.monotonic()
    threads = [threading.Thread(target=worker, args=(client, server.url_for("").rstrip("/"), next_kind(),
                                                      started + args.seconds, tally)) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    report(client, tally, sent, wall, len(elsewhere.log))
    for srv in (server, elsewhere):
        srv.clear()
        srv.stop()
    return 1 if tally.wrong or len(elsewhere.log) else 0


def report(client: PoliteClient, tally: Tally, sent: Sent, wall: float, elsewhere: int) -> None:
    stats = client.stats
    print(f"wall {wall:.1f} s, threads asking one client; requests {stats.requests}, attempts {stats.attempts}")
    for outcome, count in sorted(tally.outcomes.items()):
        print(f"  {outcome:40s} {count:6d}")
    print(f"longest request by kind (deadline {SETTINGS.deadline_seconds:g} s, read timeout "
          f"{SETTINGS.timeout_seconds:g} s):")
    for kind in FINE + HOSTILE:
        print(f"  {kind:12s} {tally.longest.get(kind, 0.0):6.2f} s")
    print(f"bytes taken in {stats.bytes_taken:,}; largest answer {stats.largest_answer:,} "
          f"(max_body_bytes {SETTINGS.max_body_bytes:,})")
    print(f"server handed its sockets {sent.wire:,} bytes ({sent.decoded:,} once decoded)")
    print(f"requests that reached the other host: {elsewhere}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    for line in tally.wrong:
        print("WRONG", line)


if __name__ == "__main__":
    sys.exit(main())
