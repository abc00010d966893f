#!/usr/bin/env bash
# Configures and builds with the given preset (default: ci, warnings are errors).
# Leaves the CLI at build/bin/harness.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
