"""The command line's arguments: the parser of every subcommand (``build_parser``), what each is
made of (the subcommand maker ``subcommand``: help showing each default, ``--debug``,
``--config``; the one ``--format`` vocabulary; the folder options ``--ledger`` and ``--catalog``,
their settings when not given; the task runner, flow, shard and sign options), and what the parsed
arguments set before a command runs (the settings file, the folders). Each subcommand's parser
names the function that runs it, in the modules of the commands; none of them is called here.

``--format``: ``text`` is the form for people (a page, a table), ``json`` for programs, then
``csv``, ``html`` and ``pith`` where a command has them. Earlier names are still taken: ``ledger``
and ``table`` mean ``text``, ``citeledger`` (``record_commands``) means ``json``, as the outside contract
names ``record --format ledger``."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from citeledger.cli.commands import cmd_catalog_build, cmd_eval, cmd_nightly, cmd_refresh, cmd_resolve
from citeledger.cli.config_show import cmd_config_show
from citeledger.cli.keys import cmd_keys_init, cmd_keys_show, cmd_verify
from citeledger.cli.ledger_file import cmd_relink
from citeledger.cli.pith import cmd_compare, cmd_import_pith
from citeledger.cli.read_commands import cmd_catalog_info, cmd_query, cmd_runs
from citeledger.cli.record_commands import cmd_record, cmd_records
from citeledger.cli.site import cmd_site
from citeledger.options import DEFAULT_CATALOG, DEFAULT_LEDGER, non_negative_int, positive_int

FROM_SETTINGS = None  # --ledger and --catalog not given: the ``ledger`` and ``catalog`` settings (apply_place_settings)
# the folder settings a command takes as --ledger / --catalog, with their built-in defaults
PLACE_SETTINGS = {"ledger": DEFAULT_LEDGER, "catalog": DEFAULT_CATALOG}
FORMERLY = {"ledger": "text", "table": "text", "citeledger": "json"}


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (``citeledger resolve: error: ...``), exit 2; ``--help`` shows usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless its help already says it or it is an off switch."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        place = action.option_strings and action.dest in PLACE_SETTINGS  # an option, not the `catalog` command
        if place and action.default is None and "(default" not in (action.help or ""):
            return f"{action.help} (default: the `{action.dest}` setting; {PLACE_SETTINGS[action.dest]} unless set)"
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (``importlib.metadata`` is
    not loaded by every command)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"citeledger {citeledger_version()}")
        parser.exit()


def citeledger_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("citeledger")
    except PackageNotFoundError:  # a source tree on PYTHONPATH, not installed
        return "0+unknown"


def config_option(p: argparse.ArgumentParser) -> None:
    """``--config FILE`` before or after the command (docs/reference/configuration.md, "Precedence")."""
    p.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                   help="the settings file (default: $CITELEDGER_CONFIG, else ./citeledger.toml if present)")


def subcommand(sub: Any, name: str, help: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose help shows every default, with --debug and --config."""
    p = sub.add_parser(name, help=help, description=kwargs.pop("description", help),
                       formatter_class=kwargs.pop("formatter_class", HelpFormatter), **kwargs)
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of an internal error")
    config_option(p)
    return p


def canonical(name: str) -> str:
    return FORMERLY.get(name, name)


def format_option(p: argparse.ArgumentParser, choices: list[str], default: str, help: str,
                  formerly: tuple[str, ...] = ()) -> None:
    """``--format`` among ``choices``; ``formerly``: the command's earlier names, said in its help."""
    olds = [f"{old} for {FORMERLY[old]}" for old in formerly]
    p.add_argument("--format", type=canonical, choices=choices, default=default,
                   help=f"{help} (default {default}; also taken: {', '.join(olds)})" if olds else help)


def store_options(parser: argparse.ArgumentParser, ledger: bool = True) -> None:
    if ledger:
        parser.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder")
    parser.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")


