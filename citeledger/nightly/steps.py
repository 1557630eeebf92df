"""The nightly run as plain functions: take the inbox, refresh the catalog, pick the references a
grown catalog could change, re-check notices. ``flows/nightly.py`` and ``flows/refresh.py`` only
orchestrate these; tests call them without Prefect.

What a nightly run re-resolves (and why only these):

* ``unresolved`` and ``malformed_identifier`` references: a work that arrived since could settle
  them. ``verified_fuzzy`` links: a work that arrived since could be the better candidate.
  Either way only when a catalog work newer than the reference's last observation (its run's
  ``catalog_seq``) shares an extracted identifier with the reference, or at least two title
  tokens (all of them for a one-token title) with its text. A work whose fields changed counts as
  newer (the catalog bumps its ``ingested_seq``).
* ``unavailable`` references, when the run uses the remote resolvers: the service may answer now.
  Without remote they stay ``unavailable`` (re-resolving locally would report "could not check"
  as "not found").
* Never a reference whose observation would be the same: same reference, catalog fingerprint and
  code give the same ``observation_id``, so a reference whose current observation already has the
  id it would get now is skipped. That makes a second run on an unchanged catalog write nothing.

``verified_exact`` and ``metadata_mismatch`` are settled by identifiers and left alone; a code
upgrade does not re-resolve anything by itself (run ``citeledger resolve`` over the inputs).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from citeledger.catalog import sharding as catalog_sharding
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.config import load_config
from citeledger.engine.process_cache import get_catalog
from citeledger.index import shards
from citeledger.inputs.dedupe import read_inputs
from citeledger.inputs.papers import given_inputs, input_sha256
from citeledger.inputs.pdf_papers import pdf_service, read_later
from citeledger.inputs.rows import InputLimits
from citeledger.ledger.ledger_store import LedgerStore, write_ledger_database
from citeledger.ledger.reads import citing_papers_of_works, current_links_and_notices
from citeledger.nightly.folders import NightlyFolders, confined_folders, entries_read, rejected_folder
from citeledger.nightly.intake import CATALOG_SUFFIXES, Intake, citing_paper_of, inbox_files, take_inbox
from citeledger.nightly.rerun_selection import RerunSelection, select_rerun
from citeledger.records.record_files import papers_touched
from citeledger.run.finishing import close_run, settle_run
from citeledger.run.notice_check import cited_doi_notice_rows, work_notice_rows
from citeledger.run.planning import DEFAULT_BATCH_SIZE, RunPlan, new_run_id, plan_run
from citeledger.run.summary import RunSummary
from citeledger.storage.atomic import atomic_move, atomic_write_lines
from citeledger.storage.places import CatalogDir, LedgerDir, LedgerPlaces
from citeledger.storage.remote_state import FileCheckpoint, retraction_watch_files
from resolvers.errors import CiteledgerError
from resolvers.model import Reference
from resolvers.redaction import redact
from resolvers.remote.arxiv import ArxivClient
from resolvers.remote.crossref import CrossrefClient
from resolvers.remote.facade import make_http_client
from resolvers.remote.guard.session import RemoteSession
from resolvers.remote.retraction_watch import refresh_retraction_watch


def move_to_processed(files: Sequence[Path], processed: str | Path, run_id: str) -> list[Path]:
    """Move resolved inbox files to ``<processed>/<run_id>/``; called only once the run that read
    them is finished, so a crash leaves them in the inbox to be taken again."""
    target = Path(processed) / run_id
    moved = []
    for path in files:
        moved.append(atomic_move(path, target / path.name))
    return moved


# --- which references to re-resolve ------------------------------------------------------------


def write_rerun_input(ledger_dir: LedgerDir, run_id: str, references: Sequence[Reference], suffix: str = "") -> Path:
    """The references a nightly run re-resolves, kept as the run's JSONL input under
    ``<ledger>/_rerun/``: the run's inputs stay auditable and an interrupted run can resume."""
    rows = [{"citing_paper": r.citing_paper, "reference_index": r.reference_index, "raw": r.raw, "source": r.source}
            for r in references]
    return LedgerStore(ledger_dir).write_rerun_input(run_id, rows, suffix)


