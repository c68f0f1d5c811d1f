#!/usr/bin/env bash
# Rewrites tests/golden/<name>.json from the binary given (default build/trainplan); run only when an answer
# changes on purpose, and name the change in the commit.
set -euo pipefail
export TRAINPLAN_NO_USER_CATALOG=1  # the built-in catalogs only, whatever ~/.config/trainplan holds
cd "$(dirname "$0")/../.."
bin=${1:-build/trainplan}
grep -v '^#' tests/golden/jobs.txt | while read -r name args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  # Exit 3 is an answer too: a review whose checks fail.
  status=0; "$bin" $args > "tests/golden/$name.json" || status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "failed: $name (exit $status)" >&2; exit 1; }
done
