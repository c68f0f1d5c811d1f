#!/usr/bin/env bash
# Fuzzes the HTTP API's request handler (src/server/api_fuzz.cc) with libFuzzer for a bounded time:
# a clang build with ASan and UBSan in build-fuzz/. Usage: scripts/fuzz.sh [SECONDS] (default 120).
# An ASan error, a 500 or a hang stops the run and leaves its input in build-fuzz/crash-* or timeout-*;
# UBSan reports each undefined-behaviour site once and lets the run go on, so that one run lists them all.
# Each finding keeps its input in src/server/fuzz_found/ (replayed by every run) and becomes a case in
# src/server/api_test.cc once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
command -v clang++ >/dev/null || { echo "error: clang++ is missing (apt-get install clang)" >&2; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINPLAN_FUZZ=ON >/dev/null
cmake --build build-fuzz --target trainplan_fuzz -j "$(nproc)"
mkdir -p build-fuzz/corpus
rm -f build-fuzz/crash-* build-fuzz/timeout-* build-fuzz/oom-*
status=0
build-fuzz/trainplan_fuzz build-fuzz/corpus src/server/fuzz_seeds src/server/fuzz_found -max_total_time="$seconds" -max_len=16384 \
  -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=build-fuzz/ >build-fuzz/fuzz.log 2>&1 ||
  status=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' build-fuzz/fuzz.log || true
found=0
if grep -q 'runtime error' build-fuzz/fuzz.log; then
  echo "undefined behaviour (UBSan), by site:"
  grep 'runtime error' build-fuzz/fuzz.log | sed 's/: runtime error: /\t/' | sort -u -t$'\t' -k1,1
  found=1
fi
if ((status != 0)); then
  grep -E '==[0-9]+==ERROR|^SUMMARY|Test unit written|ALARM' build-fuzz/fuzz.log || true
  found=1
fi
((found == 0)) && echo "no crashes, hangs, sanitizer reports or 500s"
exit "$found"
