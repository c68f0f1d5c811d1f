#!/usr/bin/env bash
# A bounded load test: `trainplan serve` on a free loopback port, then trainplan_load with twice as many
# clients as the server has search workers, each drawing estimates, plans and recommendations of small and
# huge models (src/server/load_client.cc) for SECONDS. Prints the load client's JSON report (per endpoint and
# per request: count, p50/p99, statuses; the server's peak resident memory) and a summary line. Fails when any
# answer is neither 200 nor the documented 503 with Retry-After (every other 5xx included), or a request got
# no answer.
# Usage: scripts/load-test.sh BUILD_DIR [SECONDS] [WORKERS] [trainplan_load flags, e.g. --request PATH FILE]
# WORKERS: the server's --workers (default: its own default, the cores).
set -euo pipefail
build="$1"
seconds="${2:-30}"
workers="${3:-}"
log="$(mktemp)"
report="$(mktemp)"
# Every connection comes from 127.0.0.1: lift the per-client limit so that it measures the server, not the cap.
"$build/trainplan" serve --host 127.0.0.1 --port 0 --max-per-client 1000 ${workers:+--workers "$workers"} >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -f "$log" "$report"' EXIT
line=""
for _ in $(seq 1 100); do
  line="$(grep -m1 '^listening on http://' "$log" || true)"
  [ -n "$line" ] && break
  sleep 0.1
done
[ -n "$line" ] || { cat "$log" >&2; exit 1; }
port="$(sed -n 's|^listening on http://[^:]*:\([0-9]*\)/.*|\1|p' <<<"$line")"
workers="$(sed -n 's|.* with \([0-9]*\) search workers.*|\1|p' <<<"$line")"
clients=$((2 * workers))
echo "server: $line; load: $clients clients for ${seconds}s; $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
shift $(($# < 3 ? $# : 3))
status=0
"$build/trainplan_load" --port "$port" --clients "$clients" --seconds "$seconds" --server-pid "$server" "$@" \
  >"$report" || status=$?
cat "$report"
kill -0 "$server" 2>/dev/null || { echo "error: the server exited during the load" >&2; exit 1; }
# One line per endpoint and request: count, p50, p99, statuses; then the server's peak memory.
python3 - "$report" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
row = lambda name, s: print(f"  {name:45} {s['requests']:6} requests  p50 {s['p50_ms']:9.1f} ms  p99 {s['p99_ms']:9.1f} ms  {s['statuses']}")
for group in ("by_endpoint", "by_request"):
    for name, s in r[group].items():
        row(name, s)
row("all", r)
m = r.get("server_memory", {})
print(f"  {r['requests_per_s']:.1f} requests/s; answers other than 200 or 503 with Retry-After: {r['undocumented_answers']}; "
      f"server peak RSS {m.get('before', {}).get('peak_rss_mb', 0):.0f} MB before, {m.get('after', {}).get('peak_rss_mb', 0):.0f} MB after")
EOF
exit "$status"
