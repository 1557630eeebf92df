"""The first step of a resolve run: plan it. The inputs are checked and hashed (pipes spooled
once), the ledger's writer lock is taken, the catalog generation pinned (and its lookup files
brought up to date), the run begun (or an interrupted one picked up) in the ledger, and its
references cut into batches (``BatchJob``: a slice of the references, packed by ``batch_codec``).

The steps after it: ``batches`` (resolve and write one batch), ``finishing`` (finish or give up
the run); ``orchestrate`` runs them all. The flows and the CLI call these same functions.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from citeledger.app_errors import DiskFull, InputError
from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.catalog.generation_pins import pin_generation, pinned_generation, unpin_generation
from citeledger.config import Config, load_config
from citeledger.engine.process_cache import get_catalog
from citeledger.index import index_upgrade
from citeledger.inputs.dedupe import OnePass, iter_unique
from citeledger.inputs.files import (
    FETCHED_KINDS,
    PIPE_OPEN_TIMEOUT,
    InputSource,
    discard_spools,
    prepare_inputs,
    reads_papers,
)
from citeledger.inputs.papers import collecting_titles
from citeledger.inputs.pdf_papers import pdf_service
from citeledger.inputs.rows import InputLimits, InputReject
from citeledger.ledger.ledger_store import LedgerStore, check_ledger_dir
from citeledger.options import at_least, check_run_id
from citeledger.run.batch_codec import pack_references, unpack_references
from citeledger.storage import locking
from citeledger.storage.locking import exclusive
from citeledger.storage.places import CatalogDir, CatalogPlaces, LedgerDir
from papers.paper_model import PaperLimits
from resolvers.model import Reference

DEFAULT_BATCH_SIZE = 1000  # the one default of the CLI, the flows and limits.batch_size (config)


def new_run_id() -> str:
    return "run-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class BatchJob:
    """One unit of work for a task: a slice of the run's references and where it goes. The
    references are held compressed (``payload``, see ``batch_codec``): a 3M-reference run plans in tens of MB."""

    run_id: str
    part: str
    catalog: CatalogPlaces
    ledger: LedgerStore
    observed_at: datetime
    catalog_fingerprint: str
    payload: bytes
    size: int
    remote: bool = False
    catalog_generation: str | None = None  # the generation planned on; every batch uses it
    search_budget: int | None = None  # the run's search requests (None: the configured default)
    search_skip_files: tuple[str, ...] = ()  # inputs whose references are not searched (nightly re-runs)

    @property
    def references(self) -> tuple[Reference, ...]:
        return unpack_references(self.payload)


@dataclass
class RunPlan:
    """A run as planned: its ledger (the one ``LedgerStore`` every later step writes through) and
    catalog, its inputs, its batches (``pending``: those not written yet) and its rejects."""

    run_id: str
    catalog: CatalogPlaces
    ledger: LedgerStore
    inputs: list[dict[str, Any]]
    observed_at: datetime
    catalog_fingerprint: str
    jobs: list[BatchJob]
    pending: list[BatchJob]
    rejects: list[InputReject]
    resumed: bool
    references: int
    started: float = field(default_factory=time.monotonic)
    catalog_seq: int = 0  # the catalog's ingested_seq when planned (see runs.catalog_seq)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): in folders, no input


def _resumed_options(ledger: LedgerStore, run_id: str) -> dict[str, Any]:
    """The options an interrupted run was started with (read before any lock: only to check
    the inputs; the run itself is picked up under the lock)."""
    path = ledger.places.manifest(run_id)
    try:
        return json.loads(path.read_text()).get("options", {})
    except (OSError, ValueError):
        return {}


def plan_run(inputs: Sequence[str | Path], catalog: CatalogDir, ledger: LedgerStore | LedgerDir,
             run_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, limits: InputLimits | None = None,
             citing_paper: str | Mapping[str, str] | None = None, remote: bool = False,
             open_timeout: float = PIPE_OPEN_TIMEOUT, search: Mapping[str, Any] | None = None) -> RunPlan:
    """Check and hash the inputs (pipes spooled once), then take the ledger lock, fix the
    batches, and start (or pick up) the run in the ledger. An input that cannot be read at all
    raises ``InputError`` before the lock: no run begins. ``ledger``: the run's ``LedgerStore``
    (or its folder, made one here), carried by the plan and its batches from here on."""
    batch_size = at_least("batch_size", batch_size, 1)
    ledger, catalog = LedgerStore.of(ledger), CatalogPlaces.of(catalog)
    check_ledger_dir(ledger)
    limits = limits or InputLimits()
    config = load_config()  # once: the limits below, GROBID and arXiv's clients (pdf_service)
    if limits.max_file_bytes is None:  # the configuration's limits.max_input_bytes (clear reject when over)
        limits = dataclasses.replace(limits, max_file_bytes=config.limits.max_input_bytes)
    if limits.papers is None:  # the configuration's [papers] bounds on one paper
        limits = dataclasses.replace(limits, papers=config.papers)
    run_id = check_run_id(new_run_id() if run_id is None else run_id)
    skipped: list[tuple[str, str]] = []  # what folders held that is no input
    sources = prepare_inputs(inputs, ledger.places.spool, limits.max_file_bytes,
                             _resumed_options(ledger, run_id).get("citing_paper") or citing_paper, open_timeout,
                             skipped)
    try:
        locking.acquire_ledger(ledger)  # one writer per ledger; released by close_run or death
        _UNFINISHED[str(ledger)] = run_id  # what an interrupt tells the user to re-run
        try:
            plan = _plan_locked(sources, catalog, ledger, run_id, batch_size, limits, citing_paper, remote,
                                dict(search or {}), config)
            plan.skipped = skipped
            return plan
        except BaseException as exc:
            locking.release_ledger(ledger)
            _forget_unbegun(exc, catalog, ledger, run_id)
            raise
    finally:
        discard_spools(sources)


def _forget_unbegun(exc: BaseException, catalog: CatalogPlaces, ledger: LedgerStore, run_id: str) -> None:
    """A plan that failed (not a full disk or an interrupt: the same id finishes those) leaves no
    run to re-run and, if the run never began, no pinned catalog generation."""
    if isinstance(exc, Exception) and not isinstance(exc, DiskFull):
        _UNFINISHED.pop(str(ledger), None)
        if not ledger.known_run(run_id):
            unpin_generation(catalog, ledger, run_id)  # a run that never began pins nothing


def _plan_locked(sources: Sequence[InputSource], places: CatalogPlaces, ledger: LedgerStore, run_id: str,
                 batch_size: int, limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                 remote: bool, search: dict[str, Any], config: Config | None = None) -> RunPlan:
    catalog = planned_catalog(places, ledger, run_id)
    input_info = [{"path": s.name, "sha256": s.sha256} for s in sources]
    if isinstance(citing_paper, Mapping):
        citing_paper = dict(citing_paper)
    manifest, resumed = ledger.begin_run(run_id, input_info, catalog.fingerprint,
                                         {"batch_size": batch_size, "citing_paper": citing_paper, "remote": remote,
                                          "max_raw_chars": limits.max_raw_chars,
                                          "max_file_bytes": limits.max_file_bytes, **_search_option(search),
                                          "papers": dataclasses.asdict(limits.papers) if limits.papers else None})
    if resumed:  # an interrupted run goes on as it started: same rejects, same batches, same rows
        opts = manifest.options
        batch_size = opts.get("batch_size", batch_size)
        citing_paper = opts.get("citing_paper", citing_paper)
        remote = opts.get("remote", remote)
        search = opts.get("search", search)
        limits = dataclasses.replace(limits, max_raw_chars=opts.get("max_raw_chars", limits.max_raw_chars),
                                     max_file_bytes=opts.get("max_file_bytes", limits.max_file_bytes))
        if opts.get("papers"):  # the bounds the run started with, so it reads each paper the same
            limits = dataclasses.replace(limits, papers=PaperLimits(**opts["papers"]))
    made = dict(run_id=run_id, catalog=places, ledger=ledger,
                observed_at=manifest.observed_at, catalog_fingerprint=catalog.fingerprint, remote=remote,
                catalog_generation=catalog.generation_dir.name, search_budget=search.get("budget"),
                search_skip_files=tuple(search.get("skip_files", ())))
    if not remote and any(s.kind in FETCHED_KINDS for s in sources):
        raise InputError(f"{next(s.name for s in sources if s.kind in FETCHED_KINDS)}: arXiv:ID inputs are "
                         "fetched from arXiv, which needs --remote")
    with _papers_read(sources, ledger, remote, config) as titles:
        jobs, rejects, count = _read_batches(sources, limits, citing_paper, batch_size, made)
    ledger.write_titles(run_id, [{"run_id": run_id, "citing_paper": paper, "title": title, "title_source": source,
                                  "file": file, "observed_at": manifest.observed_at}
                                 for paper, (title, source, file) in sorted(titles.items())])
    ledger.write_rejects(run_id, "input-rejects", [
        {"run_id": run_id, "file": r.file, "line": r.line, "field": r.field, "reason": r.reason,
         "excerpt": r.excerpt} for r in rejects])
    pending = [j for j in jobs if not ledger.batch_done(run_id, j.part)]
    return RunPlan(run_id, places, ledger, input_info, manifest.observed_at,
                   catalog.fingerprint, jobs, pending, rejects, resumed, count,
                   catalog_seq=catalog.ingested_seq)


@contextmanager
def _papers_read(sources: Sequence[InputSource], ledger: LedgerStore, remote: bool,
                 config: Config | None) -> Iterator[dict[str, tuple[str, str, str]]]:
    """Where the run's inputs are read: when any is a paper, PDFs go to GROBID when one is set,
    arXiv papers are fetched (``remote``), what is fetched is kept under the ledger, and each
    paper's own title is collected; reference tables alone need none of it."""
    if not reads_papers(sources):
        yield {}
        return
    with pdf_service(None, ledger, remote, config), collecting_titles() as titles:
        yield titles


