# The two set-up commands of the contract: `make run` and `make test`. Both create .venv when it
# is missing and install the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CATALOG ?= data/catalog
LEDGER ?= data/ledger
SOURCES := $(wildcard data/sources/*)

.PHONY: run test venv catalog contract bench clean screenshots docs

venv: $(BIN)/citeledger

$(BIN)/citeledger: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# Build the embedded default catalog only when it is missing or its sources changed.
$(CATALOG)/CURRENT: $(SOURCES) | venv
	$(BIN)/citeledger catalog build --catalog $(CATALOG) $(SOURCES)

catalog: $(CATALOG)/CURRENT

run: catalog
	$(BIN)/citeledger resolve data/sample_references.jsonl --catalog $(CATALOG) --ledger $(LEDGER)
	$(BIN)/citeledger query --catalog $(CATALOG) --ledger $(LEDGER) \
	  "select status, resolver_source, work_id, left(replace(raw, chr(10), ' '), 70) as reference \
	   from current where status in ('verified_exact', 'verified_fuzzy', 'metadata_mismatch') \
	   order by status, citing_paper, reference_index limit 12"
	$(BIN)/citeledger query --catalog $(CATALOG) --ledger $(LEDGER) \
	  "select c.citing_paper, c.reference_index, c.doi, n.standing as notice from current c join notices n using (work_id) \
	   where n.standing <> 'none' and c.status in ('verified_exact', 'verified_fuzzy') order by 1, 2"

# The pictures of the site in docs/images, shot by headless chromium: the site of the sample
# references and of the test fixtures' arXiv e-prints, whose titles are only in their own sources
# (a ledger of their own in build/).
SHOT := chromium --headless --no-sandbox --disable-gpu --hide-scrollbars
SHOTS := build/screenshots
screenshots: catalog
	rm -rf $(SHOTS)
	$(BIN)/citeledger resolve data/sample_references.jsonl tests/fixtures/papers/*.tar.gz \
	  tests/fixtures/papers/1606.03757.tar tests/fixtures/papers/1202.3665.gz --catalog $(CATALOG) --ledger $(SHOTS)/ledger
	$(BIN)/citeledger records --ledger $(SHOTS)/ledger --catalog $(CATALOG)
	$(BIN)/citeledger site $(SHOTS)/site --ledger $(SHOTS)/ledger --catalog $(CATALOG)
	$(SHOT) --window-size=1500,1000 --screenshot=docs/images/site-index.png file://$(CURDIR)/$(SHOTS)/site/index.html
	$(SHOT) --window-size=1200,1300 --screenshot=docs/images/site-paper.png \
	  file://$(CURDIR)/$(SHOTS)/site/papers/citeledger-sample-glutton.html
	$(SHOT) --window-size=1200,1300 --screenshot=docs/images/site-paper-filtered.png \
	  "file://$(CURDIR)/$(SHOTS)/site/papers/citeledger-identifier-sample.html?state=metadata_mismatch"
	$(SHOT) --window-size=1100,700 --screenshot=docs/images/site-work.png \
	  "file://$(CURDIR)/$(SHOTS)/site/works/doi%253A10.1016%252Fj.jclinane.2006.02.005.html"

# Lint and types first (ruff: pyproject.toml and resolvers/ruff.toml; mypy: [tool.mypy] files), then
# the tests on every core (pytest-xdist; each worker process has its own Prefect home and catalogs).
test: venv
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto

# The generated parts of the docs: the CLI reference from the parser, the import graph's picture.
docs: venv
	$(BIN)/python tests/cli_reference.py --write
	$(BIN)/python tests/import_graph.py --write

contract: venv
	$(BIN)/python ../shared/tools/check_contract.py

clean:
	rm -rf $(CATALOG) $(LEDGER)
