#!/usr/bin/env bash
# Lists the top-level definitions of src/ (functions, and tables or types) longer than LIMIT lines (default
# 80), longest first. Braces are counted outside strings and comments; namespaces do not count. Tests are
# skipped. Usage: scripts/long-functions.sh [LIMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-80}"
find src -name '*.cc' ! -name '*_test.cc' ! -name '*_fuzz.cc' -print0 | xargs -0 awk -v limit="$limit" '
  FNR == 1 { depth = 0; start = 0; head = 0 }
  {
    line = $0
    gsub(/\\./, "", line)                  # escaped characters
    gsub(/"[^"]*"/, "\"\"", line)          # string literals
    gsub(/'"'"'[^'"'"']*'"'"'/, "", line)  # character literals
    sub(/\/\/.*/, "", line)                # comments
    if (line ~ /^namespace .*\{/ || line ~ /^\}  \/\/ namespace/ || $0 ~ /^}  \/\/ namespace/) next
    if (depth == 0 && line ~ /^[A-Za-z]/ && !head) { head = FNR; name = $0 }
    if (depth == 0 && line ~ /;[[:space:]]*$/ && line !~ /\{/) head = 0
    opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
    before = depth; depth += opens - closes
    if (before == 0 && depth > 0) start = head ? head : FNR
    if (before > 0 && depth == 0) {
      n = FNR - start + 1
      if (n > limit) printf "%5d %s:%d %s\n", n, FILENAME, start, name
      head = 0
    }
    if (depth == 0 && before == 0 && opens > 0 && opens == closes) head = 0
  }
' | sort -rn
