"""Secrets are never printed or stored: a URL's user info (``http://user:password@host``) and its
secret parameters (``api_key``, ``token``, ``key``, ``password``; ``mailto`` when the contact is
configured private) are hidden in ``config show``, one-line errors, logs, the rejects table, the
evidence of ``unavailable`` references and the records; a rejected input line is stored cut to a
bounded length, its control characters made visible."""
from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest
from remote_server import server  # noqa: F401
from werkzeug import Response

from citeledger.cli import main
from citeledger.engine import process_cache
from citeledger.inputs.pdf_papers import forget_clients
from citeledger.ledger.query import run_query
from resolvers.redaction import redact

PASSWORD = "hunter2-secret"
TOKEN = "tok-3f9a-secret"
CONTACT = "someone@private.example"
PDF = Path(__file__).parent / "fixtures" / "grobid" / "N18-3011.pdf"


def no_secret(text: str) -> None:
    for secret in (PASSWORD, TOKEN, CONTACT, CONTACT.replace("@", "%40")):
        assert secret not in text, (secret, text[:2000])


@pytest.mark.parametrize("url, shown", [
    (f"http://user:{PASSWORD}@grobid.example:8070/api", "http://***@grobid.example:8070/api"),
    (f"https://api.example.org/works?api_key={TOKEN}&rows=2", "https://api.example.org/works?api_key=***&rows=2"),
    (f"https://api.example.org/x?Token={TOKEN}", "https://api.example.org/x?Token=***"),
    (f"see https://x.example/?password={PASSWORD}).", "see https://x.example/?password=***)."),
    ("https://api.crossref.org/works/10.1038/nature?mailto=a%40b.org", "https://api.crossref.org/works/10.1038/nature?mailto=a%40b.org"),
])
def test_urls_lose_their_user_info_and_secret_parameters(url, shown):
    assert redact(url) == shown


