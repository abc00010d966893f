#!/usr/bin/env bash
# Configures and builds with the given preset (default: ci, warnings are errors); with
# targets after the preset, only those (ci/nightly.sh builds the one binary it runs:
# `ci/build.sh ci harness`). Leaves the CLI at build/bin/harness.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
shift || true
targets=()
if [[ $# -gt 0 ]]; then targets=(--target "$@"); fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}"