# --- notices ---------------------------------------------------------------------------------


def changed_notices(ledger_dir: LedgerDir, catalog_dir: CatalogDir, run_id: str,
                    exclude: set[str] | None = None) -> list[dict[str, Any]]:
    """A fresh notice for every currently linked work, and for every cited DOI with no work that
    a notice source lists, whose notice differs from its latest one in the ledger (a new
    retraction, a correction, a source checked for the first time). Works in ``exclude`` (those
    the run itself links or cites, which ``finishing.settle_run`` notices anyway) are skipped."""
    linked, latest, dois = current_links_and_notices(ledger_dir)
    rows = work_notice_rows(catalog_dir, [w for w in linked if w not in (exclude or set())], run_id)
    rows += [r for r in cited_doi_notice_rows(catalog_dir, dois, run_id) if r["work_id"] not in (exclude or set())]
    compare = ("doi", "state", "reason", "standing", "events", "sources_checked")
    return [row for row in rows if (old := latest.get(row["work_id"])) is None
            or not all(_same(row[k], old.get(k)) for k in compare)]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return list(a or []) == list(b or [])
    return a == b


# --- catalog refresh -------------------------------------------------------------------------


@dataclass
class RefreshReport:
    files: list[str] = field(default_factory=list)
    harvested: dict[str, int] = field(default_factory=dict)
    works_before: int = 0
    works_after: int = 0
    generation: str | None = None
    errors: list[str] = field(default_factory=list)
    shards: int | None = None  # the live generation sharded this refresh, as the catalog was (``_keep_shards``)

    @property
    def changed(self) -> bool:
        return bool(self.files)

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "harvested": self.harvested, "works_before": self.works_before,
                "works_after": self.works_after, "added": self.works_after - self.works_before,
                "generation": self.generation, "shards": self.shards, "errors": self.errors}