def test_config_show_hides_credentials_in_endpoints_and_a_private_contact(tmp_path, monkeypatch, capsys):
    config = tmp_path / "citeledger.toml"
    config.write_text(f"""[remote]
mailto = "{CONTACT}"
private_mailto = true
[endpoints]
grobid = "http://user:{PASSWORD}@127.0.0.1:8070"
openalex_api = "https://api.openalex.org/?api_key={TOKEN}"
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    assert main(["config", "show"]) == 0
    table = capsys.readouterr().out
    assert main(["config", "show", "--format", "json"]) == 0
    shown = capsys.readouterr().out
    for out in (table, shown):
        no_secret(out)
    values = {s["key"]: s["value"] for s in json.loads(shown)["settings"]}
    assert values["endpoints.grobid"] == "http://***@127.0.0.1:8070" and values["remote.mailto"] == "***"


def test_a_setting_refused_is_one_line_without_the_password(tmp_path, monkeypatch, capsys):
    config = tmp_path / "citeledger.toml"
    config.write_text(f'[endpoints]\ncrossref_api = "ftp://user:{PASSWORD}@example.org"\n')
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    assert main(["config", "show"]) == 2
    err = capsys.readouterr().err
    assert "endpoints.crossref_api" in err and "ftp://***@example.org" in err
    no_secret(err)


def test_a_grobid_password_never_reaches_the_rejects_the_summary_or_the_log(tmp_path, fixture_catalog, capsys,
                                                                              caplog):
    """GROBID at an address nobody answers (a closed port): the PDF is a reject naming the service."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pdf = tmp_path / "2101.00002.pdf"
    shutil.copy(PDF, pdf)
    forget_clients()
    try:
        main(["resolve", str(pdf), "--grobid", f"http://user:{PASSWORD}@127.0.0.1:{port}", "--catalog",
              str(fixture_catalog), "--ledger", str(tmp_path / "ledger"), "--run-id", "r"])
    finally:
        forget_clients()
    out = capsys.readouterr()
    rejects = run_query("select * from rejects", tmp_path / "ledger", fixture_catalog).fetchall()
    assert rejects and any("127.0.0.1" in str(row) for row in rejects), rejects
    for text in (out.out, out.err, caplog.text, json.dumps(rejects, default=str)):
        no_secret(text)


def _secretive_world(server, tmp_path, fixture_catalog, monkeypatch) -> tuple[Path, Path, Path]:
    """Crossref at the local server through an endpoint with a password, answering 503 to every
    request (each request tried twice: a run of 5xx, so the circuit opens and the summary names
    why, with the URL), the contact configured private: the settings file, the catalog, the
    references (one DOI, so a record is written for its paper)."""
    server.expect_request(re.compile("^/.*")).respond_with_handler(lambda request: Response("busy", status=503))
    base = server.url_for("").rstrip("/").replace("http://", f"http://user:{PASSWORD}@")
    config = tmp_path / "citeledger.toml"
    config.write_text(f"""[remote]
enabled = ["crossref"]
mailto = "{CONTACT}"
private_mailto = true
[remote.crossref]
min_interval_seconds = 0.0
retries = 1
backoff_base_seconds = 0.0
[endpoints]
crossref_api = "{base}"
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": "secretive", "reference_index": 1,
                                "raw": "Doe J. A thing. J. 2020. doi:10.5555/secret.1"}) + "\n")
    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    return refs, catalog, tmp_path / "ledger"


def no_secret_in_ledger(ledger: Path) -> None:
    """Every file of the ledger, the records' pages included."""
    files = [p for p in ledger.rglob("*") if p.is_file() and p.suffix in (".json", ".txt", ".html", ".md", ".parquet")]
    assert any(p.suffix == ".parquet" for p in files) and any("records" in p.parts for p in files), files
    for path in files:
        no_secret(path.read_bytes().decode("utf-8", "replace"))


def test_remote_evidence_logs_and_records_hide_the_endpoints_credentials_and_a_private_contact(
        server, tmp_path, fixture_catalog, monkeypatch, capsys, caplog):
    """The run's output, its logs (httpx's line of every request too, at INFO), the evidence,
    ``runs`` and every file of the ledger, records included."""
    refs, catalog, ledger = _secretive_world(server, tmp_path, fixture_catalog, monkeypatch)
    caplog.set_level(logging.INFO)
    process_cache.clear_caches()
    try:
        assert main(["resolve", str(refs), "--remote", "--catalog", str(catalog), "--ledger", str(ledger),
                     "--run-id", "r"]) == 0
    finally:
        process_cache.forget_remote()
        process_cache.clear_caches()
    out = capsys.readouterr()
    assert "crossref: circuit open" in out.out and "127.0.0.1" in out.out  # the URL named, its password hidden
    no_secret(out.out + out.err)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name != "werkzeug")  # (not the test's server)
    assert "HTTP Request: GET http://***@127.0.0.1" in logged, logged[-2000:]
    no_secret(logged)
    (status, evidence), = run_query("select status, evidence from observations", ledger, catalog).fetchall()
    assert status == "unavailable" and "127.0.0.1" in evidence
    no_secret(evidence)
    [(remote,)] = run_query("select remote from runs", ledger, catalog).fetchall()
    assert "127.0.0.1" in remote
    no_secret(remote)
    no_secret_in_ledger(ledger)


@pytest.mark.flow
def test_the_flows_artifacts_and_logs_hide_the_endpoints_credentials_and_a_private_contact(
        server, tmp_path, fixture_catalog, monkeypatch):
    """The same run as a flow run: its summary artifact names the circuit and why (the URL), its
    logs and the records it wrote, all without the password or the contact."""
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    from flows.resolve import resolve_references

    refs, catalog, ledger = _secretive_world(server, tmp_path, fixture_catalog, monkeypatch)
    for name in ("prefect.flow_runs", "prefect.task_runs", "httpx", "httpcore"):  # the run's logs, as an operator's
        monkeypatch.setattr(logging.getLogger(name), "level", logging.INFO)
    process_cache.clear_caches()
    try:
        state = resolve_references(inputs=[str(refs)], catalog=str(catalog), ledger=str(ledger), run_id="flown",
                                   remote=True, return_state=True)
    finally:
        process_cache.forget_remote()
        process_cache.clear_caches()
    assert state.is_completed()
    APILogHandler().flush()  # the flow run's logs sent to the API before they are read
    flow_run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    shown = "\n".join(str(a.data) for a in artifacts)
    assert "crossref: circuit open" in shown and "127.0.0.1" in shown, shown
    no_secret(shown)
    assert logs
    no_secret("\n".join(log.message for log in logs))
    no_secret_in_ledger(ledger)


def test_a_rejected_line_is_stored_cut_with_its_controls_visible(tmp_path, fixture_catalog):
    refs = tmp_path / "refs.jsonl"
    refs.write_bytes(b'{"citing_paper": "p", "raw": "' + b"x" * 5000 + b'\x1b[31m\n'
                     + b"not json \x07 at all " + b"y" * 3000 + b"\n")
    assert main(["resolve", str(refs), "--catalog", str(fixture_catalog), "--ledger", str(tmp_path / "ledger"),
                 "--run-id", "r"]) == 3  # nothing could be read
    rows = run_query("select reason, excerpt from rejects order by line", tmp_path / "ledger",
                     fixture_catalog).fetchall()
    assert len(rows) == 2
    for reason, excerpt in rows:
        for text in (reason, excerpt):
            assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), text
        assert len(excerpt) <= 200 and len(reason) <= 500
    assert "\\x07" in rows[1][1]
