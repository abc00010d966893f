#!/usr/bin/env bash
# The test command: set up, configure, build, run every test through CTest.
# Exits non-zero on any failure and prints CTest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh
ci/build.sh ci
ctest --preset ci -j "$(nproc)" --timeout 600
