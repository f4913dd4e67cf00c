# Sourced by the scripts beside it: venv, free port, and a throwaway Inlet server.
# Sets: ROOT, WORK, VENV, PORT, BASE_URL, INLET_ADMIN_EMAIL, INLET_ADMIN_API_TOKEN.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/tests/python/integrators"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/inlet-integrators.XXXXXX")"
VENV="${INTEGRATORS_VENV:-${TMPDIR:-/tmp}/inlet-integrators-venv}"
INLET_BIN="${INLET_BIN:-$ROOT/target/debug/inlet}"
export INLET_ADMIN_EMAIL="integrator@example.com"
export INLET_ADMIN_PASSWORD="integrator-password-1"
export INLET_ADMIN_API_TOKEN="integrator-api-token-1"
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT INT TERM

ensure_venv() {  # ensure_venv REQUIREMENTS_FILE...
  if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
  local r
  for r in "$@"; do
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$r"
  done
}

start_server() {
  if [ ! -x "$INLET_BIN" ]; then
    echo "server binary $INLET_BIN is missing (cargo build -p inlet-server)" >&2
    exit 1
  fi
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
  BASE_URL="http://127.0.0.1:$PORT"
  # INLET_TEST_DATABASE: another database URL (e.g. a PostgreSQL database to run against).
  NO_COLOR=1 "$INLET_BIN" serve --bind "127.0.0.1:$PORT" \
    --database "${INLET_TEST_DATABASE:-sqlite://$WORK/inlet.db?mode=rwc}" \
    --index-dir "$WORK/inlet-index" --blob-store "file://$WORK/inlet-blobs" ${INLET_SERVE_ARGS:-} \
    >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null -u "$INLET_ADMIN_EMAIL:$INLET_ADMIN_API_TOKEN" \
         "$BASE_URL/api/v1/sources" 2>/dev/null; then
      echo "inlet is up on $BASE_URL (pid $SERVER_PID)"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "inlet did not start; its log:" >&2
  cat "$WORK/server.log" >&2
  exit 1
}
