#!/usr/bin/env bash
# The nightly deployment as a flow run against a local `prefect server start` (docs/operator/deployments.md).
set -u
cd "$1"
W=$(mktemp -d /tmp/deploy-demo.XXXX)
export PREFECT_HOME=$W/prefect PREFECT_API_URL=http://127.0.0.1:4231/api PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
export CITELEDGER_NIGHTLY_ROOTS=$W  # the night's folders lie in the work folder (nightly.roots)
.venv/bin/prefect server start --host 127.0.0.1 --port 4231 > $W/server.log 2>&1 &
SERVER=$!
for i in $(seq 1 120); do curl -sf $PREFECT_API_URL/health >/dev/null && break; sleep 1; done
echo "server up after ${i}s"
mkdir -p $W/inbox $W/catalog-inbox
.venv/bin/citeledger catalog build --catalog $W/catalog data/sources/* > /dev/null
head -40 data/sample_references.jsonl > $W/inbox/batch-1.jsonl
echo '$ prefect work-pool create citeledger --type process'
.venv/bin/prefect work-pool create citeledger --type process 2>&1 | tail -2
echo '$ prefect --no-prompt deploy --all'
.venv/bin/prefect --no-prompt deploy --all 2>&1 | grep -E "successfully created|Deployment '" | head -8
.venv/bin/prefect worker start --pool citeledger > $W/worker.log 2>&1 &
WORKER=$!
echo "\$ prefect deployment run 'nightly/nightly' -p inbox=... --watch"
timeout 600 .venv/bin/prefect deployment run 'nightly/nightly' -p inbox=$W/inbox -p processed=$W/processed \
  -p catalog=$W/catalog -p catalog_inbox=$W/catalog-inbox -p ledger=$W/ledger -p remote=false --watch 2>&1 | tail -25
echo '$ prefect flow-run ls --limit 3'
.venv/bin/prefect flow-run ls --limit 3 2>&1 | tail -8
echo '$ citeledger runs --ledger LEDGER'
.venv/bin/citeledger runs --ledger $W/ledger
kill $WORKER $SERVER; wait 2>/dev/null
echo "work dir $W"
