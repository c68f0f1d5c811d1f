#!/usr/bin/env bash
# Installs the Debian 12 packages trainplan needs; does nothing when they are present.
#   scripts/install-deps.sh build   what the binary and the Python module build with (default)
#   scripts/install-deps.sh test    that, plus GoogleTest, Google Benchmark, Chromium and Node for the tests
#   scripts/install-deps.sh fuzz    that, plus clang for the libFuzzer build
set -euo pipefail
what="${1:-build}"
packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev
          libcpp-httplib-dev libboost-dev python3-dev pybind11-dev)
case "$what" in
  build) ;;
  test)
    packages+=(libgtest-dev libgmock-dev libbenchmark-dev chromium fonts-liberation)
    # Node and npm run the browser test (playwright-core from npm); a Node already installed (e.g. NodeSource,
    # which bundles npm) is kept, since Debian's npm package would conflict with it.
    command -v node >/dev/null || packages+=(nodejs)
    command -v npm >/dev/null || packages+=(npm)
    ;;
  fuzz) packages+=(clang libclang-rt-14-dev) ;;
  *) echo "usage: $0 [build|test|fuzz]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
