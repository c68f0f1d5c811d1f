#!/usr/bin/env bash
# The browser test: installs playwright-core (npm ci, from web/package-lock.json) into WORK when the lock
# changed, starts `trainplan serve` on a free loopback port, runs page.test.js in Debian's chromium, stops
# the server. Usage: run.sh TRAINPLAN_BINARY WORK_DIR
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$2/node" "$2/tmp"
bin="$(realpath "$1")"
work="$(realpath "$2")"

[ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium is missing; run scripts/install-deps.sh" >&2; exit 1; }
command -v node >/dev/null || { echo "error: node is missing; run scripts/install-deps.sh" >&2; exit 1; }

if ! cmp -s "$src/web/package-lock.json" "$work/node/installed-lock.json" || [ ! -d "$work/node/node_modules" ]; then
  cp "$src/web/package.json" "$src/web/package-lock.json" "$work/node/"
  (cd "$work/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$src/web/package-lock.json" "$work/node/installed-lock.json"
fi

log="$work/server.log"
: >"$log"  # emptied here, not by the server's redirection, which may come after the first read below
"$bin" serve --host 127.0.0.1 --port 0 --workers 2 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's|^listening on \(http://[^ ]*\) .*|\1|p' "$log")"
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "error: the server did not start" >&2; cat "$log" >&2; exit 1; }

status=0
TRAINPLAN_URL="$url" TRAINPLAN_BIN="$bin" NODE_MODULES="$work/node/node_modules" \
  SCREENSHOT="$work/screenshot.png" TMPDIR="$work/tmp" \
  node "$src/tests/browser/page.test.js" || status=$?
if ! kill -0 "$server" 2>/dev/null; then
  wait "$server" && code=0 || code=$?
  echo "error: the server exited early with status $code; its log:" >&2
  cat "$log" >&2
  exit 1
fi
exit "$status"
