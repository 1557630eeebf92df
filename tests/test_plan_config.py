"""Planning a run reads the configuration once (review of session 5: it was read four times per
``plan_run``: input limits, paper bounds, the GROBID client and the arXiv file client)."""
import json

from citeledger import config, pdf_papers, pipeline


def test_plan_run_loads_the_configuration_once(fixture_catalog, tmp_path, monkeypatch):
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return config.load_config(*args, **kwargs)

    monkeypatch.setattr(pipeline, "load_config", counting)
    monkeypatch.setattr(pdf_papers, "load_config", counting)
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "A. Author, A title, 2001."}) + "\n")
    plan = pipeline.plan_run([refs], fixture_catalog, tmp_path / "ledger", remote=True)
    try:
        assert len(calls) == 1 and plan.references == 1
    finally:
        pipeline.abandon_run(plan)