def runner_options(p: argparse.ArgumentParser) -> None:
    from citeledger.run.task_runners import TASK_RUNNERS

    p.add_argument("--task-runner", choices=TASK_RUNNERS, default="auto",
                   help="auto: processes for 20,000 references or more on 2+ cores, else threads; "
                        "threads (one process), processes (a pool on this machine) or dask (a cluster, a flow run)")
    p.add_argument("--dask-address", help="scheduler of an existing Dask cluster (default: a local one)")
    p.add_argument("--dask-workers", type=positive_int, default=2,
                   help="worker processes of --task-runner processes, or of a local Dask cluster")


def flow_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--flow", action="store_true",
                   help="run as a Prefect flow run even without PREFECT_API_URL (starts a temporary Prefect "
                        "server); with PREFECT_API_URL set it is always a flow run reported to that API")


def shard_options(build: argparse.ArgumentParser) -> None:
    """The shard options of ``catalog build``: how many, and where the shard tasks run."""
    build.add_argument("--shards", type=positive_int, help="also split the fuzzy index by work into this many "
                       "shards, one task each (docs/operator/scale.md); runs then retrieve from the shards, "
                       "same observations")
    build.add_argument("--task-runner", choices=["threads", "dask"], default="threads",
                       help="where the shard tasks run: threads (this process, one after another) or dask (a cluster)")
    build.add_argument("--dask-address", help="scheduler of an existing Dask cluster (default: a local one)")
    build.add_argument("--dask-workers", type=positive_int, default=2,
                       help="worker processes of the local Dask cluster")


def apply_config_option(args: argparse.Namespace) -> None:
    """``--config FILE`` given: every settings load of this command (and its processes) reads it."""
    if getattr(args, "config", None):
        from citeledger.config import use_cli_config

        use_cli_config(args.config)


def apply_place_settings(args: argparse.Namespace) -> None:
    """``--ledger`` / ``--catalog`` not given: the ``ledger`` / ``catalog`` setting (settings file,
    ``CITELEDGER_LEDGER`` / ``CITELEDGER_CATALOG``, else the default), so every command finds the same
    folders from any working directory."""
    wanted = [key for key in PLACE_SETTINGS if getattr(args, key, "") is None]
    if wanted:
        from citeledger.config import load_config

        config = load_config()
        for key in wanted:
            setattr(args, key, getattr(config, key))


_VIEWS_EPILOG = "(the views and their columns)"


class _QueryHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """``query --help`` lists the views with their columns, generated from the ledger's schemas
    only when help is asked for (building it needs duckdb, which ``--help`` alone must not load)."""

    def add_text(self, text: str | None) -> None:
        if text == _VIEWS_EPILOG:
            from citeledger.ledger.query import views_help

            text = views_help()
        super().add_text(text)


