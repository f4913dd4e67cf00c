#!/usr/bin/env bash
# Integrators' proof, part 1: the committed OpenAPI document is valid, openapi-python-client
# generates a client from it WITHOUT ANY WARNING, and that generated client alone drives a real
# server through a create-source / open / upload / metadata / touch / close run (use_client.py).
# Env: OPENAPI_DOC (default openapi/openapi.json), INLET_BIN, INTEGRATORS_VENV, KEEP_WORK=1.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DOC="$(realpath "${OPENAPI_DOC:-$ROOT/openapi/openapi.json}")"

echo "== venv ($VENV)"
ensure_venv "$HERE/requirements.txt"

echo "== openapi-spec-validator $DOC"
"$VENV/bin/openapi-spec-validator" "$DOC"

echo "== openapi-python-client generate"
# No post hooks: formatting the output (ruff) is not what is being tested, and a missing ruff
# would otherwise be reported as a warning.
printf 'project_name_override: inlet-client\npackage_name_override: inlet_client\npost_hooks: []\n' \
  >"$WORK/generator.yaml"
set +e
"$VENV/bin/openapi-python-client" generate --path "$DOC" --config "$WORK/generator.yaml" \
  --meta setup --output-path "$WORK/client" --fail-on-warning >"$WORK/generate.log" 2>&1
gen_rc=$?
set -e
cat "$WORK/generate.log"
if [ "$gen_rc" -ne 0 ] || grep -qiE 'warning|unable to process|cannot parse|will not be generated|error' "$WORK/generate.log"; then
  echo "FAIL: openapi-python-client reported problems with $DOC (exit $gen_rc); see above" >&2
  exit 1
fi

echo "== install the generated client"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$WORK/client"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$WORK/client"

echo "== server"
# Webhooks may target loopback: use_client.py registers one on a closed local port.
INLET_SERVE_ARGS="--webhook-allow-private" start_server

echo "== use_client.py (generated client only)"
"$VENV/bin/python" "$HERE/use_client.py" "$BASE_URL" "$INLET_ADMIN_EMAIL" "$INLET_ADMIN_API_TOKEN"
echo "generated_client: ok"
