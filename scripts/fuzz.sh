#!/usr/bin/env bash
# Fuzzes with libFuzzer for a bounded time, split between four targets: the HTTP API's request handler
# (src/server/api_fuzz.cc), the HTTP face itself, raw request bytes through the server's parser, limits and
# checks (src/server/http_fuzz.cc), the file readers: scenario documents, plan and recommend requests, Hugging
# Face config.json files, build documents, logs, catalogs, runs (src/io/readers_fuzz.cc), and the snapshot
# reader of `diff` (src/machine/snapshot_fuzz.cc). A clang build with ASan and UBSan in build-fuzz/.
# Usage: scripts/fuzz.sh [SECONDS] (default 120: 40% to the handler, 20% to HTTP, 30% to the readers, 10% to
# snapshots). The ctests fuzz_replay.* replay every seed and finding without libFuzzer on each test run.
# An ASan error, an unexpected error (a 500, or a reader's exception other than InputError) or a hang stops
# that target's run and leaves its input in build-fuzz/<target>.run/crash-* or timeout-*; UBSan reports each
# undefined-behaviour site once and lets the run go on, so that one run lists them all.
# Each finding keeps its input in the target's fuzz_found/ (replayed by every run) and becomes a test case
# once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
command -v clang++ >/dev/null || { echo "error: clang++ is missing (apt-get install clang)" >&2; exit 1; }
# ccache, when there, keeps a rebuild after a small change short (the instrumented build is slow).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINPLAN_FUZZ=ON \
  "${launcher[@]}" >/dev/null
cmake --build build-fuzz --target trainplan_fuzz trainplan_http_fuzz trainplan_readers_fuzz trainplan_snapshot_fuzz \
  -j "$(nproc)"

# A repo id in a fuzzed model field must not reach the network: read the Hugging Face cache only.
export HF_HUB_OFFLINE=1
found=0
summary=()
# fuzz TARGET SOURCE_DIR SECONDS: one bounded run over the target's seeds and earlier findings.
fuzz() {
  local target="$1" dir="$2" time="$3" out="build-fuzz/$1.run" status=0
  echo "== $target (${time}s)"
  mkdir -p "$out/corpus" "$dir/fuzz_found"
  rm -f "$out"/crash-* "$out"/timeout-* "$out"/oom-*
  "build-fuzz/$target" "$out/corpus" "$dir/fuzz_seeds" "$dir/fuzz_found" -max_total_time="$time" -max_len=16384 \
    -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$out/" >"$out/fuzz.log" 2>&1 || status=$?
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$out/fuzz.log" || true
  # The figures of the last status line libFuzzer printed (DONE, or the last before a finding stopped it).
  local last execs findings
  last="$(grep -E '^#[0-9]+[[:space:]]' "$out/fuzz.log" | tail -1 || true)"
  execs="$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$out/fuzz.log")"
  findings=$(( $(grep -c 'runtime error' "$out/fuzz.log" || true) + (status != 0) ))
  summary+=("$(printf '%-24s %4ss %10s executions  cov %6s  ft %7s  corpus %5s  findings %s' "$target" "$time" \
    "${execs:-$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")}" "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")" \
    "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")" "$(sed -n 's|.* corp: \([0-9]*\)/.*|\1|p' <<<"$last")" "$findings")")
  if grep -q 'runtime error' "$out/fuzz.log"; then
    echo "undefined behaviour (UBSan), by site:"
    grep 'runtime error' "$out/fuzz.log" | sed 's/: runtime error: /\t/' | sort -u -t$'\t' -k1,1
    found=1
  fi
  if ((status != 0)); then
    grep -E '==[0-9]+==ERROR|^SUMMARY|Test unit written|ALARM|not an InputError' "$out/fuzz.log" || true
    found=1
  fi
}
fuzz trainplan_fuzz src/server $((seconds * 2 / 5))
fuzz trainplan_http_fuzz src/server/http_fuzz $((seconds / 5))
fuzz trainplan_readers_fuzz src/io $((seconds * 3 / 10))
fuzz trainplan_snapshot_fuzz src/machine $((seconds - seconds * 2 / 5 - seconds / 5 - seconds * 3 / 10))
echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), ${seconds}s in all)"
printf '%s\n' "${summary[@]}"
((found == 0)) && echo "no crashes, hangs, sanitizer reports or unexpected errors"
exit "$found"