def _catalog_parsers(sub: Any) -> None:
    catalog = subcommand(sub, "catalog", "manage the local catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True)
    build = subcommand(catalog_sub, "build", "add works and notices from source files to the catalog")
    build.add_argument("files", nargs="+", type=Path, help="source files or folders (works JSONL, arXiv snapshot, "
                       "Crossref, Retraction Watch CSV, OpenAlex, DBLP, arXiv OAI-PMH); the format is recognised "
                       "by content")
    build.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder (created if missing)")
    build.add_argument("--format", choices=["works_jsonl", "arxiv_snapshot", "crossref", "retraction_watch_csv",
                                            "doi_nature_csv", "openalex", "dblp", "arxiv_oai"],
                       help="force a format where the content does not say (default: recognised by content; "
                            "a file whose content is another format is an error)")
    shard_options(build)
    build.set_defaults(func=cmd_catalog_build)
    _inspect(catalog_sub, "info", "what a catalog holds: generation, works per source, identifiers, notices",
             "--catalog", FROM_SETTINGS, cmd_catalog_info)


def _inspect(sub: Any, name: str, help: str, folder_option: str, default: str | None, func: Any) -> None:
    """An inspection command (``catalog info``, ``runs``): one folder, a table or JSON."""
    p = subcommand(sub, name, help)
    p.add_argument(folder_option, default=default, help=f"the {folder_option[2:]} folder")
    format_option(p, ["text", "json"], "text", "text (a table) or json", formerly=("table",))
    p.set_defaults(func=func)


def _resolve_parser(sub: Any) -> None:
    resolve = subcommand(sub, "resolve", "resolve reference files into the ledger")
    resolve.add_argument("inputs", nargs="*", type=Path,
                         help="reference files or folders: JSON Lines (.gz), CSV, Parquet, papers (.bbl/.bib/.tex, "
                         "e-prints, PDFs: read by poppler's pdftotext, or by GROBID with --grobid), arXiv:ID (with "
                         "--remote); with --resume: the run's own")
    store_options(resolve)
    resolve.add_argument("--run-id", help="id of this run (default: a new one); the id of an interrupted run "
                         "completes it; warns when the ledger holds unfinished runs this one does not complete")
    resolve.add_argument("--resume", metavar="ID", help="complete the interrupted run ID; an id the ledger "
                         "does not know is an error naming its nearest unfinished runs")
    resolve.add_argument("--citing-paper", help="the citing paper of a paper input (default: a PDF's own arXiv id "
                         "or DOI; an arXiv-style file name; a PDF's file name)")
    resolve.add_argument("--remote", action="store_true", help="use the remote resolvers configured; "
                         "fetch arXiv:ID inputs from arXiv")
    resolve.add_argument("--grobid", metavar="URL", help="read PDF inputs through this GROBID service "
                         "(default: endpoints.grobid of the configuration; none: the built-in reader)")
    resolve.add_argument("--batch-size", type=positive_int, default=None,
                         help="references per batch (default: limits.batch_size of the configuration)")
    runner_options(resolve)
    flow_option(resolve)
    resolve.set_defaults(func=cmd_resolve)


def _ledger_parsers(sub: Any) -> None:
    query = subcommand(sub, "query", "run read-only SQL over the ledger views",
                 description="Run read-only SQL (SELECT, EXPLAIN) over the ledger's views. The query\n"
                             "cannot write: its connection has no file access at all. Time and memory\n"
                             "limits: [query] in the configuration (docs/reference/configuration.md).",
                 epilog=_VIEWS_EPILOG, formatter_class=_QueryHelpFormatter)
    query.add_argument("sql", help="the query, e.g. \"select status, count(*) from current group by 1\"")
    query.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder, needed by every view but works")
    query.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder, needed by the works view")
    format_option(query, ["text", "json", "csv"], "text", "text (a table), json (one object a line) or csv",
                  formerly=("table",))
    query.add_argument("--max-rows", type=positive_int, default=100, help="rows a table shows")
    query.add_argument("--max-bytes", type=positive_int, default=256 << 20,
                       help="json and csv: stop the output (saying so on stderr) before the values of the rows "
                            "given pass this many bytes (default 256 MB)")
    query.set_defaults(func=cmd_query)

    record = subcommand(sub, "record", "the citation record of one paper (arXiv id, DOI or citing_paper id)")
    record.add_argument("id", help="the paper: arXiv:ID, IDvN, 10.48550/arXiv.ID, a DOI or a citing_paper id")
    store_options(record)
    format_option(record, ["text", "json", "html", "pith"], "text",
                  "text (a page), json, html, or pith (Pith's pith.paper-citation-record.v1)", formerly=("ledger",))
    sign_option(record)
    record.add_argument("--page-cap", type=positive_int, default=None, help="list at most this many entries per list "
                        "(default: the records' own cap)")
    record.set_defaults(func=cmd_record)

    recs = subcommand(sub, "records", "write the records of the papers a run touched")
    store_options(recs)
    recs.add_argument("--run-id", help="the run whose papers to write (default: the latest run)")
    recs.add_argument("--papers", nargs="*", help="write these papers' records instead (default: the run's papers)")
    format_option(recs, ["json", "pith"], "json", "json: each paper's record (with its text and html pages); "
                  "pith: also its pith.paper-citation-record.v1 under records/pith/", formerly=("citeledger",))
    sign_option(recs)
    flow_option(recs)
    recs.set_defaults(func=cmd_records)

    _keys_parsers(sub)
    _pith_parsers(sub)

    _config_parsers(sub)
    _ledger_file_parsers(sub)

    _inspect(sub, "runs", "the runs a ledger has: id, started, finished, counts, state",
             "--ledger", FROM_SETTINGS, cmd_runs)


def _flow_parsers(sub: Any) -> None:
    night = subcommand(sub, "nightly", "one nightly run: refresh, inbox, re-resolve, notices (runs the nightly flow)")
    night.add_argument("--inbox", default="data/inbox", help="folder of new reference files")
    night.add_argument("--processed", default="data/processed", help="where inbox files go once resolved")
    night.add_argument("--catalog-inbox", default="data/catalog-inbox", help="folder of new catalog source files")
    store_options(night)
    night.add_argument("--remote", action="store_true", help="harvest and resolve with the configured services")
    night.add_argument("--grobid", metavar="URL", help="read PDFs dropped in the inbox through this GROBID service")
    night.add_argument("--batch-size", type=positive_int, default=None,
                       help="references per batch (default: limits.batch_size of the configuration)")
    night.add_argument("--site", metavar="OUT", default=None,
                       help="then bring the ledger's static site in OUT up to date (default: no site)")
    runner_options(night)
    night.set_defaults(func=cmd_nightly)

    refresh = subcommand(sub, "refresh", "grow the catalog from the catalog inbox (runs the refresh-catalog flow)")
    refresh.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    refresh.add_argument("--catalog-inbox", default="data/catalog-inbox", help="folder of new catalog source files")
    refresh.add_argument("--remote", action="store_true", help="also harvest the configured services")
    refresh.set_defaults(func=cmd_refresh)

    ev = subcommand(sub, "eval", "link precision/recall of the resolution chain on files with gold_doi/gold_arxiv_id")
    ev.add_argument("gold", nargs="*", type=Path, help="JSON Lines (.gz) rows with raw and gold_doi/gold_arxiv_id "
                    "(both null: the reference must not be linked)")
    ev.add_argument("--styles", action="store_true", help="instead of gold files: the catalog's own works rendered in "
                    "real citation styles and degraded; precision/recall per style and degradation (citeproc-py)")
    ev.add_argument("--per-source", type=positive_int, default=50, help="with --styles: works per source format")
    ev.add_argument("--seed", type=int, default=12, help="with --styles: the sample's and degradations' seed")
    ev.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    ev.add_argument("--worst", type=non_negative_int, default=10, help="how many worst errors and misses to print")
    format_option(ev, ["text", "json"], "text", "text (a report) or json (the whole metrics dict)")
    ev.add_argument("--json", dest="format", action="store_const", const="json", default=None,
                    help="the same as --format json")
    ev.set_defaults(func=cmd_eval)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="citeledger", formatter_class=HelpFormatter,
                                     description="Resolve reference strings into an auditable citation ledger.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument("--version", action=VersionAction, nargs=0, help="print the version and exit")
    config_option(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    _catalog_parsers(sub)
    _resolve_parser(sub)
    _ledger_parsers(sub)
    _flow_parsers(sub)
    _site_parser(sub)
    return parser


def _keys_parsers(sub: Any) -> None:
    """The ``keys init`` and ``verify`` subcommands."""
    keys = subcommand(sub, "keys", "the ledger's signing keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    init = subcommand(keys_sub, "init",
                      "make an ed25519 key pair for the ledger: records written afterwards are signed")
    init.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder (keys go to its keys/)")
    init.add_argument("--rotate", action="store_true", help="replace the active key; its public key stays in "
                      "keys/ so records it signed still verify")
    init.set_defaults(func=cmd_keys_init)
    show = subcommand(keys_sub, "show", "the ledger's active signing key: key id, fingerprint, public key")
    show.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder")
    show.add_argument("--format", choices=["text", "json"], default="text",
                      help="json: the public key document in Pith's shape (for verify --pith-key)")
    show.set_defaults(func=cmd_keys_show)
    verify = subcommand(sub, "verify", "check record files' content digest and signature: ok, or what failed (exit 1)")
    verify.add_argument("files", nargs="+", type=Path, help="citation record JSON files")
    verify.add_argument("--ledger", default=FROM_SETTINGS, help="trust the public keys in this ledger's keys/")
    verify.add_argument("--public-key", action="append", default=[], metavar="FILE",
                        help="trust this key instead (a .pub.json, a PEM public or private key, or a keys folder); "
                             "may be repeated")
    verify.add_argument("--pith-key", type=Path, metavar="KEYFILE",
                        help="check Pith receipts (pith_number_record, or a Pith citation record with a receipt) "
                             "with this key document (Pith's published key, or `citeledger keys show --format json`)")
    verify.set_defaults(func=cmd_verify)


def sign_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sign", action="store_true", help="with --format pith: a Pith receipt (ed25519 over the "
                   "context digest) by the ledger's key (`citeledger keys init`)")


def _pith_parsers(sub: Any) -> None:
    """The ``import-pith`` and ``compare`` subcommands."""
    imp = subcommand(sub, "import-pith", "keep Pith records in the ledger (pith_records, pith_observations; never "
               "in current); a file that is not what it says is refused (a reject row, exit 1)")
    imp.add_argument("files", nargs="+", type=Path, help="Pith record JSON files (pith.paper-citation-record.v1 "
                     "or pith_number_record)")
    imp.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder")
    imp.add_argument("--pith-key", type=Path, metavar="KEYFILE",
                     help="also verify each record's receipt with this key document (a record without a "
                          "receipt is still imported; one whose receipt fails is refused)")
    imp.set_defaults(func=cmd_import_pith)
    cmp = subcommand(sub, "compare", "one paper's references: citeledger's current state beside Pith's imported one")
    cmp.add_argument("id", help="the paper: arXiv:ID, IDvN, or the citing_paper id")
    cmp.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder")
    format_option(cmp, ["text", "json"], "text", "text (a table) or json", formerly=("table",))
    cmp.add_argument("--width", type=int, default=160, help="characters a table line shows at most")
    cmp.set_defaults(func=cmd_compare)


def _site_parser(sub: Any) -> None:
    site = subcommand(sub, "site", "write the ledger as a static site to browse (index, papers, cited works, notices)")
    site.add_argument("out", help="the folder of the site: created if missing; made again only where the ledger "
                      "changed; published whole")
    site.add_argument("--ledger", default=FROM_SETTINGS,
                      help="the ledger folder (its record files are read when current)")
    site.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    site.add_argument("--allow-other-files", action="store_true",
                      help="write the site into a folder that holds files citeledger did not write (they are kept; "
                           "without this such a folder is refused)")
    site.add_argument("--workers", type=int, default=None, metavar="N",
                      help="processes making the papers' pages (default: two from 2,000 papers to make)")
    site.set_defaults(func=cmd_site)


def _ledger_file_parsers(sub: Any) -> None:
    """``ledger relink``."""
    ledger = subcommand(sub, "ledger", "the ledger's DuckDB file for the duckdb shell")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True)
    relink = subcommand(ledger_sub, "relink", "write ledger.duckdb again for where the ledger is now and its catalog "
                  "(after moving or copying the ledger without its catalog)")
    relink.add_argument("--ledger", default=None, help="the ledger folder")
    relink.add_argument("--catalog", default=None, help="the catalog its works view reads")
    relink.set_defaults(func=cmd_relink)


def _config_parsers(sub: Any) -> None:
    """``config show``."""
    config = subcommand(sub, "config", "the settings: file, environment and command line")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    show = subcommand(config_sub, "show",
                      "print the effective settings and where each came from (default/file/env/cli)")
    format_option(show, ["text", "json"], "text", "text (a table) or json", formerly=("table",))
    show.set_defaults(func=cmd_config_show)
