#!/usr/bin/env bash
# A bounded load test: `trainplan serve` on a free loopback port, CONNECTIONS clients posting the default
# /api/plan request for SECONDS, then the server's peak resident memory.
# Usage: scripts/load-test.sh BUILD_DIR [CONNECTIONS] [SECONDS] [trainplan_load flags, e.g. --body FILE]
set -euo pipefail
build="$1"
connections="${2:-8}"
seconds="${3:-10}"
log="$(mktemp)"
# Every connection comes from 127.0.0.1: lift the per-client limit so that it measures the server, not the cap.
"$build/trainplan" serve --host 127.0.0.1 --port 0 --max-per-client 1000 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's|^listening on http://[^:]*:\([0-9]*\)/.*|\1|p' "$log")"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; exit 1; }
echo "server: $(cat "$log")"
shift $(($# < 3 ? $# : 3))
status=0
"$build/trainplan_load" --port "$port" --connections "$connections" --seconds "$seconds" "$@" || status=$?
echo "server peak memory: $(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$server/status")"
exit "$status"