@dataclass
class _Harvest:
    """What one harvest collected: the files for the catalog build, records per service, errors."""

    state_dir: Path
    today: date
    files: list[Path] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def spool(self, name: str, records: Iterable[Any]) -> None:
        """Stream a service's records to ``harvest/<name>-<day>.jsonl`` (staged, then renamed)."""
        out = self.state_dir / "harvest" / f"{name}-{self.today.isoformat()}.jsonl"
        written = atomic_write_lines(out, (json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        self.counts[name] = written
        if written:
            self.files.append(out)

    def attempt(self, what: str, step: Callable[[], None], close: Callable[[], None]) -> None:
        """Run one service's step; a failure is reported and the other services still load."""
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - reported; the other sources still refresh
            self.errors.append(redact(f"{what}: {type(exc).__name__}: {exc}"))
        finally:
            close()


def harvest_remote(config: Any, state_dir: str | Path, today: date | None = None
                   ) -> tuple[list[Path], dict[str, int], list[str]]:
    """Fetch what the configured services published since the last harvest into JSONL files the
    catalog build reads. arXiv (OAI-PMH) and Crossref (cursor) keep checkpoints under
    ``state_dir``, so a failed harvest resumes where it stopped; the first harvest starts from
    yesterday, never from the beginning of the archive. Retraction Watch is downloaded only when
    the server says it changed. A service that fails is reported, and the others still load. The
    harvest's remote time, all services together, is bounded by ``remote.max_run_seconds``."""
    day = today or datetime.now(timezone.utc).date()
    run = _Harvest(Path(state_dir), day)
    since, until = (day - timedelta(days=1)).isoformat(), day.isoformat()
    marks_path = run.state_dir / "refresh.json"
    marks = FileCheckpoint(marks_path).read()
    settings = config.remote_settings()
    session = RemoteSession(settings.max_run_seconds)  # the harvest's remote time, all services, bounded as a run's
    if "arxiv" in config.remote:
        arxiv = ArxivClient(make_http_client(settings, "arxiv", session=session), config.endpoints.arxiv_api,
                            config.endpoints.arxiv_oai)
        checkpoint = run.state_dir / "arxiv_oai.json"
        run.attempt("arxiv harvest", lambda: run.spool("arxiv", arxiv.harvest(
            from_date=None if FileCheckpoint(checkpoint).read().get("last_completed_until") else since,
            until_date=until, checkpoint=FileCheckpoint(checkpoint))), arxiv.http.close)
    if "crossref" in config.remote:
        crossref = CrossrefClient(make_http_client(settings, "crossref", session=session),
                                  config.endpoints.crossref_api, config.mailto)

        def crossref_step() -> None:
            run.spool("crossref", crossref.harvest(marks.get("crossref_until") or since, until_index_date=until,
                                                   checkpoint=FileCheckpoint(run.state_dir / "crossref_cursor.json")))
            marks["crossref_until"] = until

        run.attempt("crossref harvest", crossref_step, crossref.http.close)
    if "retraction_watch" in config.remote or "crossref" in config.remote:
        http = make_http_client(settings, "retraction_watch", session=session)

        def retraction_watch_step() -> None:
            result = refresh_retraction_watch(http, config.endpoints.retraction_watch_csv,
                                              *retraction_watch_files(run.state_dir / "retraction_watch.csv"))
            run.counts["retraction_watch"] = int(result.changed)
            if result.changed:
                run.files.append(result.path)

        run.attempt("retraction watch download", retraction_watch_step, http.close)
    FileCheckpoint(marks_path).write(marks)
    return run.files, run.counts, run.errors


def ingest_new_sources(catalog_dir: CatalogDir, catalog_inbox: str | Path | None = None, remote: bool = False,
                    config: Any = None) -> RefreshReport:
    """Add source files dropped in ``catalog_inbox`` (moved to ``<catalog_inbox>/processed/``
    once built in) and, with ``remote``, what the configured services published since the last
    refresh. Off by default: no inbox and no remote means no change and no network. A catalog
    that was sharded (``sharding.sharding_of``) gets its live generation sharded as it was when it
    lacks shards (a new one, or one a failed refresh left): as many shards, the tasks where they
    ran (this process, or the Dask cluster ``catalog build --shards N --task-runner dask`` named).
    A sharding that fails is a refresh error: the new generation stays live without shards (same
    answers), and the next refresh tries again."""
    report = RefreshReport()
    cat = CatalogStore(catalog_dir)
    report.works_before = int(cat.manifest().get("works", 0)) if cat.exists() else 0
    dropped = inbox_files(catalog_inbox, CATALOG_SUFFIXES) if catalog_inbox else []
    harvested: list[Path] = []
    if remote:
        config = config or load_config()
        harvested, report.harvested, report.errors = harvest_remote(config, config.state_dir)
    sharding = _sharding(catalog_dir, report)  # (before the build: an old catalog's count is its live generation's)
    files = [*dropped, *harvested]
    if files:
        built = cat.build(files)
        report.generation = built.generation
        report.files = [str(p) for p in files]
        if dropped and catalog_inbox:  # (files are dropped only from an inbox)
            processed = Path(catalog_inbox) / "processed" / built.generation
            for path in dropped:
                atomic_move(path, processed / path.name)
    if sharding is not None:
        _keep_shards(catalog_dir, sharding, report)
    report.works_after = int(cat.manifest().get("works", 0)) if cat.exists() else 0
    return report


def _sharding(catalog_dir: CatalogDir, report: RefreshReport) -> dict[str, Any] | None:
    """``sharding.sharding_of`` an existing catalog; a broken sharding file is a refresh error."""
    try:
        return catalog_sharding.sharding_of(catalog_dir) if CatalogStore(catalog_dir).exists() else None
    except CiteledgerError as exc:
        report.errors.append(f"sharding: {exc}")
        return None


def _keep_shards(catalog_dir: CatalogDir, sharding: dict[str, Any], report: RefreshReport) -> None:
    """Shard the live generation as the catalog was sharded, when it lacks current shards."""
    try:
        live = CatalogStore(catalog_dir).current()
        if live is None or shards.stamp_of(live) is not None:
            return
        report.shards = catalog_sharding.reshard(catalog_dir, sharding)["n_shards"]
    except (CiteledgerError, OSError) as exc:  # (the catalog stays as built: the same answers, no shards)
        report.errors.append(f"sharding the catalog's live generation: {exc}")


# --- one nightly run -------------------------------------------------------------------------


@dataclass
class NightlyWork:
    """What tonight's run will do, decided before any batch runs."""

    plan: RunPlan | None  # None: nothing to do
    new_files: list[Path] = field(default_factory=list)
    already_processed: dict[str, str] = field(default_factory=dict)  # inbox file -> the run that read it
    rerun: RerunSelection = field(default_factory=RerunSelection)
    pending_notices: int = 0


def nightly_folders(inbox: str | Path, processed: str | Path, catalog_dir: CatalogDir, ledger_dir: LedgerDir,
                    catalog_inbox: str | Path | None, site: str | Path | None = None) -> NightlyFolders:
    """The night's folders (``site``: the static site's, when the night brings one up to date),
    confined under the configured ``nightly.roots`` and side by side (``folders.confined_folders``):
    checked before a night reads or moves anything."""
    return confined_folders(inbox, processed, catalog_dir, ledger_dir, catalog_inbox, load_config().nightly_roots,
                            site)


def new_nightly_run_id() -> str:
    return "nightly-" + new_run_id().removeprefix("run-")


def resume_nightly(intake: Intake, inbox: str | Path, catalog_dir: CatalogDir, ledger_dir: LedgerDir,
                   batch_size: int = DEFAULT_BATCH_SIZE, limits: Any = None, remote: bool = False
                   ) -> NightlyWork | None:
    """The latest interrupted nightly run whose inputs and catalog are unchanged, planned again
    (its finished batches are skipped); None when there is none."""
    catalog = get_catalog(catalog_dir)
    for manifest in reversed(LedgerStore(ledger_dir).unfinished_runs("nightly-")):
        paths = [Path(i["path"]) for i in manifest.inputs]
        if manifest.catalog_fingerprint == catalog.fingerprint and all(
                p.exists() and input_sha256(p) == i["sha256"] for p, i in zip(paths, manifest.inputs)):
            paths = given_inputs(paths, Path(inbox))  # a directory's papers: the directory, as first given
            plan = plan_run(paths, catalog_dir, ledger_dir, run_id=manifest.run_id,
                            batch_size=manifest.options.get("batch_size", batch_size),
                            limits=limits or InputLimits(), citing_paper=manifest.options.get("citing_paper"),
                            remote=manifest.options.get("remote", remote))
            inbox_dir = Path(inbox).resolve()
            work = NightlyWork(plan=plan, new_files=[p for p in paths if p.resolve().parent == inbox_dir],
                               already_processed=intake.already_processed)
            work.rerun.why["resumed"] = plan.references
            return work
    return None


def select_nightly(intake: Intake, catalog_dir: CatalogDir, ledger_dir: LedgerDir, remote: bool = False,
                   batch_size: int = DEFAULT_BATCH_SIZE, limits: Any = None,
                   run_id: str | None = None) -> NightlyWork:
    """Tonight's new run: the new inbox files' references, those a grown catalog could change
    (``select_rerun``), the notices that changed; no plan when there is nothing to do."""
    limits = limits or InputLimits()
    get_catalog(catalog_dir)  # a missing or broken catalog is an error before anything is read
    work = NightlyWork(plan=None, already_processed=intake.already_processed)
    new = intake.new_files
    citing = {str(p): c for p in new if (c := citing_paper_of(p))}
    with pdf_service(None, ledger_dir, remote):  # GROBID's answers kept, so the plan's read asks nothing
        new_refs, _ = read_inputs(new, limits, citing)
    work.rerun = select_rerun(ledger_dir, catalog_dir, remote, {(r.citing_paper, r.reference_index) for r in new_refs})
    work.pending_notices = len(changed_notices(ledger_dir, catalog_dir, "pending"))
    if not new and not work.rerun.references and not work.pending_notices:
        return work
    run_id = run_id or new_nightly_run_id()
    inputs, search = rerun_inputs(ledger_dir, run_id, work.rerun, remote)
    work.new_files = list(new)
    work.plan = plan_run([*new, *inputs], catalog_dir, ledger_dir, run_id=run_id, batch_size=batch_size,
                         limits=limits, citing_paper=citing, remote=remote, search=search)
    return work


def prepare_nightly(inbox: str | Path, catalog_dir: CatalogDir, ledger_dir: LedgerDir, remote: bool = False,
                    batch_size: int = DEFAULT_BATCH_SIZE, limits: Any = None,
                    run_id: str | None = None) -> NightlyWork:
    """Decide tonight's run (``take_inbox``, then ``resume_nightly`` or ``select_nightly``):
    resumes an interrupted nightly run when its inputs and catalog are unchanged. An inbox file
    whose exact bytes a finished run already read is not read again (only moved)."""
    intake = take_inbox(inbox, ledger_dir)
    resumed = resume_nightly(intake, inbox, catalog_dir, ledger_dir, batch_size, limits, remote)
    if resumed is not None:
        return resumed
    return select_nightly(intake, catalog_dir, ledger_dir, remote, batch_size, limits, run_id)


def rerun_inputs(ledger_dir: LedgerDir, run_id: str, rerun: RerunSelection, remote: bool
                 ) -> tuple[list[Path], dict[str, Any] | None]:
    """The re-run input files and, with remote on, the run's search scope: the night's request
    budget (``search.nightly_request_budget``) and no search for the local re-runs (they were
    searched when new; a reference a service could not answer is searched again)."""
    local, retry = rerun.split()
    inputs: list[Path] = []
    skip: list[str] = []
    if local:
        inputs.append(write_rerun_input(ledger_dir, run_id, local))
        skip.append(str(inputs[-1]))
    if retry:
        inputs.append(write_rerun_input(ledger_dir, run_id, retry, suffix="-retry"))
    if not remote:
        return inputs, None
    return inputs, {"budget": load_config().search.nightly_request_budget, "skip_files": skip}


@dataclass(frozen=True)
class NightlySummary:
    """What a nightly run did: the resolve run's summary (``None`` when there was nothing to do)
    and the nightly steps around it."""

    run: RunSummary | None
    files: list[str] = field(default_factory=list)  # inbox files moved to processed
    rejected: list[str] = field(default_factory=list)  # inbox files nothing could be read from, moved to rejected
    already_processed: dict[str, str] = field(default_factory=dict)  # inbox file -> the run that read it
    rerun: dict[str, int] = field(default_factory=dict)  # why references were re-resolved -> count
    notices_changed: int = 0
    papers: list[str] = field(default_factory=list)  # papers whose records changed
    refresh: dict[str, Any] | None = None  # the catalog refresh's report, when there was one

    @property
    def changed(self) -> bool:
        return self.run is not None

    @property
    def run_id(self) -> str | None:
        return self.run.run_id if self.run else None

    def with_records(self, records: int) -> NightlySummary:
        assert self.run is not None
        return dataclasses.replace(self, run=self.run.with_records(records))

    def as_dict(self) -> dict[str, Any]:
        """JSON for the flow's result: the run's keys, then the nightly's own."""
        out = self.run.as_dict() if self.run else {"run_id": None, "references": 0, "rejects": 0,
                                                     "transitions": 0, "states": {}}
        out.update(changed=self.changed, files=self.files, rejected=self.rejected,
                   already_processed=self.already_processed,
                   rerun=self.rerun, notices_changed=self.notices_changed, papers=self.papers)
        if self.refresh is not None:
            out["refresh"] = self.refresh
        return out


def nightly_notices(work: NightlyWork) -> list[dict[str, Any]]:
    """After the batches: the notices of works earlier runs link or cite that changed (those
    this run links or cites are noticed by ``finishing.settle_run`` itself)."""
    plan = work.plan
    assert plan is not None
    ledger = plan.ledger
    own = set(ledger.linked_work_ids(plan.run_id)) | {f"doi:{d}" for d in ledger.unlinked_cited_dois(plan.run_id)}
    return changed_notices(plan.ledger, plan.catalog, plan.run_id, exclude=own)


def changed_papers(work: NightlyWork, notices: list[dict[str, Any]]) -> list[str]:
    """The papers whose records the night changed: those the run touched and those citing a work
    whose notice changed (asked once the works remote services fetched joined the catalog)."""
    plan = work.plan
    assert plan is not None
    papers = set(papers_touched(plan.run_id, plan.ledger, plan.catalog))
    papers.update(citing_papers_of_works(plan.ledger, [n["work_id"] for n in notices]))
    return sorted(papers)


def settle_nightly(work: NightlyWork, notices: list[dict[str, Any]], timings: dict[str, float] | None = None
                   ) -> RunSummary:
    """The night's run settled before its records (``finishing.settle_run``, with the changed
    ``notices`` of works earlier runs link)."""
    assert work.plan is not None
    return settle_run(work.plan, timings=timings, recheck_notices=notices)


def close_nightly(work: NightlyWork, processed: str | Path, notices: list[dict[str, Any]], summary: RunSummary,
                  papers: list[str], records: int | None = None, flow_run_id: str | None = None) -> NightlySummary:
    """After the records (``records``: how many were written, None: none asked): the run row (with
    the changed ``notices``), which marks the night finished. Then the inbox files move to
    ``processed`` (only now, their observations being written), those the run rejected whole (an
    archive that does not open, a PDF without text...) to ``rejected_folder``; an inbox entry the
    run read nothing from (a folder of notes) stays where it is."""
    plan = work.plan
    assert plan is not None
    summary = close_run(plan, summary, "nightly", len(notices), flow_run_id)
    unread = {r.file for r in plan.rejects if read_later(r.reason)}  # stay in the inbox for the next night
    whole = {r.file for r in plan.rejects if r.line is None} - unread  # a reject of the file itself
    read = entries_read(work.new_files, [i["path"] for i in plan.inputs])  # (a folder of notes: nothing read)
    set_aside = move_to_processed([p for p in read if str(p) in whole], rejected_folder(processed), plan.run_id)
    moved = move_to_processed([p for p in read if str(p) not in unread | whole], processed, plan.run_id)
    for path, run_id in work.already_processed.items():
        move_to_processed([Path(path)], processed, run_id)
    night = NightlySummary(summary, files=[str(p) for p in moved], rejected=[str(p) for p in set_aside],
                           already_processed=work.already_processed,
                           rerun=dict(work.rerun.why), notices_changed=len(notices), papers=papers)
    return night.with_records(records) if records is not None and papers else night


def finish_nightly(work: NightlyWork, processed: str | Path, notices: list[dict[str, Any]],
                   timings: dict[str, float] | None = None, flow_run_id: str | None = None,
                   records: Callable[[list[str]], int] | None = None) -> NightlySummary:
    """The night finished in one call: ``settle_nightly``, the records of the ``changed_papers``
    (``records``: the writer, given the papers; None: none written), ``close_nightly``. The records
    come before the run row: the row marks the night finished, so a night stopped while writing
    records has none and is resumed. (The nightly flow makes these calls itself, its records a task.)"""
    summary = settle_nightly(work, notices, timings)
    papers = changed_papers(work, notices)
    written = (records(papers) if papers else 0) if records is not None else None
    return close_nightly(work, processed, notices, summary, papers, written, flow_run_id)


def complete_nightly(work: NightlyWork, processed: str | Path, timings: dict[str, float] | None = None
                     ) -> NightlySummary:
    """After the batches: re-check notices (``nightly_notices``), then ``finish_nightly``."""
    return finish_nightly(work, processed, nightly_notices(work), timings)


def idle_nightly(work: NightlyWork, ledger_dir: LedgerDir, catalog_dir: CatalogDir, processed: str | Path,
                 catalog_changed: bool) -> NightlySummary:
    """Nothing to resolve and no notice changed: write nothing to the ledger (no observation, no
    run row). Files already read by a finished run are moved out of the inbox, and the DuckDB
    file is rewritten if the catalog moved to a new generation (its works view names the file)."""
    for path, run_id in work.already_processed.items():
        move_to_processed([Path(path)], processed, run_id)
    places = LedgerPlaces.of(ledger_dir)
    if catalog_changed or not places.views.exists():
        if (places / "observations").exists():
            write_ledger_database(ledger_dir, catalog_dir)
    return NightlySummary(None, already_processed=work.already_processed)
