#!/usr/bin/env bash
# Installs the Debian 12 packages trainplan builds and tests with; does nothing when they are present.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev
          libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
          chromium fonts-liberation)  # the browser test of the page `trainplan serve` serves
# Node and npm run the browser test (playwright-core from npm); a Node already installed (e.g. NodeSource,
# which bundles npm) is kept, since Debian's npm package would conflict with it.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
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
