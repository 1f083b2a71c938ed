#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every CPU test (label cpu).
# GPU tests (label gpu) run on a machine with a GPU: scripts/test.sh -L gpu
# SPMV_CUDA=OFF skips the CUDA backend where nvcc exists (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
label=(-L cpu)
[ $# -gt 0 ] && label=("$@")
# With the CPU tests: every C++ and CUDA file formatted as .clang-format says (scripts/format.sh).
[ "${label[*]}" = "-L cpu" ] && bash scripts/format.sh --check
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" "${label[@]}" --output-on-failure -j "$(nproc)"
# With the CPU tests: the library installed and used from other projects (examples/), and the API
# documentation built from the public headers, where a Doxygen warning fails it.
if [ "${label[*]}" = "-L cpu" ]; then
  bash scripts/consumer_test.sh
  cmake --build "${BUILD_DIR:-build}" --target docs
fi
