#!/usr/bin/env bash
# Integrators' proof, part 2: schemathesis fuzzes a real server from the committed OpenAPI
# document and fails on any 5xx or any response that the document does not describe.
# Bounded: SCHEMATHESIS_MAX_TIME seconds (default 180) and SCHEMATHESIS_MAX_EXAMPLES per operation.
# Env: OPENAPI_DOC, INLET_BIN, INTEGRATORS_VENV, KEEP_WORK=1, SCHEMATHESIS_SEED.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DOC="$(realpath "${OPENAPI_DOC:-$ROOT/openapi/openapi.json}")"
CHECKS="${SCHEMATHESIS_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance}"

echo "== venv ($VENV)"
ensure_venv "$HERE/requirements-schemathesis.txt"
"$VENV/bin/schemathesis" --version

echo "== server"
# The loopback is a trusted proxy here: the hooks give each OAuth request its own client
# address in X-Forwarded-For, so the per-address failure limit (30 a minute, pinned by
# tests/tests/oauth.rs) does not turn every later token request into a 429 and leave the
# logic behind it untested. Webhooks may target loopback: the fixtures and hooks point them at
# a closed local port, so nothing is looked up or sent off the machine.
INLET_SERVE_ARGS="--trusted-proxy 127.0.0.1 --webhook-allow-private" start_server

echo "== fixtures (real ids for every operation)"
"$VENV/bin/python" "$HERE/schemathesis_fixtures.py" "$BASE_URL" "$INLET_ADMIN_EMAIL" \
  "$INLET_ADMIN_API_TOKEN" "$INLET_ADMIN_PASSWORD" "$WORK/schemathesis.toml"

echo "== schemathesis run $DOC on ${INLET_TEST_DATABASE:-SQLite} (checks: $CHECKS)"
basic="$(printf '%s:%s' "$INLET_ADMIN_EMAIL" "$INLET_ADMIN_API_TOKEN" | base64 -w0)"
# revokeApiToken is left out: a generated DELETE could revoke the very token the run
# authenticates with, and every later answer would be a (documented) 401 that tests nothing.
# Run from the temp dir: schemathesis keeps its example database in ./.schemathesis.
# One worker: schemathesis's workers are threads, and on CPython 3.11 (this machine's Python)
# Hypothesis describing a filter lambda runs ast.parse, whose recursion counter is shared between
# threads (CPython gh-106905); two workers crashed a CI run's coverage phase with
# "SystemError: AST constructor recursion depth mismatch". A crash of the tool is not a finding
# about the service, and one worker cannot hit it.
# The config (written by the fixtures) gives each operation ids that exist and fails the run on
# the warning "missing test data"; the report checks below also fail on "schema validation
# mismatch". The document states every single-field rule; the hooks (schemathesis_hooks.py)
# make valid cases follow the rules that span fields too (a facet names a tag of its object
# type, templates name fields, one client authentication method); see README.md beside this
# script.
cd "$WORK"
# Hooks repair positive cases so they also follow the rules that span several fields
# (schemathesis_hooks.py); negative cases go out as generated.
export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks \
  INLET_ST_FIXTURES="$WORK/schemathesis.toml.json"
set +e
timeout --signal=INT --kill-after=30 "$(( ${SCHEMATHESIS_MAX_TIME:-180} + 60 ))" \
"$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml" run "$DOC" \
  --url "$BASE_URL" \
  --header "Authorization: Basic $basic" \
  --checks "$CHECKS" \
  --exclude-operation-id revokeApiToken \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-10}" \
  --max-time "${SCHEMATHESIS_MAX_TIME:-180}" \
  --request-timeout 10 \
  --workers 1 \
  --seed "${SCHEMATHESIS_SEED:-1}" \
  --no-color \
  --report junit --report-dir "$WORK/report" ${SCHEMATHESIS_ARGS:-} 2>&1 | tee "$WORK/schemathesis.out"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "schemathesis failed (exit $status)" >&2
  exit 1
fi

echo "== report checks"
# Reaching the core: no operation starved of data or refused throughout, the write paths
# answered 2xx (read from the server's access log: the span's method and raw path, the status),
# and the JUnit report holds every operation with no failure.
if grep -Eq "Missing test data" "$WORK/schemathesis.out"; then
  echo "schemathesis reported missing test data" >&2
  exit 1
fi
if grep -Eq "Schema validation mismatch" "$WORK/schemathesis.out"; then
  echo "schemathesis reported a schema validation mismatch: valid data refused throughout" >&2
  exit 1
fi
python3 - "$WORK/server.log" "$WORK/report" <<'PY'
import glob, re, sys
import xml.etree.ElementTree as ET
log = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
def ok(method, route):
    # An access line: `request{request_id=... method=PUT}: ... status=201 route=/api/v1/... ms=...`
    pat = re.compile(rf"method={method}}}.*status=2\d\d route={re.escape(route)}( |$)")
    return sum(1 for line in log if pat.search(line))
obj = "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}"
counts = {
    "uploadFile": ok("PUT", obj + "/file"),
    "pushContent": ok("PUT", obj + "/content"),
    "touchObject": ok("PUT", obj),
    "deleteObject": ok("DELETE", obj),
    "closeSync": ok("PUT", "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/syncs/{syncNumber}"),
}
print("2xx answers:", counts)
missing = [op for op, n in counts.items() if n == 0]
assert not missing, f"no 2xx answer for {missing}"
suites = [ET.parse(f).getroot() for f in glob.glob(sys.argv[2] + "/*.xml")]
assert suites, "no JUnit report"
cases = [c for s in suites for c in s.iter("testcase")]
bad = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
print(f"JUnit: {len(cases)} operations, {len(bad)} failing")
assert len(cases) >= 36, f"only {len(cases)} operations in the report"
assert not bad, f"failing: {bad}"
PY
echo "schemathesis: ok"
