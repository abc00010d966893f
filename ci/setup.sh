#!/usr/bin/env bash
# Installs every Debian package the build and the tests need. Idempotent and quiet;
# when everything is already there it only checks (no apt-get update).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git python3 python3-yaml python3-pytest
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libcurl4-openssl-dev libsqlite3-dev sqlite3
  libcli11-dev libcpp-httplib-dev libssl-dev libxml2-dev
  chromium
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "ci/setup.sh: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