def _read_batches(sources: Sequence[InputSource], limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                  batch_size: int, made: dict[str, Any]) -> tuple[list[BatchJob], list[InputReject], int]:
    """The run's batches from one read of its inputs when no reference repeats (the usual case),
    else from ``iter_unique``, which settles the repeats: the same batches either way."""
    once = OnePass(sources, limits, citing_paper)
    if once.usable:
        cut = _cut_batches(once.items(), batch_size, made)
        if not once.repeats:
            return cut
    return _cut_batches(iter_unique(sources, limits, citing_paper), batch_size, made)


def _search_option(search: dict[str, Any]) -> dict[str, Any]:
    """The run's search scope, kept in its manifest only when set (a resumed run keeps it; the
    manifests of runs without one stay as they were)."""
    return {"search": search} if search else {}


def _cut_batches(items: Iterator[Reference | InputReject], batch_size: int, made: dict[str, Any]
                 ) -> tuple[list[BatchJob], list[InputReject], int]:
    """Batches of ``batch_size`` references cut as the rows stream by (only one batch's
    references are ever held as objects); the part name carries a digest of its references."""
    jobs: list[BatchJob] = []
    rejects: list[InputReject] = []
    chunk: list[Reference] = []
    count = 0

    def cut() -> None:
        digest = hashlib.sha256(json.dumps([[r.citing_paper, r.reference_index, r.raw] for r in chunk])
                                .encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        jobs.append(BatchJob(part=f"part-{len(jobs):06d}-{digest}", payload=pack_references(chunk),
                             size=len(chunk), **made))
        chunk.clear()

    for item in items:
        if isinstance(item, InputReject):
            rejects.append(item)
            continue
        chunk.append(item)
        count += 1
        if len(chunk) == batch_size:
            cut()
    if chunk:
        cut()
    return jobs, rejects, count


# Runs this process planned and has not finished, by ledger: the run id an interrupted command
# names in its "re-run with --run-id" line.
_UNFINISHED: dict[str, str] = {}


def interrupted_run() -> str | None:
    """The run this process was working on when it was stopped, if it did not finish."""
    return next(reversed(_UNFINISHED.values()), None)


def forget_interrupted_runs() -> None:
    """Forget the runs this process was stopped in (it goes on to other work, and an interrupt of
    that should not name them)."""
    _UNFINISHED.clear()


def forget_finished_run(ledger: LedgerStore, run_id: str) -> None:
    """The run finished: an interrupt of this process no longer names it."""
    if _UNFINISHED.get(str(ledger)) == run_id:
        del _UNFINISHED[str(ledger)]


def planned_catalog(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> ParquetCatalog:
    """The generation a run works on, pinned for it: the one it was first planned on when that
    run is being resumed (later builds keep it, see ``catalog.pinned_generations``), else the live
    one. Pinned before it is checked, so a build that swaps generations meanwhile cannot take it."""
    pinned = pinned_generation(catalog_dir, ledger_dir, run_id)
    if pinned and (Path(catalog_dir) / pinned / "manifest.json").exists():
        bring_up_to_date(catalog_dir, pinned)
        catalog = get_catalog(catalog_dir, pinned)
        pin_generation(catalog_dir, ledger_dir, run_id, pinned)  # now held by this process
        return catalog
    for _ in range(5):
        live = CatalogStore(catalog_dir).current()
        if live is None:
            return get_catalog(catalog_dir)  # raises the one-line "no catalog" error
        pin_generation(catalog_dir, ledger_dir, run_id, live.name)
        if (live / "manifest.json").exists():  # still there once pinned: no build can remove it now
            bring_up_to_date(catalog_dir, live.name)
            return get_catalog(catalog_dir, live.name)
    return get_catalog(catalog_dir)


def bring_up_to_date(catalog_dir: CatalogDir, generation: str) -> None:
    """A generation whose lookup files are of an older format is brought up to date here, once, under
    the catalog's lock and before any worker process opens it (opening a catalog never writes)."""
    gen_dir = Path(catalog_dir) / generation
    if index_upgrade.up_to_date(gen_dir):
        return
    with exclusive(catalog_dir):
        stats = index_upgrade.ensure_index(gen_dir)
    logging.getLogger(__name__).info("catalog generation %s: lookup files brought up to date%s", generation,
                                     f" (index: {stats})" if stats else "")


def log_plan(plan: RunPlan, logger: Any) -> RunPlan:
    """Say what the run holds: its references, batches (to do, resuming) and rejected rows."""
    logger.info("run %s: %d references in %d batches (%d to do%s), %d rejected rows",
                plan.run_id, plan.references, len(plan.jobs), len(plan.pending),
                ", resuming" if plan.resumed else "", len(plan.rejects))
    for reject in plan.rejects[:20]:
        logger.warning("rejected %s", reject.message)
    return plan
