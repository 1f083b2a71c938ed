#!/usr/bin/env bash
# Configures and builds into ${BUILD_DIR:-build}. CUDA is built when nvcc is found
# (on PATH or in /usr/local/cuda/bin); SPMV_CUDA=OFF in the environment (or -DSPMV_ENABLE_CUDA=OFF)
# skips it, e.g. on a machine with nvcc but no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
extra=()
[ "${SPMV_CUDA:-}" = OFF ] && extra+=(-DSPMV_ENABLE_CUDA=OFF)
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
