"""Soak of the circuit breakers: runs of thousands of references with Crossref, arXiv and OpenAlex on
against a local server that in turn trickles every answer (a byte a second), stays silent, answers
``429`` with ``Retry-After: 999999999999``, answers ``503`` to everything, or answers well; after
each round, a run waiting on the trickle is stopped by SIGTERM or SIGINT.

    .venv/bin/python benchmarks/soak_breaker.py --seconds 600 --references 2000

Each run is ``citeledger resolve --remote`` in a process of its own, the stall bounds at their
defaults (only the pacing between requests is off: ``tests/remote_hostile.stalled_config``).
Checks: a hostile run exits 0 with every reference ``unavailable`` and one summary line naming
each service's circuit; a healthy run links every reference; a stopped run exits 128 + the signal
and writes no batch. Prints, per kind of answer, the runs and their wall time (longest, mean), the
time from a signal to the end of the command, and the load average. Exit status 1 when a check
fails. Outside the test suite; the server listens on 127.0.0.1 only; every loop is bounded by
``--seconds`` (a run started before the end is waited for).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from pytest_httpserver import HTTPServer  # noqa: E402
from remote_hostile import Sent, healthy_services, stalled_config, stalled_reference, trickle  # noqa: E402
from werkzeug import Request, Response  # noqa: E402

logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the local server logs every request

SERVICES = ("arxiv", "crossref", "openalex")
KINDS = ("trickle", "silent", "retry_after", "e503", "healthy")
MAIN = "import sys; from citeledger.cli.entry import main; sys.exit(main(sys.argv[1:]))"
RUN_BOUND = 600.0  # a run that takes longer than this is a failure (a stall held it), and is killed


class World:
    """The local server: each request answered as ``kind`` says; ``arrivals`` counts requests."""

    def __init__(self) -> None:
        self.kind = "healthy"
        self.arrivals = 0
        self.release = threading.Event()  # ends the silent handlers' waits when the soak ends
        self._lock = threading.Lock()
        self._trickle = trickle(Sent(), every=1.0, count=3600)

    def __call__(self, request: Request) -> Response:
        with self._lock:
            self.arrivals += 1
        kind = self.kind
        if kind == "trickle":
            return self._trickle(request)
        if kind == "silent":
            self.release.wait(120)
            return Response("late", status=200)
        if kind == "retry_after":
            return Response("slow down", status=429, headers={"Retry-After": "999999999999"})
        if kind == "e503":
            return Response("busy", status=503)
        return healthy_services(request)


def states_of(out: str) -> dict[str, int]:
    """The state counts a ``resolve`` printed (``  unavailable   2000``)."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"^  ([a-z_]+)\s+(\d+)$", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


def check_run(kind: str, code: int, out: str, references: int) -> list[str]:
    states = states_of(out)
    if code != 0:
        return [f"{kind}: exit {code}: {out[-300:]}"]
    if kind == "healthy":
        linked = states.get("verified_exact", 0) + states.get("verified_fuzzy", 0)
        return [] if linked == references else [f"healthy: {linked} of {references} linked: {states}"]
    problems = []
    if states.get("unavailable") != references:
        problems.append(f"{kind}: {states.get('unavailable')} of {references} unavailable: {states}")
    for service in SERVICES:
        lines = [line for line in out.splitlines() if line.startswith(f"{service}: circuit ")]
        if len(lines) != 1 or "asked again on the next run" not in lines[0]:
            problems.append(f"{kind}: {service}: no circuit line in the summary ({lines})")
    return problems


class Soak:
    def __init__(self, work: Path, references: int, world: World, base: str):
        self.work, self.references, self.world = work, references, world
        self.pristine, self.catalog, self.ledger = work / "catalog-built", work / "catalog", work / "ledger"
        self.refs = work / "refs.jsonl"
        self.refs.write_text("".join(json.dumps(stalled_reference(i)) + "\n" for i in range(references)))
        config = work / "citeledger.toml"
        config.write_text(stalled_config(base, str(work / "state")))
        self.env = {**{k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"},
                    "CITELEDGER_CONFIG": str(config), "PYTHONPATH": str(REPO)}
        self.runs = itertools.count(1)
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.stops: list[tuple[str, float]] = []
        self.failures: list[str] = []
        fixtures = sorted((REPO / "tests" / "fixtures" / "catalog").glob("*.jsonl"))
        subprocess.run([sys.executable, "-c", MAIN, "catalog", "build", "--catalog", str(self.pristine),
                        *map(str, fixtures)], env=self.env, check=True, stdout=subprocess.DEVNULL)

    def fresh_catalog(self) -> None:
        """The catalog as built and no search answer kept: a healthy run adds the works the services
        gave it to the catalog and their search answers to the cache (``state_dir``), and a run after
        it would find every reference at home, asking no service."""
        shutil.rmtree(self.catalog, ignore_errors=True)
        shutil.rmtree(self.work / "state", ignore_errors=True)
        shutil.copytree(self.pristine, self.catalog)

    def command(self, run_id: str) -> list[str]:
        return [sys.executable, "-c", MAIN, "resolve", str(self.refs), "--remote", "--catalog", str(self.catalog),
                "--ledger", str(self.ledger), "--run-id", run_id]

    def run(self, kind: str) -> None:
        self.world.kind = kind
        self.fresh_catalog()
        started = time.monotonic()
        try:
            done = subprocess.run(self.command(f"soak-{next(self.runs)}-{kind}"), env=self.env, capture_output=True,
                                  text=True, timeout=RUN_BOUND)
        except subprocess.TimeoutExpired:
            self.failures.append(f"{kind}: not finished after {RUN_BOUND:g} s")
            return
        self.seconds[kind].append(time.monotonic() - started)
        self.failures += check_run(kind, done.returncode, done.stdout + done.stderr, self.references)

    def stop(self, signum: int) -> None:
        """A run waiting on the trickling server, stopped by ``signum`` once its first request arrived."""
        self.world.kind = "trickle"
        self.fresh_catalog()
        before = self.world.arrivals
        run_id = f"soak-{next(self.runs)}-stopped"
        proc = subprocess.Popen(self.command(run_id), env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            end = time.monotonic() + 120
            while self.world.arrivals == before and time.monotonic() < end and proc.poll() is None:
                time.sleep(0.05)
            time.sleep(0.5)  # the run's batches are now waiting on the stalled service
            if proc.poll() is not None:
                self.failures.append(f"{signal.Signals(signum).name}: the run ended before the signal "
                                     f"(exit {proc.returncode}): {proc.communicate()[1][-300:]}")
                return
            sent = time.monotonic()
            os.kill(proc.pid, signum)
            _, err = proc.communicate(timeout=120)
            self.stops.append((signal.Signals(signum).name, time.monotonic() - sent))
        except subprocess.TimeoutExpired:
            self.failures.append(f"{signal.Signals(signum).name}: the run did not end within 120 s")
            return
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 128 + signum or "interrupted; re-run with --run-id" not in err:
            self.failures.append(f"{signal.Signals(signum).name}: exit {proc.returncode}: {err[-300:]}")
        if list((self.ledger / "observations").glob(f"run_id={run_id}/*.parquet")):
            self.failures.append(f"{signal.Signals(signum).name}: a batch of the stopped run was written")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--references", type=int, default=2000)
    args = parser.parse_args()
    world = World()
    server = HTTPServer(host="127.0.0.1", threaded=True)
    server.expect_request(re.compile("^/.*")).respond_with_handler(world)
    server.start()
    work = Path(tempfile.mkdtemp(prefix="citeledger-soak-breaker-"))
    started = time.monotonic()
    try:
        soak = Soak(work, args.references, world, server.url_for("").rstrip("/"))
        for round_number in itertools.count():
            for kind in KINDS:
                if time.monotonic() - started >= args.seconds:
                    break
                soak.run(kind)
            if time.monotonic() - started >= args.seconds:
                break
            soak.stop(signal.SIGTERM if round_number % 2 == 0 else signal.SIGINT)
    finally:
        world.release.set()
        server.clear()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(soak, time.monotonic() - started, args.references)
    return 1 if soak.failures else 0


def report(soak: Soak, wall: float, references: int) -> None:
    """The failures first (at most eight, and how many more), then the figures (the last lines,
    which ``soak_hostile.py`` shows)."""
    for line in soak.failures[:8]:
        print("FAILED", line)
    if len(soak.failures) > 8:
        print(f"FAILED and {len(soak.failures) - 8} more")
    load = os.getloadavg()
    print(f"breaker soak: {wall:.0f} s, {references:,} references a run, load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} on {os.cpu_count()} cores")
    for kind in KINDS:
        times = soak.seconds.get(kind, [])
        if times:
            print(f"  {kind:12s} runs {len(times):3d}  longest {max(times):6.1f} s  mean {sum(times) / len(times):6.1f} s")
    if soak.stops:
        print(f"  stopped runs {len(soak.stops)}: signal to exit longest {max(s for _, s in soak.stops):.2f} s "
              f"({', '.join(f'{name} {s:.2f} s' for name, s in soak.stops)})")


if __name__ == "__main__":
    sys.exit(main())
